"""What a document's image URL may name (review of 7395ba5): the host matched with the list is the
host resolved, a malformed URL is one turn's failure, a listing may name a port, and a redirect off
the list is a refusal the person is not invited to undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemoscope.engine import Settings, net
from mnemoscope.engine.config import ConfigError
from mnemoscope.engine.hosts import HostList, canonical
from tests.support.openai_server import OpenAIServer, png

from .conftest import cli, listening
from .test_security import image_memory, sent_images


def chat_with(folder: Path, *refs: str) -> Path:
    """A chat of one turn per image reference, then a turn whose photo is a local file (ok.png)."""
    folder.mkdir()
    (folder / "ok.png").write_bytes(png("kayak"))
    chat = folder / "chat.jsonl"
    chat.write_text("".join(json.dumps({"speaker": "Ann", "text": f"look {n}", "img_url": r}) + "\n"
                            for n, r in enumerate([*refs, "ok.png"])))
    return chat


@pytest.mark.parametrize("scheme", ["http", "https"])
@pytest.mark.parametrize("host", ["localhost\x00.example.org", "localhost .example.org", "localhost%00.example.org"])
def test_a_host_no_dns_name_can_be_is_refused_before_any_connection(scheme, host, monkeypatch):
    """getaddrinfo resolves a host only up to a NUL: "localhost\\0.example.org" passed the
    wildcard's check on its whole text and was resolved (and connected to) as "localhost"
    (fails before: a connection, and on https a TypeError)."""
    with listening(b"") as (port, accepted):
        monkeypatch.setattr(net, "is_public", lambda address: True)  # loopback stands for the public host a document names
        url = f"{scheme}://{host}:{port}/a.png"
        with pytest.raises(net.Refused) as refused:
            net.download(url, timeout=3, max_bytes=2**20, allow=HostList.parse("*.example.org"))
    assert not isinstance(refused.value, net.NotListed) and "is not a host name" in str(refused.value)
    assert accepted == []


def test_hosts_are_compared_in_the_one_form_that_is_resolved():
    """Case, a trailing dot and an international name in either form are one host; an IPv6
    address in any spelling is one address."""
    listed = HostList.parse("*.bücher.example, xn--caf-dma.example, [::1], NAS.local.")
    assert listed.match(canonical("Foto.BÜCHER.example."), 80) == "domain"
    assert listed.match(canonical("foto.xn--bcher-kva.example"), 80) == "domain"
    assert listed.match(canonical("café.example"), 443) == "exact"
    assert listed.match(canonical("0:0::1"), 80) == "exact" and listed.match(canonical("nas.local"), 80) == "exact"
    assert listed.match(canonical("bücher.example"), 80) is None  # the domain itself is not a subdomain
    for bad in ["a\x00b.example", "a b.example", "a%2eb.example", "a..b.example", "fe80::1%eth0", ""]:
        with pytest.raises(ValueError):
            canonical(bad)


@pytest.mark.parametrize("ref", ["http://x.example.org:99999/a.png", "http://[::1/a.png", "http://[bold]x/a.png",
                                 "file://[::1/a.png"])
def test_a_malformed_image_url_is_one_failure_not_a_crash(tmp_path, openai_server, ref):
    """Fails before: the whole ingest ended in a ValueError traceback (urlsplit, the port)."""
    chat = chat_with(tmp_path / "docs", ref)
    with image_memory(tmp_path / "m.db", openai_server, image_allow_hosts="*.example.org") as mem:
        report = mem.ingest(chat)
        assert mem.counts().items == 2
    [warning] = report.warnings
    assert warning.startswith(f"{chat}:1: image ") and "well-formed" in warning, warning
    assert sent_images(openai_server) == [png("kayak")] and report.not_fetched == []


@pytest.mark.parametrize("location", ["http://x.example.org:99999/a.png", "http://[::1/a.png", "http://[bold]x/a.png"])
def test_a_redirect_to_a_malformed_url_is_one_failure(tmp_path, openai_server, location):
    """Fails before: the redirect's Location raised a ValueError out of the ingest."""
    openai_server.redirects["/photo.png"] = location
    chat = chat_with(tmp_path / "docs", f"{openai_server.origin}/photo.png")
    with image_memory(tmp_path / "m.db", openai_server, image_allow_hosts="127.0.0.1, *.example.org") as mem:
        report = mem.ingest(chat)
        assert mem.counts().items == 2
    [warning] = report.warnings
    assert warning.startswith(f"{chat}:1: image ") and "well-formed" in warning, warning


def test_a_redirect_off_the_list_is_a_refusal_not_an_invitation_to_list_it(tmp_path, openai_server):
    """The listed server's answer picks the redirect's host: the summary must not ask the person to
    list it (fails before: counted "not fetched", "list a host there", its host named)."""
    port = openai_server.origin.rsplit(":", 1)[1]
    openai_server.redirects["/photo.png"] = f"http://169.254.169.254:{port}/latest/meta-data/"
    chat = chat_with(tmp_path / "docs", f"{openai_server.origin}/photo.png")
    with image_memory(tmp_path / "m.db", openai_server, image_allow_hosts="127.0.0.1") as mem:
        report = mem.ingest(chat)
    assert report.not_fetched == [] and "not fetched" not in report.summary()
    [warning] = report.warnings
    assert f"redirected to 169.254.169.254:{port}, which is not in image_allow_hosts; not followed" in warning
    assert [p for m, p, _ in openai_server.headers if m == "GET"] == ["/photo.png"]


def test_a_listing_with_a_port_opens_that_port_only(tmp_path, openai_server):
    """Fails before: "127.0.0.1:8080" was refused as a listing, so a listed host was open on
    every port (a chat could GET a local database's or admin page's port)."""
    port = int(openai_server.origin.rsplit(":", 1)[1])
    openai_server.files["/a.png"] = png("on the listed port")
    with OpenAIServer() as other:
        other.files["/b.png"] = png("another port")
        other_port = int(other.origin.rsplit(":", 1)[1])
        chat = chat_with(tmp_path / "docs", f"http://127.0.0.1:{port}/a.png", f"http://127.0.0.1:{other_port}/b.png")
        with image_memory(tmp_path / "m.db", openai_server, image_allow_hosts=f"127.0.0.1:{port}") as mem:
            report = mem.ingest(chat)
        assert [m for m, _, _ in other.headers] == []
    assert sent_images(openai_server) == [png("on the listed port"), png("kayak")]
    assert report.not_fetched == ["127.0.0.1"]
    assert HostList.parse("[::1]:8080, *.example.org:8443").match("::1", 8080) == "exact"
    assert HostList.parse("*.example.org:8443").match("a.example.org", 443) is None


@pytest.mark.parametrize("address, public", [
    ("8.8.8.8", True), ("2606:4700:4700::1111", True), ("2002:808:808::1", True),
    ("2002:7f00:1::1", False), ("2002:a00:1::1", False), ("2002:a9fe:a9fe::1", False),  # 6to4 of 127/8, 10/8, 169.254/16
    ("fec0::1", False), ("64:ff9b::7f00:1", False), ("::ffff:10.0.0.1", False), ("::1", False)])
def test_an_address_is_public_only_if_what_it_reaches_is(address: str, public: bool):
    """6to4 (2002::/16) reaches the IPv4 address inside it and site-local fec0::/10 is a private
    network's: both counted as public before (review)."""
    assert net.is_public(address) is public


@pytest.mark.parametrize("listed, suffix", [("*.co.uk", "co.uk"), ("*.com.au", "com.au"), ("*.github.io", "github.io"),
                                            ("*.Foo.CK", "foo.ck"), ("*.xn--p1ai:443", None), ("*.рф", None)])
def test_a_wildcard_over_a_public_suffix_is_refused_at_config_load(tmp_path, monkeypatch, listed, suffix):
    """Anyone can register a name under co.uk or github.io, so "*.co.uk" hands the choice of host
    back to the content, as "*.com" would (fails before: all but the top-level ones were accepted).
    The Public Suffix List decides (engine/data), its wildcard rules too (*.ck)."""
    monkeypatch.setenv("MNEMOSCOPE_IMAGE_ALLOW_HOSTS", f"nas.local, {listed}")
    code, _, err = cli("--store", tmp_path / "m.db", "stats")
    assert code == 2 and err.count("\n") == 1 and "MNEMOSCOPE_IMAGE_ALLOW_HOSTS" in err, err
    assert ("a public suffix where anyone can register a name" in err and f"under {suffix}," in err) if suffix else \
        "top-level domain" in err, err
    assert not (tmp_path / "m.db").exists()
    config = tmp_path / "config.toml"
    config.write_text(f'image_allow_hosts = "{listed}"\n', encoding="utf-8")
    monkeypatch.delenv("MNEMOSCOPE_IMAGE_ALLOW_HOSTS")
    with pytest.raises(ConfigError, match="image_allow_hosts"):
        Settings.load(config_file=config)


@pytest.mark.parametrize("listed, below", [("*.amazonaws.com", "af-south-1.airflow.amazonaws.com"),
                                           ("*.compute.amazonaws.com", "*.compute.amazonaws.com")])
def test_a_wildcard_over_a_domain_with_public_suffixes_inside_is_refused(tmp_path, monkeypatch, listed, below):
    """A wildcard matches hosts at every depth: "*.amazonaws.com" listed attacker-bucket.s3.amazonaws.com
    (s3.amazonaws.com is a public suffix). Fails before: both were accepted (review, 13:49)."""
    monkeypatch.setenv("MNEMOSCOPE_IMAGE_ALLOW_HOSTS", listed)
    code, _, err = cli("--store", tmp_path / "m.db", "stats")
    assert code == 2 and err.count("\n") == 1 and f"public suffixes inside {listed[2:]} ({below})" in err, err


def test_a_wildcard_over_a_registered_domain_is_accepted():
    """Under a public suffix, a registered domain may be listed with its subdomains; an exception
    rule (!www.ck) is a registered domain too."""
    listed = HostList.parse("*.example.co.uk, *.ann.github.io, *.www.ck, *.bücher.example")
    assert listed.match("photos.example.co.uk", 443) == "domain" and listed.match("cdn.ann.github.io", 443) == "domain"
    assert listed.match("a.www.ck", 80) == "domain" and listed.match("bob.github.io", 443) is None


async def test_the_app_says_why_it_cannot_open_a_store_under_a_public_suffix_wildcard(tmp_path, monkeypatch):
    """The app, started with "*.co.uk" listed, shows the same one line in its dialog and creates
    no store (fails before: the store opened and the wildcard stood), also once asked to make it."""
    from tests.app.mnemo_testing import build_app, settle

    monkeypatch.setenv("MNEMOSCOPE_IMAGE_ALLOW_HOSTS", "*.co.uk")
    app = build_app(tmp_path / "m.db")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.click("#choice-new")  # no store is there: the app asks first
        await settle(pilot)
        shown = [str(w.render()) for w in app.screen.query("Static")]
        assert any("'*.co.uk' would list every host under co.uk, a public suffix" in text for text in shown), shown
    assert list(tmp_path.iterdir()) == []

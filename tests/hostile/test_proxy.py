"""A proxy the environment names is used or the request refused, never bypassed (review of
7e46f4a: the new transport skipped ALL_PROXY and SOCKS proxies and went direct)."""

from __future__ import annotations

import base64
from typing import Iterator

import pytest

from mnemoscope.engine.dense import EmbeddingUnavailable, OpenAIEmbedder
from mnemoscope.engine.hosts import HostList
from mnemoscope.engine.net import DownloadFailed, download
from tests.support.cli import new_store
from tests.support.openai_server import OpenAIServer

from .conftest import cli, listening, store_checksum

TEXT = "# Harbour\nThe harbour lanterns are lit at dusk.\n"


BAD_GATEWAY = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


@pytest.fixture
def proxy() -> Iterator[tuple[int, list[bytes]]]:
    """A listener standing for an HTTP proxy: it records each request's head and answers 502."""
    with listening(BAD_GATEWAY) as proxy:
        yield proxy


@pytest.fixture
def no_proxy_env(monkeypatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def test_all_proxy_is_used_with_its_credentials(openai_server: OpenAIServer, proxy, no_proxy_env, monkeypatch):
    """Fails before: ALL_PROXY was not read, the texts went straight to the endpoint."""
    port, heads = proxy
    monkeypatch.setenv("ALL_PROXY", f"http://ann:s%40cret@127.0.0.1:{port}")
    embedder = OpenAIEmbedder(openai_server.base_url, "e", "sk-secret", timeout=5.0, max_retries=0)
    with pytest.raises(EmbeddingUnavailable):
        embedder.embed(["the harbour"], remember=False)
    assert openai_server.requests == []
    [head] = heads
    assert head.startswith(f"POST {openai_server.base_url}/embeddings ".encode())
    fields = {name.strip().lower(): value.strip() for name, _, value in (line.partition(b":")
              for line in head.split(b"\r\n")[1:] if line)}
    assert fields[b"proxy-authorization"] == b"Basic " + base64.b64encode(b"ann:s@cret")


@pytest.mark.parametrize("name, value, says", [("ALL_PROXY", "socks5://127.0.0.1:1", "socks5://127.0.0.1"),
                                               ("HTTP_PROXY", "socks5h://127.0.0.1:1", "socks5h://127.0.0.1"),
                                               ("HTTP_PROXY", "http://[::1:8080", "unreadable://?"),
                                               ("ALL_PROXY", "http://127.0.0.1:99999", "unreadable://?")])
def test_a_proxy_the_transport_cannot_use_is_one_line_not_a_way_around_it(tmp_path, openai_server, no_proxy_env,
                                                                          monkeypatch, name, value, says):
    """Fails before: a SOCKS proxy was skipped and the texts went to the endpoint directly; a
    proxy URL that does not parse was a ValueError traceback."""
    for setting, v in {"EMBEDDER": "openai", "EMBED_BASE_URL": openai_server.base_url, "EMBED_MODEL": "e",
                       "MAX_RETRIES": "0", "REQUEST_TIMEOUT": "5"}.items():
        monkeypatch.setenv(f"MNEMOSCOPE_{setting}", v)
    (tmp_path / "a.md").write_text(TEXT)
    store = tmp_path / "m.db"
    new_store(store)
    before = store_checksum(store)
    monkeypatch.setenv(name, value)
    code, _, err = cli("--store", store, "ingest", tmp_path / "a.md")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert says in err and "not an http(s) proxy Mnemoscope can use" in err, err
    assert openai_server.requests == [] and store_checksum(store) == before


def test_a_redirect_from_http_to_https_takes_the_proxy_named_for_https(no_proxy_env, monkeypatch):
    """A photo's http URL goes through HTTP_PROXY; its redirect to https goes the way the
    environment names for https (here: direct, no HTTPS_PROXY). Fails before: the transport made
    for the first URL carried the https hop through the http proxy too (a CONNECT to it)."""
    with listening(b"\x15\x03\x03\x00\x02\x02\x28") as (tls_port, hellos):  # a TLS alert: the handshake fails
        moved = f"HTTP/1.1 302 Found\r\nLocation: https://127.0.0.1:{tls_port}/kayak.png\r\nContent-Length: 0\r\n\r\n"
        with listening(moved.encode()) as (proxy_port, heads):
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy_port}")
            allow = HostList.parse(f"localhost, 127.0.0.1:{tls_port}")
            with pytest.raises(DownloadFailed):
                download("http://localhost:9/kayak.png", timeout=5.0, max_bytes=2**20, allow=allow)
    [head] = heads
    assert head.startswith(b"GET http://127.0.0.1:9/kayak.png ") and b"Host: localhost:9" in head, head
    assert len(hellos) == 1 and hellos[0].startswith(b"\x16")  # the https hop reached its host directly


def test_a_redirect_away_from_a_host_no_proxy_names_takes_the_proxy(openai_server, proxy, no_proxy_env, monkeypatch):
    """NO_PROXY names the first host only: the redirect's host is reached through the proxy.
    Fails before: the first host's NO_PROXY sent the redirect's request direct too."""
    port, heads = proxy
    openai_server.redirects["/kayak.png"] = f"{openai_server.origin}/moved.png"  # 127.0.0.1, not localhost
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("NO_PROXY", "localhost")
    served = openai_server.origin.rpartition(":")[2]
    allow = HostList.parse(f"localhost:{served}, 127.0.0.1:{served}")
    with pytest.raises(DownloadFailed, match="HTTP 502"):
        download(f"http://localhost:{served}/kayak.png", timeout=5.0, max_bytes=2**20, allow=allow)
    [head] = heads
    assert head.startswith(f"GET http://127.0.0.1:{served}/moved.png ".encode()), head
    assert [h[1] for h in openai_server.headers] == ["/kayak.png"]  # the first hop went direct, the second did not

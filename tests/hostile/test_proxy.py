"""A proxy the environment names is used or the request refused, never bypassed (review of
7e46f4a: the new transport skipped ALL_PROXY and SOCKS proxies and went direct)."""

from __future__ import annotations

import base64
import socket
import threading
from typing import Iterator

import pytest

from mnemoscope.engine.dense import EmbeddingUnavailable, OpenAIEmbedder
from tests.support.openai_server import OpenAIServer

from .conftest import cli, store_checksum

TEXT = "# Harbour\nThe harbour lanterns are lit at dusk.\n"


@pytest.fixture
def proxy() -> Iterator[tuple[int, list[bytes]]]:
    """A listener standing for an HTTP proxy: it records each request's head and answers 502."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    heads: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # closed at the test's end
                return
            with conn:
                head = b""
                while b"\r\n\r\n" not in head and (chunk := conn.recv(4096)):
                    head += chunk
                heads.append(head)
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1], heads
    listener.close()


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
    assert cli("--store", store, "stats")[0] == 0
    before = store_checksum(store)
    monkeypatch.setenv(name, value)
    code, _, err = cli("--store", store, "ingest", tmp_path / "a.md")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert says in err and "not an http(s) proxy Mnemoscope can use" in err, err
    assert openai_server.requests == [] and store_checksum(store) == before

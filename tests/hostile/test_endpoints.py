"""A configured endpoint that answers wrongly: its answers are untrusted data. Vectors that are not
vectors (empty, NaN, infinite, of another length than the store's) are refused in one line and
stored nowhere; an answer that trickles in for ever, or ends gigabytes later, is cut off at the
timeout or the size cap (a document's photo URL's too)."""

from __future__ import annotations

import math
import time

import pytest

from mnemoscope.engine import net
from mnemoscope.engine.dense import EmbeddingUnavailable, OpenAIEmbedder
from mnemoscope.engine.hosts import HostList
from mnemoscope.engine.net import DownloadFailed
from tests.support.cli import new_store
from tests.support.openai_server import OpenAIServer, hashed_vector

from .conftest import cli, store_checksum

TEXT = "# Harbour\nThe harbour lanterns are lit at dusk.\n\n# Ferry\nThe ferry leaves at dawn.\n"


@pytest.fixture
def endpoint_env(openai_server: OpenAIServer, monkeypatch) -> OpenAIServer:
    for name, value in {"EMBEDDER": "openai", "EMBED_BASE_URL": openai_server.base_url, "EMBED_MODEL": "e",
                        "MAX_RETRIES": "0", "REQUEST_TIMEOUT": "5"}.items():
        monkeypatch.setenv(f"MNEMOSCOPE_{name}", value)
    return openai_server


@pytest.mark.parametrize("vectors, says", [
    (lambda texts: [hashed_vector(t, 16 if n == 0 else 8) for n, t in enumerate(texts)], "of 16 and 8 numbers"),
    (lambda texts: [[math.nan] * 16 for _ in texts], "not a finite number"),
    (lambda texts: [[1e300] * 16 for _ in texts], "not a finite number"),
    (lambda texts: [[] for _ in texts], "an empty vector"),
], ids=["two-lengths", "nan", "overflow", "empty"])
def test_vectors_that_are_not_vectors_are_one_line_and_stored_nowhere(tmp_path, endpoint_env, vectors, says):
    endpoint_env.on_embeddings = vectors
    (tmp_path / "a.md").write_text(TEXT)
    store = tmp_path / "m.db"
    new_store(store)
    before = store_checksum(store)
    code, out, err = cli("--store", store, "ingest", tmp_path / "a.md")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "embedding endpoint" in err and says in err, err
    assert store_checksum(store) == before


def test_vectors_of_another_length_than_the_stores_are_refused_at_ingest_and_recall(tmp_path, endpoint_env):
    (tmp_path / "a.md").write_text(TEXT)
    (tmp_path / "b.md").write_text("# Quay\nThe quay is swept at noon.\n")
    store = tmp_path / "m.db"
    assert cli("--store", store, "ingest", tmp_path / "a.md")[0] == 0
    endpoint_env.on_embeddings = lambda texts: [hashed_vector(t, 8) for t in texts]  # the model behind it changed
    before = store_checksum(store)
    code, out, err = cli("--store", store, "ingest", tmp_path / "b.md")
    assert code == 2 and err.count("\n") == 1 and "vectors of 8 numbers where this store's have 16" in err, err
    assert store_checksum(store) == before
    code, out, err = cli("--store", store, "recall", "quay swept", "--strategy", "hybrid")
    assert code == 2 and err.count("\n") == 1 and "vectors of 8 numbers where this store's have 16" in err, err


class Trickle:
    """A loopback HTTP server whose every answer is 200 with a body of ``total`` spaces that arrives
    ``step`` bytes every ``pause`` seconds (what a stuck or hostile server sends); gzipped when
    ``gzip``, whatever the request accepts (a small answer that unpacks to ``total``)."""

    def __init__(self, total: int, step: int, pause: float, gzip: bool = False) -> None:
        import gzip as gzip_
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.sent = 0
        trickle = self
        body = gzip_.compress(b" " * total) if gzip else b""

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body) if gzip else total))
                if gzip:
                    self.send_header("Content-Encoding", "gzip")
                self.end_headers()
                try:
                    while trickle.sent < (len(body) if gzip else total):
                        self.wfile.write(body[trickle.sent:trickle.sent + step] if gzip else b" " * step)
                        self.wfile.flush()
                        trickle.sent += step
                        time.sleep(pause)
                except OSError:  # the client hung up: what it should do
                    pass

            do_GET = do_POST = answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def trickle(request):
    server = Trickle(*request.param)
    yield server
    server.close()


@pytest.mark.parametrize("trickle", [(10_000, 1, 0.1)], indirect=True)
def test_an_endpoint_answer_that_trickles_in_is_cut_off_at_the_timeout(trickle):
    embedder = OpenAIEmbedder(trickle.origin + "/v1", "e", "sk-secret", timeout=1.0, max_retries=0)
    started = time.monotonic()
    with pytest.raises(EmbeddingUnavailable, match="timed out"):
        embedder.embed(["a private note"])
    assert time.monotonic() - started < 5  # a byte each 0.1 s: 1,000 s to the end of the answer


@pytest.mark.parametrize("trickle, says", [((64 * 2**20, 2**16, 0), "answered more than 1 MB"),
                                           ((64 * 2**20, 2**10, 0, True), "answered gzip-compressed")],
                         indirect=["trickle"], ids=["plain", "gzip"])
def test_an_endpoint_answer_past_the_cap_is_not_read_whole(trickle, says, monkeypatch):
    monkeypatch.setattr(net, "MAX_ANSWER_BYTES", 2**20, raising=False)
    embedder = OpenAIEmbedder(trickle.origin + "/v1", "e", "sk-secret", timeout=5.0, max_retries=2)
    with pytest.raises(EmbeddingUnavailable, match=says):
        embedder.embed(["a private note"])
    assert trickle.sent < 16 * 2**20  # it hung up soon after the cap, and did not ask again


@pytest.mark.parametrize("trickle", [(10_000, 1, 0.1)], indirect=True)
def test_a_documents_photo_url_that_trickles_in_is_cut_off_at_the_timeout(trickle):
    started = time.monotonic()
    with pytest.raises(DownloadFailed, match="timed out"):
        net.download(trickle.origin + "/photo.png", timeout=1.0, max_bytes=2**20, allow=HostList.parse("127.0.0.1"))
    assert time.monotonic() - started < 5


class HeaderDrip:
    """A loopback server that answers every request with its status line and headers one byte
    every ``pause`` seconds, for ``seconds`` at most (then it hangs up): each read gets a byte
    well within any per-read timeout, so only a bound on the whole exchange ends it sooner."""

    def __init__(self, pause: float = 0.05, seconds: float = 10.0) -> None:
        import socket
        import threading

        self.listener = socket.create_server(("127.0.0.1", 0))
        self.origin = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.pause, self.seconds, self.connections = pause, seconds, 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        import threading

        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self.drip, args=(conn,), daemon=True).start()

    def drip(self, conn) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"a" * 100_000
        ends = time.monotonic() + self.seconds
        with conn:
            try:
                conn.recv(65536)
                for byte in head:
                    if time.monotonic() > ends:
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(self.pause)
            except OSError:  # the client hung up: what it should do
                pass

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def header_drip():
    server = HeaderDrip()
    yield server
    server.close()


def test_an_endpoint_that_drips_its_headers_is_cut_off_at_the_timeout(header_drip):
    """The client's timeout bounds each read; the whole exchange, headers included, is bounded
    too (before: the answer was read for as long as the server went on, here 10 s)."""
    embedder = OpenAIEmbedder(header_drip.origin + "/v1", "e", "sk-secret", timeout=1.0, max_retries=0)
    started = time.monotonic()
    with pytest.raises(EmbeddingUnavailable, match="Timeout"):
        embedder.embed(["a private note"])
    assert time.monotonic() - started < 4
    started = time.monotonic()
    with pytest.raises(DownloadFailed, match="timed out"):
        net.download(header_drip.origin + "/photo.png", timeout=1.0, max_bytes=2**20, allow=HostList.parse("127.0.0.1"))
    assert time.monotonic() - started < 4 and header_drip.connections == 2

"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests (stdlib only, one thread).

It speaks ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` well enough for the real
``openai`` client, and can be scripted per test with the failure modes real endpoints have.

Usage (the ``openai_server`` fixture in ``tests/conftest.py`` starts and stops one)::

    server.base_url                      # "http://127.0.0.1:PORT/v1", for base_url settings
    server.on_chat = lambda body: '{"summary": "…"}'   # default chat reply (content string)
    server.on_embeddings = lambda texts: [[…], …]       # default vectors (default: hashed, dim 16)
    server.on_image_embeddings = lambda blobs: [[…], …] # image inputs (default: the text the bytes spell)
    server.push("chat", Fail(500))       # the next chat request gets HTTP 500 …
    server.push("chat", Slow(2.0))       # … the one after waits 2 s before answering normally
    server.push("chat", Garbage())       # … then a body that is not JSON at all
    server.push("chat", Reply("not json"))  # … then a well-formed completion whose content is this
    server.requests                      # [(path, parsed JSON body), …] in arrival order
    server.headers                       # [(method, path, {lower-case header: value}), …] of every request
    server.files["/photos/a.png"] = png("kayak")     # served to GET (an image that "shows" kayak)
    server.redirects["/v1/embeddings"] = "http://elsewhere/…"  # any method there gets 307 to it

Scripted steps are used once each, in order, per endpoint ("chat" or "embeddings"); when none
is left the default handler answers.

Embedding inputs may be strings (text) or Jina-style objects, ``{"text": …}`` or
``{"image": "data:<type>;base64,…"}`` (engine/images.py). By default an image embeds exactly like
the text its bytes spell after the image signature (latin-1), so a test can make a photo "show" a
word with ``png("kayak")``; an image that is not a base64 data URL gets HTTP 400, as a strict
server would answer. ``GET /v1/models`` answers an empty model list.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    """Answer normally, with this content (chat) or these vectors (embeddings)."""

    content: Any


@dataclass
class Fail:
    """Answer with an HTTP error status and an OpenAI-style error body."""

    status: int = 500
    message: str = "scripted failure"


@dataclass
class Slow:
    """Wait ``seconds`` before answering (with ``then``, or the default handler)."""

    seconds: float
    then: Any = None


@dataclass
class Garbage:
    """Answer 200 with a body that is not JSON."""

    body: bytes = b"<html>not json</html>"


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png(word: str) -> bytes:
    """Bytes that are a PNG by their signature and "show" ``word`` to this server."""
    return PNG_SIGNATURE + word.encode("latin-1")


def hashed_vector(text: str, dim: int = 16) -> list[float]:
    """A deterministic unit vector per text (equal texts, equal vectors)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    raw = [(digest[i % len(digest)] - 127.5) / 127.5 for i in range(dim)]
    norm = sum(x * x for x in raw) ** 0.5 or 1.0
    return [x / norm for x in raw]


class OpenAIServer:
    """Start on construction; stop with :meth:`close` (or use it as a context manager)."""

    # How often the serving loop looks whether it was asked to stop: :meth:`close` waits for that
    # look (the standard library's default, half a second, was an idle half second per test).
    STOP_POLL_SECONDS = 0.02

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any]] = []
        self.on_chat: Callable[[dict[str, Any]], str] = lambda body: "{}"
        self.on_embeddings: Callable[[list[str]], list[list[float]]] = lambda texts: [hashed_vector(t) for t in texts]
        self.on_image_embeddings: Callable[[list[bytes]], list[list[float]]] = lambda blobs: [
            hashed_vector(b.removeprefix(PNG_SIGNATURE).decode("latin-1")) for b in blobs]
        self.headers: list[tuple[str, str, dict[str, str]]] = []
        self.files: dict[str, bytes] = {}
        self.redirects: dict[str, str] = {}
        self._steps: dict[str, list[Any]] = {"chat": [], "embeddings": []}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(self.STOP_POLL_SECONDS,), daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def push(self, endpoint: str, *steps: Any) -> None:
        """Script the next requests to ``endpoint`` ("chat" or "embeddings")."""
        with self._lock:
            self._steps[endpoint].extend(steps)

    def count(self, endpoint: str) -> int:
        """How many requests reached ``endpoint``."""
        suffix = "/chat/completions" if endpoint == "chat" else "/embeddings"
        return sum(1 for path, _ in self.requests if path.endswith(suffix))

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "OpenAIServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- serving ------------------------------------------------------------------------------

    def _next_step(self, endpoint: str) -> Any:
        with self._lock:
            return self._steps[endpoint].pop(0) if self._steps[endpoint] else None

    def _answer(self, endpoint: str, body: dict[str, Any], step: Any) -> tuple[int, bytes]:
        if isinstance(step, Slow):
            time.sleep(step.seconds)
            step = step.then
        if isinstance(step, Fail):
            return step.status, json.dumps({"error": {"message": step.message, "type": "server_error"}}).encode()
        if isinstance(step, Garbage):
            return 200, step.body
        if endpoint == "chat":
            content = step.content if isinstance(step, Reply) else self.on_chat(body)
            if not isinstance(content, str):
                content = json.dumps(content)
            return 200, json.dumps(_completion(body, content)).encode()
        inputs = body.get("input", [])
        inputs = [inputs] if isinstance(inputs, (str, dict)) else inputs
        try:
            vectors = step.content if isinstance(step, Reply) else self._embed(inputs)
        except ValueError as exc:
            return 400, json.dumps({"error": {"message": str(exc), "type": "invalid_request_error"}}).encode()
        data = [{"object": "embedding", "index": n, "embedding": v} for n, v in enumerate(vectors)]
        return 200, json.dumps({"object": "list", "data": data, "model": body.get("model", ""),
                                "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()

    def _embed(self, inputs: list[Any]) -> list[list[float]]:
        """Vectors in input order: texts through ``on_embeddings``, images through ``on_image_embeddings``."""
        texts = [(n, x if isinstance(x, str) else x.get("text")) for n, x in enumerate(inputs)
                 if isinstance(x, str) or "text" in x]
        images = [(n, _image_bytes(x["image"])) for n, x in enumerate(inputs) if isinstance(x, dict) and "image" in x]
        if len(texts) + len(images) != len(inputs):
            raise ValueError("each input must be a string, {'text': …} or {'image': …}")
        out: dict[int, list[float]] = {}
        if texts:
            out.update(zip([n for n, _ in texts], self.on_embeddings([t for _, t in texts])))
        if images:
            out.update(zip([n for n, _ in images], self.on_image_embeddings([b for _, b in images])))
        return [out[n] for n in range(len(inputs))]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _redirected(self) -> bool:
                server.headers.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
                location = server.redirects.get(self.path)
                if location is None:
                    return False
                self.send_response(307)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return True

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                if self._redirected():
                    return
                if self.path.endswith("/models"):
                    self._send(200, b'{"object": "list", "data": []}')
                elif self.path in server.files:
                    self._send(200, server.files[self.path], "application/octet-stream")
                else:
                    self._send(404, b'{"error": {"message": "no such file"}}')

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                if self._redirected():
                    return
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                server.requests.append((self.path, body))
                if self.path.endswith("/chat/completions"):
                    endpoint = "chat"
                elif self.path.endswith("/embeddings"):
                    endpoint = "embeddings"
                else:
                    self._send(404, b'{"error": {"message": "no such endpoint"}}')
                    return
                status, payload = server._answer(endpoint, body, server._next_step(endpoint))
                self._send(status, payload)

            def _send(self, status: int, payload: bytes, kind: str = "application/json") -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        return Handler


def _image_bytes(url: Any) -> bytes:
    header, comma, payload = str(url).partition(",")
    if not (str(url).startswith("data:") and comma and header.endswith(";base64")):
        raise ValueError("an image input must be a data:<type>;base64,… URL")
    try:
        return base64.b64decode(payload, validate=True)
    except binascii.Error:
        raise ValueError("the image's base64 is malformed") from None


def _completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": body.get("model", ""),
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }

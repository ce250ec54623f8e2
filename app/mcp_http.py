"""``mnemoscope mcp --http PORT``: streamable HTTP on 127.0.0.1, for the person's own clients alone.

Loopback is not private: every user of the machine can connect to the port, while the store is
the person's alone (0600, its folders checked against other users). So every request carries a
bearer token (``Authorization: Bearer …``) that only the person can read: the file ``mcp-token``
beside the config file (made once, 0600; refused, one line, when another user could read or
change it). A request without it is answered 401 and reaches nothing. The SDK's own checks stay
in front of the memory too (a web page's Host or Origin: 421, 403).
"""

from __future__ import annotations

import hmac
import os
import secrets
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

from mnemoscope.engine.config import config_path
from mnemoscope.engine.errors import ConfigError, FileRefused
from mnemoscope.engine.files import make_private_folders, read_own

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[dict[str, Any]]], Callable[[dict[str, Any]], Awaitable[None]]],
                   Awaitable[None]]
HOST = "127.0.0.1"
TOKEN_FILE = "mcp-token"
MIN_TOKEN_CHARS = 32


def token_path() -> Path:
    """Where the token is kept: beside the user's config file."""
    return config_path().parent / TOKEN_FILE


@dataclass(frozen=True)
class Token:
    """The token clients must send, where it is kept, and whether this start made it."""

    value: str
    path: Path
    new: bool


def http_token(path: Path) -> Token:
    """The token clients must send, made on first use; raises :class:`ConfigError` (one line) for
    a file another user could read or change, or one that holds no token."""
    new = not os.path.lexists(path) and _make_token(path)
    try:
        token = read_own(path, 4096, decides="holds the key to the MCP port").decode("utf-8", "replace").strip()
    except FileRefused as exc:
        raise ConfigError(f"{path}: {exc}") from None
    mode = os.stat(path).st_mode & 0o777
    if mode & 0o044:
        raise ConfigError(f"{path}: other users can read the MCP token (mode {mode:o}); nothing was served: chmod 600 {path}")
    if len(token) < MIN_TOKEN_CHARS or not token.isprintable() or " " in token:
        raise ConfigError(f"{path}: holds no MCP token (one word of at least {MIN_TOKEN_CHARS} characters);"
                          " delete it and a new one is made")
    return Token(token, path, new)


def _make_token(path: Path) -> bool:
    """Write a new random token at ``path``, created private and whole: linked into place from a
    private temporary file, so that two servers starting at once keep the first one's. Returns
    whether this call's token is the one."""
    make_private_folders(path.parent)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{TOKEN_FILE}.")  # 0600
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(32) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False  # another server made it meanwhile: its token is the one
        return True
    finally:
        os.unlink(temporary)


class BearerOnly:
    """An ASGI app that passes on only HTTP requests carrying ``Authorization: Bearer <token>``;
    any other is answered 401 with nothing run (the lifespan passes, so the app starts and stops)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan" and not self._carries_token(scope):
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": b"Missing or wrong bearer token (Authorization header)"})
            return
        await self.app(scope, receive, send)

    def _carries_token(self, scope: Scope) -> bool:
        """One Authorization header, of the Bearer scheme (its name in any case, as HTTP has it), with the token."""
        given = [value for name, value in scope.get("headers", ()) if name.lower() == b"authorization"]
        scheme, _, credentials = given[0].strip().partition(b" ") if len(given) == 1 else (b"", b"", b"")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self.token)


def serve_http(server: Any, port: int, token: Token) -> None:
    """Serve ``server`` (an MCPServer) over streamable HTTP on 127.0.0.1:``port`` until interrupted,
    every request held to ``token`` (:func:`http_token`); says on stderr where, and how a client
    sends it (:func:`how_to_connect`)."""
    import anyio
    import uvicorn

    app = BearerOnly(server.streamable_http_app(host=HOST), token.value)
    print(how_to_connect(port, token), file=sys.stderr, flush=True)
    config = uvicorn.Config(app, host=HOST, port=port, log_level=server.settings.log_level.lower())
    anyio.run(uvicorn.Server(config).serve)


def how_to_connect(port: int, token: Token) -> str:
    """The line a start says: the token itself only when this start made it (the person sees it
    once); later starts name its file, so that a supervisor's log of stderr keeps no token."""
    where = f"mnemoscope mcp: http://{HOST}:{port}/mcp; a client sends the header 'Authorization: Bearer "
    if token.new:
        return f"{where}{token.value}' (a new token, kept in {token.path}, readable by you alone)"
    return f"{where}TOKEN', TOKEN being what {token.path} holds (cat {token.path})"

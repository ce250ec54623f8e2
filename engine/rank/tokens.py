"""Recall tokens: signed, expiring, and carrying everything feedback needs.

A recall writes nothing. Its token holds the query, the ids it showed (best first), the time, and
for a fused recall the shown candidates' feature vectors (so the learner trains on what was
shown, even from another process or after a restart), and is signed with an HMAC under the
store's own key (made with the store's ranker tables). So feedback can only name a recall this
store made, with the ids and features that recall really showed; a token expires after
``Settings.token_ttl_hours``; and it is accepted once: its id (the signature) goes into the
feedback log under a unique index, checked and written in one transaction.

Layout: ``m1.<body>.<signature>``, both base64url; the body is zlib-compressed
``<json header>\\n<float16 features>``, and the signature covers the compressed body, so nothing
is decompressed before it is verified.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import zlib
from dataclasses import dataclass

import numpy as np

from ..store.ranker import TokenRow

PREFIX = "m1"
SIGNATURE_BYTES = 16
MAX_BODY = 1 << 20  # a decompressed body is never larger than this


class TokenError(ValueError):
    """A token that is malformed, not this store's, altered or expired."""


@dataclass
class TokenKey:
    key: bytes
    ttl_seconds: float

    def sign(self, body: bytes) -> bytes:
        return hmac.new(self.key, body, hashlib.sha256).digest()[:SIGNATURE_BYTES]


def names_digest(names: tuple[str, ...] | list[str]) -> str:
    """A short stand-in for the feature names (the full list would triple a token's size)."""
    return hashlib.blake2b("\n".join(names).encode(), digest_size=6).hexdigest() if names else ""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue(key: TokenKey, query: str, shown: list[int], names: tuple[str, ...], features: np.ndarray | None,
          now: float) -> str:
    header = {"t": round(now, 3), "q": query, "s": shown, "n": names_digest(names) if features is not None else ""}
    blob = b"" if features is None else np.asarray(features, dtype=np.float16).tobytes()
    body = zlib.compress(json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" + blob, 6)
    return f"{PREFIX}.{_b64(body)}.{_b64(key.sign(body))}"


def read(key: TokenKey, token: object, names: tuple[str, ...], now: float) -> TokenRow:
    """The recall behind ``token``, checked: this store's, unaltered, not expired. Its features
    are kept only if they were made with ``names`` (the ranker's current feature set)."""
    if not isinstance(token, str) or token.count(".") != 2 or not token.startswith(PREFIX + "."):
        raise TokenError(f"{_short(token)} is not a recall token (recall again and use the token it gives)")
    _, body_text, signature_text = token.split(".")
    try:
        body, signature = _unb64(body_text), _unb64(signature_text)
    except (binascii.Error, ValueError):
        raise TokenError(f"{_short(token)} is not a recall token (recall again and use the token it gives)") from None
    if not key.key or not hmac.compare_digest(signature, key.sign(body)):
        raise TokenError(f"recall token {_short(token)} was not made by this store, or was altered")
    try:
        raw = zlib.decompressobj().decompress(body, MAX_BODY)
        head, _, blob = raw.partition(b"\n")
        header = json.loads(head.decode())
        created, query, shown, digest = float(header["t"]), str(header["q"]), [int(i) for i in header["s"]], header["n"]
    except (zlib.error, ValueError, KeyError, TypeError):
        raise TokenError(f"recall token {_short(token)} cannot be read") from None
    if created < now - key.ttl_seconds:
        raise TokenError(f"recall token {_short(token)} has expired; recall again")
    features = None
    if digest and digest == names_digest(names) and len(blob) == 2 * len(shown) * len(names):
        features = np.frombuffer(blob, dtype=np.float16).reshape(len(shown), len(names)).astype(np.float64)
    return TokenRow(signature_text, created, query, shown, list(names) if features is not None else [], features)


def _short(token: object) -> str:
    text = repr(token) if not isinstance(token, str) else token
    return repr(text if len(text) <= 24 else text[:12] + "…" + text[-6:])

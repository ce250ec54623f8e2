"""What a shared photo's reference may name, and the bytes behind it.

A reference comes from a document, so the document must not decide what Mnemoscope reads or
contacts. What is read:

- ``data:<type>;base64,…``: the bytes it carries;
- ``http(s)://…``: downloaded only from a host the person listed in ``image_allow_hosts``
  (:func:`engine.net.download`; :class:`NotFetched` else, and nothing is contacted); the host's
  addresses are checked after DNS resolution and on every redirect;
- a path or a ``file://`` URL: only a file inside the folder the person ingested (resolved, links
  followed, then checked), relative to the file the turn came from. ``~`` is not expanded. A
  source that was imported, not ingested, has no such folder: its local references are not read.

Whatever the reference, only bytes that are an image (PNG, JPEG, GIF, WebP or BMP by their first
bytes) of at most ``MAX_IMAGE_BYTES`` are returned; the type sent on is the one the bytes show,
never a server's or a file name's claim.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from .errors import FileRefused
from .files import read_regular
from .hosts import HostList

MAX_IMAGE_BYTES = 20 * 1024 * 1024
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*):")  # as urlsplit reads it, without parsing the rest
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
          (b"GIF89a", "image/gif"), (b"BM", "image/bmp"))


class ImageUnreadable(ValueError):
    """An image reference that cannot (or may not) be turned into bytes; ``str()`` is the reason."""


class NotFetched(ImageUnreadable):
    """An image URL whose host is not listed in ``image_allow_hosts``: kept as a reference and
    counted, not a failure (listing the host and ``images --resume`` fetch it later)."""

    def __init__(self, reason: str, host: str) -> None:
        super().__init__(reason)
        self.host = host


@dataclass
class ImageData:
    data: bytes
    mime: str

    @property
    def digest(self) -> str:
        """The embedding cache key: the same bytes are never embedded twice, whatever their name."""
        return "img-" + hashlib.sha256(self.data).hexdigest()

    def as_input(self) -> dict[str, str]:
        """The ``input`` item sent to the endpoint (see :mod:`engine.images`)."""
        return {"image": f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"}


@dataclass
class Place:
    """Where a reference may point: ``root`` is the folder the person ingested (None: no local
    file may be read), ``base`` the folder of the file the turn came from."""

    root: Path | None = None
    base: Path | None = None


@dataclass
class Fetching:
    """How downloads go (from the settings)."""

    timeout: float = 30.0
    retries: int = 3
    allow: HostList = HostList()  # nothing listed: no URL is fetched

    @classmethod
    def from_list(cls, timeout: float, retries: int, allow_hosts: str) -> "Fetching":
        return cls(timeout, retries, HostList.parse(allow_hosts))


def read_image(ref: str, place: Place, fetching: Fetching | None = None) -> ImageData:
    """The image behind a reference; raises :class:`ImageUnreadable` with the reason."""
    ref = ref.strip()
    named = _SCHEME.match(ref) if "://" in ref or ref.lower().startswith("data:") else None
    scheme = named[1].lower() if named else ""
    if scheme == "data":
        return _image(_from_data_url(ref), "the data: URL")
    if scheme in ("http", "https"):
        return _image(_download(ref, fetching or Fetching()), ref)
    if scheme not in ("", "file"):
        raise ImageUnreadable(f"a {scheme}: reference is not read (only http(s), data: and files in the ingested folder)")
    path = Path(urllib.parse.unquote(_file_path(ref))) if scheme == "file" else Path(ref)
    return _image(_read_local(path, place), str(path))


def _file_path(ref: str) -> str:
    try:
        return urllib.parse.urlsplit(ref).path
    except ValueError:  # a bracket left open in what would be the host
        raise ImageUnreadable(f"not a well-formed URL: {ref[:80]!r}") from None


def image_type(data: bytes) -> str | None:
    """The image type the first bytes show, or None when they are no image we send."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _image(data: bytes, what: str) -> ImageData:
    kind = image_type(data)
    if kind is None:
        raise ImageUnreadable(f"{what} is not an image (PNG, JPEG, GIF, WebP or BMP); it was not sent")
    return ImageData(data, kind)


def _read_local(path: Path, place: Place) -> bytes:
    if place.root is None:
        raise ImageUnreadable("local image files are read only while the folder holding them is ingested")
    full = path if path.is_absolute() else (place.base or place.root) / path
    resolved = full.resolve()
    root = place.root.resolve()
    if resolved != root and root not in resolved.parents:
        raise ImageUnreadable(f"{full} is outside the ingested folder {root}; it was not read")
    try:
        return read_regular(resolved, MAX_IMAGE_BYTES, inside=root)
    except FileRefused as exc:
        raise ImageUnreadable(f"{full}: {exc}") from None


def _from_data_url(ref: str) -> bytes:
    header, comma, payload = ref.partition(",")
    if not comma or not header.lower().endswith(";base64"):
        raise ImageUnreadable("a data: URL must be base64-encoded (data:<type>;base64,...)")
    if len(payload) > MAX_IMAGE_BYTES * 4 // 3 + 4:
        raise ImageUnreadable(f"the data: URL is larger than {MAX_IMAGE_BYTES // 2**20} MB")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ImageUnreadable("the data: URL is not valid base64") from None


def _download(url: str, fetching: Fetching) -> bytes:
    from .net import DownloadFailed, NotListed, Refused, download

    try:
        return download(url, timeout=fetching.timeout, max_bytes=MAX_IMAGE_BYTES, retries=fetching.retries,
                        allow=fetching.allow).data
    except NotListed as exc:
        raise NotFetched(f"not fetched: {exc}", exc.host) from None
    except Refused as exc:
        raise ImageUnreadable(f"not fetched: {exc}") from None
    except DownloadFailed as exc:
        raise ImageUnreadable(f"cannot download {url}: {exc}") from None


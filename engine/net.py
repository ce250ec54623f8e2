"""Every HTTP request Mnemoscope makes goes through here, on the ``openai`` client's HTTP
library (httpx2): one path, two kinds of destination.

**Endpoints the person configured** (embeddings, an LLM, an image model; :func:`endpoint_client`):
the ``openai`` client, whose requests never leave the configured origin. A redirect to another
scheme, host or port is refused before it is followed, so neither the key nor the texts go
there (httpx2 alone would drop the key but still send the texts). The whole answer, headers
included, arrives within the request timeout (:class:`_Transport`), the body at ``MAX_ANSWER_BYTES``.

**URLs a document names** (a shared photo's ``img_url``; :func:`download`): the content must not
pick the host, so one is fetched only from a host the person listed in ``image_allow_hosts``
(:mod:`engine.hosts`; empty by default: nothing is fetched), and every redirect must lead to a
listed host too. The host is resolved here and every address it resolves to is checked (no
loopback, private, link-local, cloud-metadata, shared, multicast or reserved address) unless the
host is listed by its exact name (a NAS on the home network, a test server); the connection goes
to the address checked (so a second lookup cannot rebind it), TLS still checks the certificate
against the host name.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import httpcore2
import httpx2
from openai import DefaultHttpxClient, OpenAI, OpenAIError

from .errors import ConfigError
from .hosts import SETTING, HostList, canonical

USER_AGENT = "mnemoscope"
MAX_REDIRECTS = 5
# The most an endpoint's answer may hold. An honest one is far smaller (a batch of 64 vectors of
# 3,072 numbers is a few MB as JSON); parsing holds about three times the answer in memory.
MAX_ANSWER_BYTES = 256 * 2**20
# Not global although Python's ipaddress may say so: IANA's special-purpose IPv4 block (where some
# clouds put their metadata service) and the NAT64 prefix, whose addresses stand for IPv4 ones.
_ALSO_BLOCKED = [ipaddress.ip_network("192.0.0.0/24")]
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class OffOrigin(OpenAIError):
    """An endpoint tried to send a request to another origin (a redirect); nothing was sent there."""


class AnswerRefused(OpenAIError):
    """An endpoint's answer not read (on): past :data:`MAX_ANSWER_BYTES`, or compressed although
    asked not to be (a compressed answer is limited only by what it unpacks to). Not asked again."""


class Refused(ValueError):
    """A URL a document named that Mnemoscope will not fetch; ``str()`` says why, in one line."""


class NotListed(Refused):
    """A URL whose host the person did not list in ``image_allow_hosts``: not contacted at all."""

    def __init__(self, host: str) -> None:
        super().__init__(f"{host} is not in {SETTING}; only the hosts listed there are fetched")
        self.host = host


class DownloadFailed(ValueError):
    """A permitted download that failed (HTTP status, timeout, connection); ``retry`` when it may pass."""

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry


# -- configured endpoints ---------------------------------------------------------------------


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL, the port made explicit."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


def endpoint_client(base_url: str, api_key: str, *, timeout: float, max_retries: int) -> OpenAI:
    """The ``openai`` client for an endpoint the person configured; its requests (and with them
    the key and the texts) go to ``base_url``'s origin only."""
    home = origin(base_url)

    def same_origin(request: httpx2.Request) -> None:
        if origin(str(request.url)) != home:
            raise OffOrigin(f"the endpoint {base_url} redirected to {request.url.scheme}://{request.url.host}, another"
                            " origin; nothing was sent there (set its base URL to where it points)")
        request.headers["Accept-Encoding"] = "identity"  # the size cap then holds for what is parsed

    def bounded(response: httpx2.Response) -> None:
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            response.close()
            raise AnswerRefused(f"the endpoint answered {encoding}-compressed although asked for plain text; not read")
        response.stream = _Bounded(response.stream, time.monotonic() + timeout, MAX_ANSWER_BYTES)

    http = DefaultHttpxClient(timeout=timeout, transport=_Transport(_env_proxy(base_url), timeout),
                              event_hooks={"request": [same_origin], "response": [bounded]})
    return OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=max_retries,
                  http_client=http)


class _Bounded(httpx2.SyncByteStream):
    """An answer's body read until ``deadline`` and ``max_bytes`` at most. The client's timeout
    bounds each read, not the whole body: a server sending a byte a second, or gigabytes, would
    otherwise hold the ingest (and the memory) for as long as it liked."""

    def __init__(self, stream: httpx2.SyncByteStream, deadline: float, max_bytes: int) -> None:
        self.stream, self.deadline, self.max_bytes = stream, deadline, max_bytes

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        for chunk in self.stream:
            read += len(chunk)
            if read > self.max_bytes:
                raise AnswerRefused(f"the endpoint answered more than {self.max_bytes // 2**20} MB; it was not read further")
            if time.monotonic() > self.deadline:
                raise httpx2.ReadTimeout("the answer was still arriving at the timeout")
            yield chunk

    def close(self) -> None:
        self.stream.close()


# -- the whole exchange within the timeout ----------------------------------------------------


class _Deadline(threading.local):
    """This thread's request: how long its answer may take to arrive (None: no request under
    way), and by when, counted from the first read after the request was sent."""

    timeout: float | None = None
    at: float | None = None


_deadline = _Deadline()


class _Transport(httpx2.BaseTransport):
    """httpx2's transport on a connection pool whose reads of an answer end at a deadline:
    ``timeout`` after the first read once the request is sent. httpx2's own timeout bounds each
    read, so a server dripping its status line and headers a byte at a time (up to h11's 100 KB)
    would hold a request for days; this bounds the whole answer, headers included (the body also
    has :class:`_Bounded`). Sending is bounded per write as before: a batch of photos may take
    longer than the timeout to upload on a slow line. ``proxy`` is the one the environment names
    for the URLs this transport carries (:func:`_env_proxy`), used under the same deadline; None
    goes direct."""

    def __init__(self, proxy: _Proxy | None, timeout: float) -> None:
        backend = _DeadlineBackend()
        self.timeout = timeout
        self.pool = (httpcore2.HTTPProxy(proxy_url=proxy.url, proxy_auth=proxy.auth, ssl_context=_tls(),
                                         network_backend=backend) if proxy
                     else httpcore2.ConnectionPool(ssl_context=_tls(), network_backend=backend))

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        _deadline.timeout, _deadline.at = self.timeout, None
        url = request.url
        core = httpcore2.Request(method=request.method, url=httpcore2.URL(scheme=url.raw_scheme, host=url.raw_host,
                                 port=url.port, target=url.raw_path),
                                 headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        with _as_httpx2():
            answer = self.pool.handle_request(core)
        return httpx2.Response(status_code=answer.status, headers=answer.headers, stream=_Body(answer.stream),
                               extensions=answer.extensions)

    def close(self) -> None:
        self.pool.close()


class _Body(httpx2.SyncByteStream):
    """The answer's body, its connection's errors as httpx2's."""

    def __init__(self, stream: Iterable[bytes]) -> None:
        self.stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx2():
            yield from self.stream

    def close(self) -> None:
        close = getattr(self.stream, "close", None)
        if close:
            close()


# httpcore2's errors and the httpx2 errors a client (the openai package's too) expects, subclasses first
_ERRORS = ((httpcore2.ConnectTimeout, httpx2.ConnectTimeout), (httpcore2.ReadTimeout, httpx2.ReadTimeout),
           (httpcore2.WriteTimeout, httpx2.WriteTimeout), (httpcore2.PoolTimeout, httpx2.PoolTimeout),
           (httpcore2.TimeoutException, httpx2.TimeoutException), (httpcore2.ConnectError, httpx2.ConnectError),
           (httpcore2.ReadError, httpx2.ReadError), (httpcore2.WriteError, httpx2.WriteError),
           (httpcore2.NetworkError, httpx2.NetworkError), (httpcore2.ProxyError, httpx2.ProxyError),
           (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
           (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
           (httpcore2.LocalProtocolError, httpx2.LocalProtocolError), (httpcore2.ProtocolError, httpx2.ProtocolError))


@contextmanager
def _as_httpx2() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        mine = next((mine for theirs, mine in _ERRORS if isinstance(exc, theirs)), None)
        if mine is None:
            raise
        raise mine(str(exc)) from exc


class _DeadlineBackend(httpcore2.NetworkBackend):
    """The system's sockets, each read cut to what is left of this thread's deadline."""

    def __init__(self) -> None:
        self.backend = httpcore2.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        return _DeadlineStream(self.backend.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        raise httpcore2.UnsupportedProtocol("Mnemoscope connects over TCP only")

    def sleep(self, seconds: float) -> None:
        self.backend.sleep(seconds)


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, stream: httpcore2.NetworkStream) -> None:
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _deadline.at = None  # (a proxy's CONNECT answer is read before the request is sent)
        self.stream.write(buffer, timeout)

    def close(self) -> None:
        self.stream.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        return _DeadlineStream(self.stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self.stream.get_extra_info(info)


def _left(timeout: float | None) -> float | None:
    """The time a read may wait: ``timeout``, or less when the answer's deadline is nearer."""
    if _deadline.timeout is None:
        return timeout
    if _deadline.at is None:
        _deadline.at = time.monotonic() + _deadline.timeout
    left = _deadline.at - time.monotonic()
    if left <= 0:
        raise httpcore2.ReadTimeout("the answer was still arriving at the timeout")
    return left if timeout is None else min(timeout, left)


@dataclass(frozen=True)
class _Proxy:
    url: str  # without credentials
    auth: tuple[str, str] | None


def _env_proxy(url: str) -> _Proxy | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``/``HTTP_PROXY``, else
    ``ALL_PROXY``; None: direct, or a host ``NO_PROXY`` names), its credentials apart. A person who
    set a proxy is never bypassed: one this transport cannot carry (SOCKS, say) is a
    :class:`ConfigError`, and nothing is sent."""
    scheme, host, _ = origin(url)
    proxies = urllib.request.getproxies()
    named = proxies.get(scheme) or proxies.get("all")
    if not named or urllib.request.proxy_bypass(host):
        return None
    try:
        parts = urllib.parse.urlsplit(named if "://" in named else "http://" + named)
        usable = parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port out of range, a bracket left open
        parts, usable = urllib.parse.urlsplit("unreadable://"), False
    if not usable:
        raise ConfigError(f"the environment's proxy for {scheme} URLs ({parts.scheme}://{parts.hostname or '?'}, from"
                          f" {scheme.upper()}_PROXY or ALL_PROXY) is not an http(s) proxy Mnemoscope can use;"
                          " nothing was sent (name an http proxy, or the host in NO_PROXY)")
    auth = (urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or "")) if parts.username else None
    return _Proxy(parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl(), auth)


# -- URLs a document names --------------------------------------------------------------------


@dataclass
class Downloaded:
    data: bytes
    content_type: str
    url: str  # after redirects


def download(url: str, *, timeout: float, max_bytes: int, retries: int = 0, allow: HostList = HostList()) -> Downloaded:
    """GET a URL a document named: listed hosts only (see the module docstring), at most
    ``max_bytes``. Only what may pass is retried, with backoff (429, 5xx, a dropped connection).
    Raises :class:`NotListed` for a host not in ``allow`` (nothing sent anywhere), :class:`Refused`
    for another URL that is not to be fetched, :class:`DownloadFailed` else."""
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(0.5 * 2 ** (attempt - 1), 4.0))
        try:
            return _follow(url, timeout, max_bytes, allow, time.monotonic() + timeout)
        except DownloadFailed as exc:
            if not exc.retry or attempt == retries:
                raise
    raise AssertionError("unreachable")


def _follow(url: str, timeout: float, max_bytes: int, allow: HostList, deadline: float) -> Downloaded:
    """One download, each redirect checked (:func:`download`). Each hop goes the way the
    environment names for its own URL: a redirect from http to https, or to a host ``NO_PROXY``
    does not name, takes that URL's proxy (or none), not the first URL's."""
    clients: dict[_Proxy | None, httpx2.Client] = {}  # made after the first check passes: a refusal costs no TLS setup
    try:
        for hop in range(MAX_REDIRECTS + 1):
            scheme, host, port = _target(url)
            listed = allow.match(host, port)
            if listed is None and hop:  # the answer of a listed host picked this one: not the person's to list
                raise Refused(f"redirected to {_netloc(host, port, scheme)}, which is not in {SETTING}; not followed")
            if listed is None:
                raise NotListed(host)
            address = public_address(host, port, any_address=listed == "exact")
            proxy = _env_proxy(url)
            if proxy not in clients:
                clients[proxy] = DefaultHttpxClient(timeout=timeout, follow_redirects=False,
                                                    transport=_Transport(proxy, timeout))
            client = clients[proxy]
            pinned = urllib.parse.urlsplit(url)._replace(netloc=_netloc(address, port, scheme)).geturl()
            headers = {"Host": _netloc(host, port, scheme), "User-Agent": USER_AGENT}
            extensions = {"sni_hostname": host} if scheme == "https" else {}
            try:
                with client.stream("GET", pinned, headers=headers, extensions=extensions) as reply:
                    if reply.is_redirect and reply.headers.get("location"):
                        url = _join(url, reply.headers["location"])
                        continue
                    if reply.status_code >= 400:
                        code = reply.status_code
                        raise DownloadFailed(f"HTTP {code}", retry=code == 429 or code >= 500)
                    data = bytearray()
                    for chunk in reply.iter_bytes():  # decoded: the cap holds for what a compressed answer unpacks to
                        data += chunk
                        if len(data) > max_bytes:
                            raise Refused(f"larger than {max_bytes // 2**20} MB")
                        if time.monotonic() > deadline:
                            raise DownloadFailed("timed out (still arriving)")
                    return Downloaded(bytes(data), reply.headers.get("content-type", ""), url)
            except httpx2.TimeoutException:
                raise DownloadFailed("timed out") from None
            except (httpx2.RemoteProtocolError, httpx2.ReadError) as exc:
                raise DownloadFailed(f"connection dropped ({exc})", retry=True) from None
            except httpx2.HTTPError as exc:
                raise DownloadFailed(str(exc) or type(exc).__name__) from None
    finally:
        for client in clients.values():
            client.close()
    raise Refused(f"more than {MAX_REDIRECTS} redirects")


def _target(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL a document (or a server's redirect) named, the host in the
    :func:`engine.hosts.canonical` form that is both matched and resolved; :class:`Refused` for
    anything else (a port out of range, an unclosed bracket, a host no DNS name can be)."""
    try:
        parts = urllib.parse.urlsplit(url)
        scheme, host, port = parts.scheme.lower(), parts.hostname or "", parts.port
    except ValueError:
        raise Refused(f"not a well-formed URL: {url[:80]!r}") from None
    if scheme not in ("http", "https") or not host:
        raise Refused(f"only http(s) URLs are fetched, not {url[:80]!r}")
    try:
        return scheme, canonical(host), port or (443 if scheme == "https" else 80)
    except ValueError:
        raise Refused(f"{host[:80]!r} is not a host name; not fetched") from None


def _join(url: str, location: str) -> str:
    """Where a redirect leads; :class:`Refused` when its Location is no URL."""
    try:
        return urllib.parse.urljoin(url, location)
    except ValueError:
        raise Refused(f"redirected to {location[:80]!r}, not a well-formed URL") from None


def _netloc(host: str, port: int, scheme: str) -> str:
    """``host[:port]`` as a URL writes it (an IPv6 address in brackets, the scheme's port left out)."""
    literal = f"[{host}]" if ":" in host else host
    return literal if port == (443 if scheme == "https" else 80) else f"{literal}:{port}"


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context (the system's trusted certificates) for every download: building one
    reads the whole certificate bundle, which each photo of a chat and each client would pay."""
    return httpx2.create_ssl_context()


def public_address(host: str, port: int, any_address: bool = False) -> str:
    """The address to connect to for ``host``: every address it resolves to must be public
    (unless ``any_address``: the host is listed by its exact name)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise DownloadFailed(f"cannot resolve {host}: {getattr(exc, 'strerror', None) or exc}") from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise DownloadFailed(f"cannot resolve {host}")
    if any_address:  # the name as written in the URL: listing it does not list what else resolves there
        return addresses[0]
    for address in addresses:
        if not is_public(address):
            raise Refused(f"{host} is a {'loopback, private, link-local or reserved' if host != address else 'non-public'}"
                          f" address ({address}); a host listed through a wildcard is fetched only at public"
                          f" addresses (list it by its exact name in {SETTING})")
    return addresses[0]


def is_public(address: str) -> bool:
    """Whether an address is on the public internet (an IPv4 address inside IPv6 is judged as IPv4)."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip in _NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        elif ip.sixtofour is not None:  # 6to4 (2002::/16) reaches the IPv4 address it carries
            ip = ip.sixtofour
        elif ip.is_site_local:  # fec0::/10, deprecated but still routed on some private networks
            return False
    if ip.is_multicast or ip.is_reserved or ip.is_unspecified or ip.is_loopback or ip.is_link_local or ip.is_private:
        return False
    return ip.is_global and not any(ip in net for net in _ALSO_BLOCKED if net.version == ip.version)

"""The hosts a person lets a document's URL name (``image_allow_hosts``), and the check of a host
against them.

A document is content: it must not pick the hosts Mnemoscope contacts. So a URL a document names
(a shared photo's ``img_url``) is fetched only from a host the person listed: an exact name (or
address), or ``*.example.org`` for every subdomain of example.org (not example.org itself: list it
too), each on any port unless the entry names one (``nas.local:8080``). A bare ``*``, or a
wildcard over a whole top-level domain (``*.com``), would hand the choice back to the content, so
neither is accepted; nor is a wildcard over a public suffix (``*.co.uk``, ``*.github.io``), a
name under which anyone may register their own, by the Public Suffix List bundled in
``engine/data`` (read only when a wildcard is listed). Names are compared in one ASCII form
(:func:`canonical`), the one resolved. The list is empty by default: nothing is fetched until
the person says so. Only a host listed by its exact name may resolve to a loopback or private
address (a NAS at home, a test server); a host listed through a wildcard must resolve to public
addresses (:func:`engine.net.public_address`), so that a domain's DNS cannot point a listed
wildcard at the person's own network.

Light on purpose: :mod:`engine.config` checks the setting with it at load time, before any HTTP
library is imported.
"""

from __future__ import annotations

import functools
import gzip
import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SETTING = "image_allow_hosts"
_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?")
PUBLIC_SUFFIXES = Path(__file__).with_name("data") / "public_suffix_list.dat.gz"  # engine/data/README.md

Listed = Literal["exact", "domain"]


@dataclass(frozen=True)
class HostList:
    """Hosts listed by exact name, and domains (``.example.org``) whose subdomains are listed; each
    with the one port it is listed on, or None for any port."""

    exact: frozenset[tuple[str, int | None]] = frozenset()
    domains: tuple[tuple[str, int | None], ...] = ()

    @classmethod
    def parse(cls, text: str) -> "HostList":
        """The comma list of a setting's value; raises ValueError naming the first bad entry."""
        exact: set[tuple[str, int | None]] = set()
        domains: list[tuple[str, int | None]] = []
        for entry in (e.strip() for e in text.split(",")):
            if not entry:
                continue
            host, port = _split_port(entry)
            if host.startswith("*."):
                domain = _name(host[2:], entry)
                if "." not in domain:
                    raise ValueError(f"{entry!r} would list every host of a top-level domain; name a domain (*.example.org)")
                if is_public_suffix(domain):
                    raise ValueError(f"{entry!r} would list every host under {domain}, a public suffix where anyone can"
                                     " register a name; name a domain (*.example.co.uk)")
                if below := public_suffix_under(domain):
                    raise ValueError(f"{entry!r} would also list the hosts under public suffixes inside {domain} ({below}),"
                                     " where anyone can register a name; list the hosts you mean, or a domain under it")
                domains.append(("." + domain, port))
            elif host == "*":
                raise ValueError("a bare '*' (any host) is not accepted: the content would pick the host; list host names"
                                 " or *.example.org")
            elif "*" in host:
                raise ValueError(f"{entry!r}: a '*' names subdomains only as '*.' at the start (*.example.org)")
            else:
                exact.add((_name(host, entry), port))
        return cls(frozenset(exact), tuple(domains))

    def match(self, host: str, port: int) -> Listed | None:
        """How ``host`` (in its :func:`canonical` form) on ``port`` is listed: by its exact name,
        under a listed domain, or not. A listing without a port covers every port."""
        if (host, None) in self.exact or (host, port) in self.exact:
            return "exact"
        if _is_address(host):  # "*.0.0.1" names no domain of 127.0.0.1
            return None
        return "domain" if any(host.endswith(d) and p in (None, port) for d, p in self.domains) else None


def canonical(host: str) -> str:
    """The one form of a host that is both compared with the list and resolved: lower-case ASCII
    (an international name IDNA-encoded), no trailing dot, an IP address in its short form without
    brackets. Anything else raises ValueError: a name with a character DNS names do not hold (a NUL,
    a space, a ``%``) would pass a comparison on its whole text while the resolver reads only part
    of it."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if "%" not in bare:  # a scoped IPv6 address names an interface, not a host
        try:
            return str(ipaddress.ip_address(bare))
        except ValueError:
            pass
    try:
        ascii_name = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise ValueError(f"{host!r} is not a host name") from None
    ascii_name = ascii_name[:-1] if ascii_name.endswith(".") else ascii_name
    if not ascii_name or len(ascii_name) > 253 or not all(_LABEL.fullmatch(label) for label in ascii_name.split(".")):
        raise ValueError(f"{host!r} is not a host name")
    return ascii_name


def is_public_suffix(domain: str) -> bool:
    """Whether ``domain`` (in its :func:`canonical` form) is a public suffix, by the list's rules:
    a rule names it (``co.uk``), or a wildcard rule names its parent (``*.ck``) and no exception
    rule names it (``!www.ck``)."""
    names, wildcards, exceptions = _suffix_rules()
    if domain in exceptions:
        return False
    return domain in names or domain.partition(".")[2] in wildcards


def public_suffix_under(domain: str) -> str | None:
    """A public suffix inside ``domain`` (``s3.amazonaws.com`` inside amazonaws.com), or None: a
    wildcard over ``domain`` matches hosts at every depth, those under it too."""
    names, wildcards, _ = _suffix_rules()
    if domain in wildcards:  # "*.compute.amazonaws.com": every name one label under it is one
        return "*." + domain
    inner = "." + domain
    return next((rule for rule in sorted(names | wildcards) if rule.endswith(inner)), None)


@functools.cache
def _suffix_rules() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The Public Suffix List's rules in the :func:`canonical` form: the names, the parents of
    wildcard rules and the exceptions (the list's ASCII rules are in that form already). A rule the
    IDNA codec cannot encode is left out: no host that :func:`canonical` accepts could match it."""
    names: set[str] = set()
    wildcards: set[str] = set()
    exceptions: set[str] = set()
    with gzip.open(PUBLIC_SUFFIXES, "rt", encoding="utf-8") as fh:
        for line in fh:
            rule = line.split(maxsplit=1)[0] if line.strip() else ""
            if not rule or rule.startswith("//"):
                continue
            kind, rule = ((exceptions, rule[1:]) if rule.startswith("!") else
                          (wildcards, rule[2:]) if rule.startswith("*.") else (names, rule))
            try:
                kind.add(rule.lower() if rule.isascii() else canonical(rule))
            except ValueError:
                continue
    return frozenset(names), frozenset(wildcards), frozenset(exceptions)


def _split_port(entry: str) -> tuple[str, int | None]:
    """An entry's host and the port it names (``nas.local:8080``, ``[::1]:8080``), or None."""
    if entry.startswith("[") and "]:" in entry:
        host, _, port = entry.rpartition(":")
    elif entry.count(":") == 1:
        host, _, port = entry.partition(":")
    else:
        return entry, None
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{entry!r}: the port after ':' must be a number from 1 to 65535")
    return host, int(port)


def _name(text: str, entry: str) -> str:
    """A host name or address as listed, in its :func:`canonical` form, or ValueError (a URL or a
    path is not a host)."""
    try:
        return canonical(text)
    except ValueError:
        raise ValueError(f"{entry!r} is not a host name (list names like nas.local, nas.local:8080 or *.example.org,"
                         " no scheme or path)") from None


def not_fetched_line(hosts: list[str]) -> str:
    """The one line an ingest (or ``images --resume``) says about the URLs it did not fetch, one
    host per URL: how many, a few of their hosts, and the setting that lists them."""
    distinct = list(dict.fromkeys(hosts))
    shown = ", ".join(h if len(h) <= 60 else h[:59] + "…" for h in distinct[:3])
    more = f" and {len(distinct) - 3} more host(s)" if len(distinct) > 3 else ""
    return (f"{len(hosts)} image URL(s) not fetched, their hosts ({shown}{more}) not being in {SETTING}: list a host"
            " there to fetch its images, then `mnemoscope images --resume`")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True

"""The hosts a person lets a document's URL name (``image_allow_hosts``), and the check of a host
against them.

A document is content: it must not pick the hosts Mnemoscope contacts. So a URL a document names
(a shared photo's ``img_url``) is fetched only from a host the person listed: an exact name (or
address), or ``*.example.org`` for every subdomain of example.org (not example.org itself: list it
too). A bare ``*``, or a wildcard over a whole top-level domain (``*.com``), would hand the choice
back to the content, so neither is accepted. The list is empty by default: nothing is fetched until
the person says so. Only a host listed by its exact name may resolve to a loopback or private
address (a NAS at home, a test server); a host listed through a wildcard must resolve to public
addresses (:func:`engine.net.public_address`), so that a domain's DNS cannot point a listed
wildcard at the person's own network.

Light on purpose: :mod:`engine.config` checks the setting with it at load time, before any HTTP
library is imported.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal

SETTING = "image_allow_hosts"
_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$")

Listed = Literal["exact", "domain"]


@dataclass(frozen=True)
class HostList:
    """Hosts listed by exact name, and domains (``.example.org``) whose subdomains are listed."""

    exact: frozenset[str] = frozenset()
    domains: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "HostList":
        """The comma list of a setting's value; raises ValueError naming the first bad entry."""
        exact: set[str] = set()
        domains: list[str] = []
        for entry in (e.strip() for e in text.split(",")):
            if not entry:
                continue
            if entry.startswith("*."):
                domain = _name(entry[2:], entry)
                if "." not in domain:
                    raise ValueError(f"{entry!r} would list every host of a top-level domain; name a domain (*.example.org)")
                domains.append("." + domain)
            elif entry == "*":
                raise ValueError("a bare '*' (any host) is not accepted: the content would pick the host; list host names"
                                 " or *.example.org")
            elif "*" in entry:
                raise ValueError(f"{entry!r}: a '*' names subdomains only as '*.' at the start (*.example.org)")
            else:
                exact.add(_name(entry, entry))
        return cls(frozenset(exact), tuple(domains))

    def __bool__(self) -> bool:
        return bool(self.exact or self.domains)

    def match(self, host: str) -> Listed | None:
        """How ``host`` (as a URL names it) is listed: by its exact name, under a listed domain, or not."""
        host = normal(host)
        if host in self.exact:
            return "exact"
        if _is_address(host):  # "*.0.0.1" names no domain of 127.0.0.1
            return None
        return "domain" if any(host.endswith(d) for d in self.domains) else None


def normal(host: str) -> str:
    """A host name as compared: lower case, no trailing dot, an IPv6 address without brackets and
    in its short form."""
    host = host.strip().lower().rstrip(".")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        return host


def _name(text: str, entry: str) -> str:
    """A host name or address as listed, or ValueError (a URL, a port or a path is not a host)."""
    host = normal(text)
    if _is_address(host):
        return host
    if not host or not all(_LABEL.match(label) for label in host.split(".")):
        raise ValueError(f"{entry!r} is not a host name (list names like nas.local or *.example.org, no scheme,"
                         " port or path)")
    return host


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

"""The `Host` check of every local server uxbench starts (`uxbench view`, `human serve`, `judge serve`).

A request's `Host` header must name the server: a page of an attacker's site whose name was re-pointed at
127.0.0.1 (DNS rebinding) reaches the server under the attacker's name, so it is refused before anything is
read. A header that is not a host name or address with an optional port (`127.0.0.1:18721@evil.example.com`,
userinfo, a path, spaces) is refused as malformed, never cut down to a part that passes. Here, not in `web/`,
so that `judge_train/serve.py` (below `web/` in the layers) shares it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from uxbench.errors import ConfigError

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
WILDCARD = {"0.0.0.0", "::", ""}
_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?\.?")
"""A DNS name or an IPv4 address (letters, digits, '-', '_' and dots; a trailing dot allowed)."""
_PORT = re.compile(r"[0-9]{1,5}")


def _ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_name(header: str) -> str | None:
    """The host of a Host header, lower-cased, without port, brackets or a trailing dot; None when the header is
    not `name[:port]` or `[ipv6][:port]`."""
    value = header.strip().lower()
    if value.startswith("["):  # [::1]:8321
        end = value.find("]")
        inner, rest = (value[1:end], value[end + 1:]) if end > 0 else ("", "")
        if not inner or not _ip(inner) or ":" not in inner or (rest and not (
                rest.startswith(":") and _PORT.fullmatch(rest[1:]))):
            return None
        return inner
    name, colon, port = value.partition(":")
    if (colon and not _PORT.fullmatch(port)) or not _NAME.fullmatch(name):
        return None
    return name.rstrip(".")


def allowed_names(values: Iterable[str]) -> list[str]:
    """The --allow-host values, checked: host names, addresses or `*.domain`; `*` alone (every name) is refused,
    since it would switch the check off."""
    out = []
    for raw in values:
        value = raw.strip().lower()
        if not value:
            continue
        if value == "*":
            raise ConfigError(f"--allow-host '{raw}' would let any name reach the server, which is what the Host check "
                              "stops (DNS rebinding). Name each host (--allow-host judge.lan), or `*.example.org` "
                              "for every name under a domain.")
        name = value[2:] if value.startswith("*.") else value.strip("[]")
        if not (_NAME.fullmatch(name) or _ip(name)) or (value.startswith("*.") and "." not in name.strip(".")):
            raise ConfigError(f"--allow-host '{raw}' is not a host name or address (e.g. judge.lan, 192.168.1.5, "
                              "*.example.org); give the name alone, without scheme, port or path.")
        out.append(("*." if value.startswith("*.") else "") + name.rstrip("."))
    return out


class HostCheck:
    """The names a request may use to reach this server: the address it listens on, localhost, 127.0.0.1 and ::1,
    and the names given with --allow-host (`*.example.org` matches any name under example.org). Listening on
    every interface (0.0.0.0), any IP address is accepted as well: a rebinding attack needs a name."""

    def __init__(self, bound: str = "127.0.0.1", allowed: Iterable[str] = ()) -> None:
        self.wildcard = bound in WILDCARD
        names = {*LOOPBACK, *allowed_names(allowed)}
        if not self.wildcard:
            names.add(host_name(bound) or bound.strip("[]").lower())
        self.names = {n for n in names if not n.startswith("*.")}
        self.suffixes = tuple(n[1:] for n in names if n.startswith("*."))

    def allows(self, header: str | None) -> bool:
        if not header:
            return False
        name = host_name(header)
        if name is None:
            return False
        return (name in self.names or (bool(self.suffixes) and name.endswith(self.suffixes))
                or (self.wildcard and _ip(name)))

    def describe(self) -> str:
        shown = sorted(self.names) + [f"*{s}" for s in self.suffixes] + (["any IP address"] if self.wildcard else [])
        return ", ".join(shown)

"""CSRF tokens and host checks.

Every state change is a POST, and every POST carries a token that only a page served by this process can hold:
HMAC(server secret, scope), where the scope is "view" for curation and the annotator's token for the human
study. The secret is random per process, so a token never outlives the server that issued it.

The `Host` header of every request, whatever its method, must name this server (`HostCheck`): a page of an
attacker's site whose name was re-pointed at 127.0.0.1 (DNS rebinding) reaches the server under the
attacker's name, so it is refused before it can read a page or the CSRF token in it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Iterable

from uxbench.errors import UxbenchError

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
WILDCARD = {"0.0.0.0", "::", ""}


class Csrf:
    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    def token(self, scope: str) -> str:
        return hmac.new(self._secret, scope.encode("utf-8"), hashlib.sha256).hexdigest()

    def check(self, scope: str, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(self.token(scope), str(given))


def host_warning(host: str) -> str | None:
    """The warning printed when the server listens beyond this machine."""
    if host in LOOPBACK:
        return None
    return (f"warning: listening on {host}: anyone who can reach this machine can read these runs' conversations"
            " (and, with a study, the annotator pages). There is no login; use 127.0.0.1 unless you mean it.")


def check_port(port: int) -> None:
    if not 0 <= port <= 65535:
        raise UxbenchError(f"--port must be between 0 and 65535, not {port}.")


def _ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_name(header: str) -> str:
    """The host part of a Host header, lower-cased, without port, brackets or a trailing dot."""
    value = header.strip().lower()
    if value.startswith("["):  # [::1]:8321
        value = value[1:value.find("]")] if "]" in value else value[1:]
    elif value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


class HostCheck:
    """The names a request may use to reach this server: the address it listens on, localhost, 127.0.0.1 and ::1,
    and the names given with --allow-host (`*.example.org` matches any name under example.org). Listening on
    every interface (0.0.0.0), any IP address is accepted as well: a rebinding attack needs a name."""

    def __init__(self, bound: str = "127.0.0.1", allowed: Iterable[str] = ()) -> None:
        self.wildcard = bound in WILDCARD
        names = {*LOOPBACK, *(host_name(a) for a in allowed if a.strip())}
        if not self.wildcard:
            names.add(host_name(bound))
        self.names = {n for n in names if not n.startswith("*.")}
        self.suffixes = tuple(n[1:] for n in names if n.startswith("*."))

    def allows(self, header: str | None) -> bool:
        if not header:
            return False
        name = host_name(header)
        return (name in self.names or (bool(self.suffixes) and name.endswith(self.suffixes))
                or (self.wildcard and _ip(name)))

    def describe(self) -> str:
        shown = sorted(self.names) + [f"*{s}" for s in self.suffixes] + (["any IP address"] if self.wildcard else [])
        return ", ".join(shown)

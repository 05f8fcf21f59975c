"""CSRF tokens and host checks.

Every state change is a POST, and every POST carries a token that only a page served by this process can hold:
HMAC(server secret, scope), where the scope is "view" for curation and the annotator's token for the human
study. The secret is random per process, so a token never outlives the server that issued it.

The `Host` header of every request, whatever its method, must name this server (`HostCheck`, from
`uxbench.hostcheck`, which `judge serve` shares): a page of an attacker's site whose name was re-pointed at
127.0.0.1 (DNS rebinding) reaches the server under the attacker's name, so it is refused before it can read a
page or the CSRF token in it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from uxbench.errors import UxbenchError
from uxbench.hostcheck import LOOPBACK, WILDCARD, HostCheck, host_name

__all__ = ["LOOPBACK", "WILDCARD", "Csrf", "HostCheck", "check_port", "host_name", "host_warning"]


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

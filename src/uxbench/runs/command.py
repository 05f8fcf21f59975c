"""The command line of this process, for a run's summary to say which command made it.

`uxbench` (the console script) records its arguments once at start (`set_command`); a run then writes
`command_line()` into its summary's `invocation`, so every run page can show the command that produced it. Secrets
stay out: a `-M/-J/-S KEY=VALUE` argument whose key looks like a credential keeps its key only, URLs lose their
user info, and every secret the process has seen is scrubbed by value (`uxbench.redact`). Inside a library call or
a test runner nothing was recorded and `command_line()` is None.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

_ARG_OPTIONS = frozenset({"-M", "--model-arg", "-J", "--judge-arg", "-S", "--simulator-arg", "--assessor-arg",
                          "--strategy-arg"})
_recorded: list[str] = []


def set_command(argv: Sequence[str]) -> None:
    """Record this process's command line (`["uxbench", "run", ...]`)."""
    _recorded[:] = [str(a) for a in argv]


def _safe(previous: str | None, token: str) -> str:
    """One argument as it may be shown: a provider argument's credential-looking value redacted."""
    from uxbench.redact import redact_args, strip_userinfo  # not at start: every command records its line first

    option, pair = "", token if previous in _ARG_OPTIONS else None
    for name in _ARG_OPTIONS:
        if pair is None and name.startswith("--") and token.startswith(name + "="):
            option, pair = name + "=", token[len(name) + 1:]
    if pair is not None and "=" in pair:
        key, value = pair.split("=", 1)
        return f"{option}{key}={redact_args({key: value}).get(key, value)}"
    return strip_userinfo(token)


def command_line() -> str | None:
    """The recorded command as a shell line, secrets removed; None when none was recorded."""
    if not _recorded:
        return None
    tokens = []
    previous: str | None = None
    for token in _recorded:
        tokens.append(_safe(previous, token))
        previous = token
    from uxbench.redact import scrub

    return scrub(shlex.join(tokens))

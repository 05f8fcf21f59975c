"""The command line a run's summary records (`uxbench.runs.command`): what the console script was given, with
credential-looking provider arguments, URL passwords and remembered secrets removed; nothing when none was
recorded (a library call)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from uxbench.redact import forget_secrets, remember_secret
from uxbench.runs import command


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    command.set_command([])
    yield
    command.set_command([])
    forget_secrets()


def test_nothing_recorded_is_none() -> None:
    assert command.command_line() is None


def test_secrets_never_reach_the_command_line() -> None:
    remember_secret("sk-live-0123456789")
    command.set_command(["uxbench", "run", "--model", "openai:gpt-4o", "-M", "api_key=sk-abcdef123456",
                         "-M", "base_url=http://me:hunter22@host:8000/v1", "--judge-arg=token=tok-9876543",
                         "-J", "extra_headers={\"Authorization\": \"Bearer xyz-secret-1\"}",
                         "--data", "my data.jsonl", "--note", "key sk-live-0123456789 pasted by mistake"])
    line = command.command_line()
    assert line is not None
    for secret in ("sk-abcdef123456", "hunter22", "tok-9876543", "xyz-secret-1", "sk-live-0123456789"):
        assert secret not in line, secret
    assert line.startswith("uxbench run --model openai:gpt-4o -M 'api_key=<redacted>' ")
    assert "-M base_url=http://host:8000/v1" in line and "'my data.jsonl'" in line
    assert "-M max_tokens=64" in (command.set_command(["uxbench", "run", "-M", "max_tokens=64"]) or
                                  command.command_line() or "")

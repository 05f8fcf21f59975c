"""Helpers of the CLI tests: typer's runner on the real `uxbench` app, data and log writers, and a way to
make a path unreadable or unwritable that also holds when the tests run as root."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from uxbench.cli.main import app

NOBODY = 65534


def invoke(*args: str) -> Result:
    """Run `uxbench ARGS` in-process, as a user would (exit code, stdout and stderr apart)."""
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_clean_error(result: Result, *needles: str, code: int = 2) -> None:
    """A refusal as the project promises: the exit code, an `error:` line naming what is wrong, no traceback."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if code == 2:
        assert "error:" in result.stderr or "Error" in result.stderr, result.output
    for needle in needles:
        assert needle in result.output, (needle, result.output)


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def judge_row(cid: str, gold: str, say: str) -> dict[str, Any]:
    """A Task 1 row; the scripted provider answers the `[[SAY:x]]` marker inside the judged reply."""
    return {"cid": cid, "ground_truth": 1 if gold == "good" else -1, "query": f"question {cid}",
            "agent_response_full": f"answer {cid} [[SAY:{say}]]", "scenario": "s1" if cid < "c5" else "s2"}


def judge_rows(n: int = 12) -> list[dict[str, Any]]:
    """Good and bad cases, judged right about two times in three: figures with real confidence intervals."""
    rows = []
    for i in range(n):
        gold = "good" if i % 2 == 0 else "bad"
        other = "bad" if gold == "good" else "good"
        rows.append(judge_row(f"c{i:02d}", gold, gold if i % 3 else other))
    return rows


def turn(cid: str, index: int, content: Any, **extra: Any) -> dict[str, Any]:
    return {"conversation_id": cid, "turn_index": index, "role": "user" if index % 2 == 0 else "assistant",
            "content": content, "created_at": f"2024-05-01T10:00:{index:02d}+00:00", **extra}


def log_rows() -> list[dict[str, Any]]:
    """Two short conversations, one with a complaint."""
    return [
        turn("a", 0, "How do I reset my router?"), turn("a", 1, "Hold the reset button for ten seconds."),
        turn("a", 2, "That is wrong, it did not work at all."), turn("a", 3, "Sorry, try the web page instead."),
        turn("b", 0, "Write a haiku about rain."), turn("b", 1, "Soft rain on the roof / ..."),
        turn("b", 2, "Thanks, lovely!"), turn("b", 3, "Glad you liked it."),
    ]


@contextmanager
def unprivileged() -> Iterator[None]:
    """Permission bits do not stop root: as root, act as `nobody` for the block (effective ids only, so
    root comes back after it); as anyone else, stay who we are."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)

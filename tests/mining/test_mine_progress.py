"""The progress display of the mining stages that ask a model: a bar with an ETA on a terminal, a line per
tenth of the stage in a log."""

from __future__ import annotations

import io

from rich.console import Console

from uxbench.cli.mine_progress import StageBars
from uxbench.mining.pipeline.progress import StageProgress


def feed(bars: StageBars, total: int) -> None:
    with bars:
        for done in range(total + 1):
            bars(StageProgress("07-agents", "sessions", done, total, concurrency=3))


def test_a_log_gets_a_line_per_tenth_with_the_eta() -> None:
    out = io.StringIO()
    feed(StageBars(Console(file=out, force_terminal=False, width=200)), 50)
    lines = out.getvalue().splitlines()
    assert lines[0] == "07-agents: 0/50 sessions, 3 at once"
    assert len(lines) == 11 and lines[-1] == "07-agents: 50/50 sessions, 3 at once"
    assert all(", ETA " in line for line in lines[1:-1])


def test_a_terminal_gets_a_bar() -> None:
    out = io.StringIO()
    feed(StageBars(Console(file=out, force_terminal=True, width=160)), 20)
    text = out.getvalue()
    assert "07-agents (sessions)" in text and "20/20" in text and "ETA" in text and "3 at once" in text


def test_quiet_and_empty_stages_show_nothing() -> None:
    out = io.StringIO()
    feed(StageBars(Console(file=out, force_terminal=False), enabled=False), 5)
    feed(StageBars(Console(file=out, force_terminal=False)), 0)
    assert out.getvalue() == ""

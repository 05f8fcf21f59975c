"""The progress display of `sim run`: sessions done of the total, turns, the running success count, errors."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from uxbench.cli.sim_progress import SimProgress, note_text
from uxbench.sim.run import SimEvent


def test_bar_counts_sessions_and_turns() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=100, force_terminal=False, color_system=None)
    now = [0.0]
    progress = SimProgress(console, clock=lambda: now[0])
    progress(SimEvent("start", 4, 10, turns=20, resumed=4, run_dir=Path("runs/x")))
    now[0] = 3.0
    progress(SimEvent("session", 6, 10, turns=31, successes=1, errors=1))
    assert progress._progress is not None
    table = progress._progress.make_tasks_table(progress._progress.tasks)
    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(table)
    text = out.getvalue()
    assert "sessions" in text and "6/10" in text and "turns 31" in text and "errors 1" in text
    assert "success 1/2" in text
    progress(SimEvent("end", 10, 10))
    assert "resuming: 4 sessions already done" in buf.getvalue()


def test_note_text() -> None:
    assert note_text(SimEvent("session", 5, 9, turns=12, successes=3), 0) == "turns 12 · success 3/5"
    assert note_text(SimEvent("session", 5, 9, turns=12), 5) == "turns 12"

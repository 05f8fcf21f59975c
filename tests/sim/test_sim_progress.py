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


def test_turns_count_while_sessions_run() -> None:
    """The bar's turn count moves with every message, not only when a session ends (a demo session on a slow CPU
    takes minutes)."""
    import dataclasses

    from sim_support import FlakyAssistant, InProcessModel, run

    from uxbench.sim.assess import RulesAssessor
    from uxbench.sim.persona_io import load_personas
    from uxbench.sim.scripted import ScriptedRealiser
    from uxbench.sim.session import Parties, SessionPlan, run_session
    from uxbench.sim.spec import session_seed

    persona = load_personas(["demo"])[0].persona
    seen: list[int] = []
    parties = Parties(InProcessModel(FlakyAssistant([persona]).reply), ScriptedRealiser(), RulesAssessor())
    parties = dataclasses.replace(parties, on_turn=lambda: seen.append(len(seen) + 1))
    plan = SessionPlan("s0", 0, persona, persona.content_hash(), 0, session_seed(0, persona, 0), "structured", 6)
    record = run(run_session(plan, parties))
    assert len(record.turns) > 2 and seen == list(range(1, len(record.turns) + 1))

    buf = io.StringIO()
    progress = SimProgress(Console(file=buf, width=100, force_terminal=False, color_system=None), clock=lambda: 0.0)
    progress(SimEvent("start", 0, 3, run_dir=Path("runs/x")))
    progress(SimEvent("turn", 0, 3, turns=5))
    assert progress._progress is not None
    assert progress._progress.tasks[0].fields["note"] == "turns 5"
    progress(SimEvent("end", 3, 3))


def test_an_in_process_models_reading_and_writing_shows_between_messages() -> None:
    """The embedded model reads its prompts for minutes on a busy CPU before a message ends: the note says so."""
    import logging

    console = Console(file=io.StringIO(), width=120, force_terminal=False, color_system=None)
    progress = SimProgress(console, clock=lambda: 0.0)
    progress(SimEvent("start", 0, 4, turns=0, run_dir=Path("runs/x")))
    gen = logging.getLogger("uxbench.models.generate")
    gen.info("read", extra={"uxbench_prompt": (300, 1200, 4)})
    assert progress._progress is not None

    def note() -> str:
        assert progress._progress is not None
        return str(progress._progress.tasks[0].fields["note"])

    assert note() == "turns 0 · read 300/1,200 prompt tokens"
    progress(SimEvent("turn", 0, 4, turns=1))
    gen.info("written", extra={"uxbench_tokens": (5, 64, 4)})
    assert note() == "turns 1 · 4 replies at 5/64 tokens"
    progress(SimEvent("end", 4, 4))
    assert not gen.handlers and not gen.isEnabledFor(logging.INFO)

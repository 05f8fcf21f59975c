"""Progress of `uxbench sim run` on the terminal: one bar in sessions (counts, elapsed, ETA) with the turns done,
the running success rate and the sessions ended by errors; then a bar for the judge step. Built on the project's
bar display (`cli/progress.py`): the same columns, the same ETA rule, lines above the bar while a model loads, and
an in-process model's prompt tokens read and tokens written between messages."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from uxbench.cli.progress import Clock, LoadLines, TokenTicks, bar_display

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from uxbench.sim.run import SimEvent


def note_text(event: SimEvent, started_done: int) -> str:
    parts = [f"turns {event.turns}"]
    fresh = event.done - started_done
    if event.kind in ("session", "turn") and fresh > 0 and event.successes:
        parts.append(f"success {event.successes}/{fresh}")
    if event.errors:
        parts.append(f"errors {event.errors}")
    return " · ".join(parts)


class SimProgress:
    def __init__(self, console: Console, *, enabled: bool = True, clock: Clock = time.monotonic) -> None:
        self.console = console
        self.enabled = enabled
        self.clock = clock
        self.run_dir: Path | None = None
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._start_done = 0
        self._loads: LoadLines | None = None
        self._ticks: TokenTicks | None = None
        self._note = ""

    def __call__(self, event: SimEvent) -> None:
        if event.kind in ("start", "judge_start"):
            self.stop()
            if event.kind == "start":
                self.run_dir = event.run_dir
                resumed = f" (resuming: {event.resumed} sessions already done)" if event.resumed else ""
                self.console.print(f"[bold]Run directory:[/] {event.run_dir}{resumed}")
            self._start_done = event.done
            if self.enabled:
                self._begin("sessions" if event.kind == "start" else "judged", event)
        elif event.kind == "turn" and self._progress is not None and self._task is not None:
            self._note = note_text(event, self._start_done)
            self._progress.update(self._task, note=self._note)
        elif event.kind in ("session", "judge") and self._progress is not None and self._task is not None:
            self._note = note_text(event, self._start_done) if event.kind == "session" else ""
            self._progress.update(self._task, completed=event.done, eta_at=self.clock(), note=self._note)
        elif event.kind == "end":
            self.stop()

    def _begin(self, label: str, event: SimEvent) -> None:
        import logging

        progress = bar_display(self.console, self.clock, "note")
        progress.start()
        self._task = progress.add_task(label, total=event.total, completed=event.done,
                                       note=f"turns {event.turns}" if label == "sessions" else "",
                                       eta_origin=self.clock(), eta_base=event.done, eta_at=None)
        self._progress = progress
        self._note = f"turns {event.turns}" if label == "sessions" else ""
        if self._loads is None:
            self._loads = LoadLines(self.console, self._restart_pace)
            logger = logging.getLogger("uxbench.models.load")
            logger.addHandler(self._loads)
            logger.setLevel(logging.INFO)
        if self._ticks is None:
            self._ticks = TokenTicks(self._show_activity)
            logger = logging.getLogger("uxbench.models.generate")
            logger.addHandler(self._ticks)
            logger.setLevel(logging.INFO)

    def _show_activity(self, text: str) -> None:
        """Between messages: what an in-process model is doing now, after the running figures."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, note=f"{self._note} · {text}" if self._note else text)

    def _restart_pace(self) -> None:
        if self._progress is not None and self._task is not None:
            task = self._progress.tasks[self._task]
            if task.completed <= task.fields.get("eta_base", 0):
                self._progress.update(self._task, eta_origin=self.clock())

    def stop(self) -> None:
        import logging

        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self._loads is not None:
            logger = logging.getLogger("uxbench.models.load")
            logger.removeHandler(self._loads)
            logger.setLevel(logging.NOTSET)
            self._loads = None
        if self._ticks is not None:
            logger = logging.getLogger("uxbench.models.generate")
            logger.removeHandler(self._ticks)
            logger.setLevel(logging.NOTSET)
            self._ticks = None

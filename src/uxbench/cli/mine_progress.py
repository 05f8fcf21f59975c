"""Progress of the mining stages that ask a model: done/total, elapsed, ETA and the concurrency the limiter
settled on, on stderr. A terminal gets a rich progress bar per stage; a log file or pipe gets a plain line
at every tenth of the stage (and at least once a minute), with the same figures. The ETA is the one of
`uxbench run` (`cli.progress.EtaColumn`): the average pace of this session's items since the stage's first
event, so a resumed stage's earlier items do not make it look fast."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from uxbench.cli.progress import Clock, bar_display, eta_text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from uxbench.mining.pipeline.progress import StageProgress


class StageBars:
    """A `StageTick` that draws a rich progress bar per stage. Use as a context manager."""

    def __init__(self, console: Console, *, enabled: bool = True, clock: Clock = time.monotonic) -> None:
        self.console = console
        self.enabled = enabled
        self.clock = clock
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self._lines: dict[str, tuple[float, int, float, int]] = {}
        """Per stage without a terminal: (start time, done then, last line time, last tenth printed)."""

    def __call__(self, event: StageProgress) -> None:
        if not self.enabled or event.total == 0:
            return
        if not self.console.is_terminal:
            self._line(event)
            return
        progress = self._progress or self._start()
        limit = f"{event.concurrency} at once" if event.concurrency is not None else ""
        if event.detail:
            limit = f"{limit}; calls: {event.detail}" if limit else f"calls: {event.detail}"
        task = self._tasks.get(event.stage)
        if task is None:
            task = progress.add_task(f"{event.stage} ({event.unit})", total=event.total, completed=event.done,
                                     limit=limit, eta_origin=self.clock(), eta_base=event.done, eta_at=None)
            self._tasks[event.stage] = task
        progress.update(task, completed=event.done, limit=limit, eta_at=self.clock())

    def _line(self, event: StageProgress) -> None:
        now = self.clock()
        start, base, last, tenth = self._lines.setdefault(event.stage, (now, event.done, now, -1))
        current = event.done * 10 // event.total
        if current == tenth and now - last < (60 if event.detail is None else 15):
            return  # the agents stage's calls change within a session: a line every 15 s at the least
        self._lines[event.stage] = (start, base, now, current)
        eta = ""
        if event.done < event.total:
            text = eta_text({"eta_origin": start, "eta_base": base, "eta_at": now}, event.done, event.total, now)
            eta = "" if text == "…" else f", ETA {text}"
        limit = f", {event.concurrency} at once" if event.concurrency is not None else ""
        calls = f"; calls: {event.detail}" if event.detail else ""
        self.console.print(f"{event.stage}: {event.done}/{event.total} {event.unit}{limit}{eta}{calls}",
                           highlight=False, markup=False)

    def _start(self) -> Progress:
        progress = bar_display(self.console, self.clock, "limit")
        progress.start()
        self._progress = progress
        return progress

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __enter__(self) -> StageBars:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

"""Progress of long runs on the terminal: a line before and after a model loads, then a bar per step with
done/total, elapsed time, an ETA and the running accuracy per gold class.

The ETA is the average pace since the step started (or since its model finished loading) times what is left,
counted down between updates. rich's own estimate uses the speed over the last 30 seconds: with slow samples
that finish in bursts (a batch of eight after a minute) it shows -:--:-- for minutes, then a few seconds with
minutes to go. A resumed step's bar starts at the samples already done, and only this session's samples set
the pace.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.progress import ProgressColumn
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, Task, TaskID

    from uxbench.orchestrate.runner import ProgressEvent

Clock = Callable[[], float]
BAR_WIDTH = 20
"""Narrow enough that the whole line (counts, times, accuracy per class) fits 80 columns."""
_LOAD_LOGGER = "uxbench.models.load"
_GENERATE_LOGGER = "uxbench.models.generate"


def clock_text(seconds: float) -> str:
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


class EtaColumn(ProgressColumn):
    """`ETA 0:04:10` from the task's fields `eta_origin` (when the pace clock started), `eta_base` (done at that
    moment) and `eta_at` (the time of the last update): (elapsed / finished since) x remaining, less the time
    since that update. `ETA …` until something has finished."""

    def __init__(self, clock: Clock, table_column: Any = None) -> None:
        super().__init__(table_column=table_column)
        self.clock = clock

    def render(self, task: Task) -> Text:
        text = eta_text(task.fields, task.completed, task.total, self.clock())
        return Text("ETA " + text, style="progress.remaining")


def eta_text(fields: dict[str, Any], completed: float, total: float | None, now: float) -> str:
    """The ETA cell: H:MM:SS, `…` before the first sample of this session finishes, `0:00:00` when done."""
    if total is not None and completed >= total:
        return clock_text(0)
    finished = completed - float(fields.get("eta_base", 0))
    origin, updated = fields.get("eta_origin"), fields.get("eta_at")
    if finished <= 0 or origin is None or updated is None or total is None:
        return "…"
    pace = max(0.0, float(updated) - float(origin)) / finished
    return clock_text(pace * (total - completed) - (now - float(updated)))


def metric_text(event: ProgressEvent) -> str:
    """The running figure: per gold class when the task has classes (`acc good 8/10 bad 3/5`, and Avg-Acc once
    both are seen), else the overall value. Data ordered by class would otherwise show a confident figure made
    of one class only."""
    by_class = event.metric_by_class
    if by_class:
        parts = [f"{name} {hits}/{n}" for name, (hits, n) in sorted(by_class.items(), reverse=True)]
        text = f"{event.metric_name} " + " ".join(parts)
        rates = [hits / n for hits, n in by_class.values() if n]
        if len(rates) >= 2:
            text += f" (avg {sum(rates) / len(rates):.2f})"
        return text
    if event.metric_value is None:
        return ""
    return f"{event.metric_name} {event.metric_value:.3f}"


class LoadLines(logging.Handler):
    """Prints the model-load log records (`uxbench.models.load`) as lines above the bar, with the time, and
    tells its owner when a load finished (the pace clock restarts there)."""

    def __init__(self, console: Console, on_loaded: Callable[[], None]) -> None:
        super().__init__(logging.INFO)
        self.console = console
        self.on_loaded = on_loaded

    def emit(self, record: logging.LogRecord) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        self.console.print(f"[dim]{stamp}[/] {record.getMessage()}", highlight=False)
        if getattr(record, "uxbench_load", None) == "done":
            self.on_loaded()


def bar_display(console: Console, clock: Clock, note_field: str) -> Progress:
    """A rich Progress whose figures (counts, times, ETA) never wrap or get cut: the bar takes what is left of
    the line, and the note (task field `note_field`: the accuracy, the concurrency) wraps under itself when
    the terminal is narrow."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Column

    def fixed() -> Column:
        return Column(no_wrap=True)

    return Progress(
        TextColumn("[bold]{task.description}", table_column=fixed()),
        BarColumn(bar_width=BAR_WIDTH, table_column=Column(min_width=4, max_width=BAR_WIDTH)),
        MofNCompleteColumn(table_column=fixed()), TimeElapsedColumn(table_column=fixed()),
        EtaColumn(clock, table_column=fixed()),
        TextColumn(f"{{task.fields[{note_field}]}}", table_column=Column(overflow="fold")),
        console=console, transient=False, get_time=clock,
    )


class TokenTicks(logging.Handler):
    """Shows an in-process model's prompt tokens as they are read, then its tokens as they are written
    (`uxbench.models.generate` records), in the bar's note: a batch on a CPU can take minutes before its first
    sample finishes."""

    def __init__(self, show: Callable[[str], None]) -> None:
        super().__init__(logging.INFO)
        self.show = show

    def emit(self, record: logging.LogRecord) -> None:
        ticks = getattr(record, "uxbench_tokens", None)
        if ticks is not None:
            done, cap, batch = ticks
            self.show(f"{batch} {'reply' if batch == 1 else 'replies'} at {done}/{cap} tokens")  # fits 80 columns
        read = getattr(record, "uxbench_prompt", None)
        if read is not None:
            done, total, batch = read
            self.show(f"read {done:,}/{total:,} prompt tokens")  # of the batch's prompts; fits 80 columns


class RichProgress:
    def __init__(self, console: Console, *, enabled: bool = True, clock: Clock = time.monotonic) -> None:
        self.console = console
        self.enabled = enabled
        self.clock = clock
        self.run_dir: Path | None = None
        self._progress: Progress | None = None
        self._task_id: TaskID | None = None
        self._loads: LoadLines | None = None
        self._ticks: TokenTicks | None = None
        self._metric = ""

    def __call__(self, event: ProgressEvent) -> None:
        if event.kind == "start":
            self.stop()  # the previous phase's bar
            self.run_dir = event.run_dir
            resumed = f" (resuming: {event.resumed} already done)" if event.resumed else ""
            if event.phase == "generate":
                self.console.print(f"[bold]Run directory:[/] {event.run_dir}{resumed}")
            elif resumed:
                step = "Labelling strategies" if event.phase == "strategy" else "Scoring"
                self.console.print(f"[bold]{step}{resumed}[/]")
            if self.enabled:
                self._start(event)
        elif event.kind == "sample" and self._progress is not None and self._task_id is not None:
            self._metric = metric_text(event)
            self._progress.update(self._task_id, completed=event.done, total=event.total, metric=self._metric,
                                  eta_at=self.clock())
        elif event.kind == "end":
            self.stop()
        elif event.kind == "note":
            self.console.print(f"[yellow]Note:[/] {event.message}", highlight=False)

    def _start(self, event: ProgressEvent) -> None:
        progress = bar_display(self.console, self.clock, "metric")
        progress.start()
        self._metric = ""
        label = {"score": "scores", "strategy": "strategy labels"}.get(event.phase, "samples")
        self._task_id = progress.add_task(label, total=event.total, completed=event.done, metric="",
                                          eta_origin=self.clock(), eta_base=event.done, eta_at=None)
        self._progress = progress
        self._listen_for_loads()

    def _listen_for_loads(self) -> None:
        if self._loads is None:
            self._loads = LoadLines(self.console, self._restart_pace)
            logger = logging.getLogger(_LOAD_LOGGER)
            logger.addHandler(self._loads)
            logger.setLevel(logging.INFO)
        if self._ticks is None:
            self._ticks = TokenTicks(self._show_activity)
            logger = logging.getLogger(_GENERATE_LOGGER)
            logger.addHandler(self._ticks)
            logger.setLevel(logging.INFO)

    def _show_activity(self, text: str) -> None:
        """Between finished samples: what the model is doing now, after the running figure."""
        if self._progress is not None and self._task_id is not None:
            self._progress.update(self._task_id, metric=f"{self._metric} · {text}" if self._metric else text)

    def _restart_pace(self) -> None:
        """A model finished loading: the step's pace counts from now (loading is not the samples' time)."""
        if self._progress is not None and self._task_id is not None:
            task = self._progress.tasks[self._task_id]
            if task.completed <= task.fields.get("eta_base", 0):
                self._progress.update(self._task_id, eta_origin=self.clock())

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self._loads is not None:
            logger = logging.getLogger(_LOAD_LOGGER)
            logger.removeHandler(self._loads)
            logger.setLevel(logging.NOTSET)
            self._loads = None
        if self._ticks is not None:
            logger = logging.getLogger(_GENERATE_LOGGER)
            logger.removeHandler(self._ticks)
            logger.setLevel(logging.NOTSET)
            self._ticks = None

    def render(self) -> str:
        """The bar as text (for tests and logs)."""
        if self._progress is None:
            return ""
        import io

        from rich.console import Console

        buf = io.StringIO()
        Console(file=buf, width=self.console.width, color_system=None).print(
            self._progress.make_tasks_table(self._progress.tasks))
        return buf.getvalue()

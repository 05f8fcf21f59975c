"""Progress bar for long runs: done/total, ETA and the running accuracy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from uxbench.orchestrate.runner import ProgressEvent


class RichProgress:
    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self.console = console
        self.enabled = enabled
        self.run_dir: Path | None = None
        self._progress: Progress | None = None
        self._task_id: TaskID | None = None

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
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    Progress,
                    TextColumn,
                    TimeElapsedColumn,
                    TimeRemainingColumn,
                )

                progress = Progress(
                    TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    TextColumn("{task.fields[metric]}"), console=self.console, transient=False,
                )
                progress.start()
                label = {"score": "scores", "strategy": "strategy labels"}.get(event.phase, "samples")
                self._task_id = progress.add_task(label, total=event.total, completed=event.done, metric="")
                self._progress = progress
        elif event.kind == "sample" and self._progress is not None and self._task_id is not None:
            metric = f"{event.metric_name} {event.metric_value:.3f}" if event.metric_value is not None else ""
            self._progress.update(self._task_id, completed=event.done, metric=metric)
        elif event.kind == "end":
            self.stop()

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

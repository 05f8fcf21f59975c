"""Progress events the runner emits, and the guard that stops a step whose calls all fail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from uxbench.errors import UxbenchError

ABORT_AFTER_ERRORS = 8
"""Stop a step whose first this-many samples all failed (nothing has worked: likely a configuration error)."""


class RunAborted(UxbenchError):
    """The run was stopped early because every sample so far failed."""


@dataclass
class ProgressEvent:
    kind: str  # "start" | "sample" | "end" | "note"
    done: int
    total: int
    metric_name: str = ""
    metric_value: float | None = None
    run_dir: Path | None = None
    resumed: int = 0
    phase: str = "generate"
    """generate (the model under test) or score (the judge)."""
    metric_by_class: dict[str, tuple[int, int]] | None = None
    """Per gold class: (hits, counted) behind `metric_value`, so a display can show each class (data ordered
    by class makes the overall figure swing) or wait until both are seen."""
    message: str = ""
    """A "note" event's text: something the user should know about the run (shown even with --quiet)."""


def note(message: str) -> ProgressEvent:
    return ProgressEvent("note", 0, 0, message=message)


ProgressFn = Callable[[ProgressEvent], None]


class FailureGuard:
    """Counts a step's outcomes; raises `RunAborted` when the first `ABORT_AFTER_ERRORS` all failed."""

    def __init__(self, what: str, where: Path | None, hint: str, *, kept: str | None = None) -> None:
        """`where`: the directory that keeps the finished samples, or None when the run leaves none (a new
        directory is removed when a run stops before any sample finished). `kept`: what is kept and how to go
        on, when the sentence about samples does not fit (a judge pass over a finished run)."""
        self.what = what
        self.where = where
        self.hint = hint
        self.kept = kept
        self.ok = 0
        self.errors = 0
        self.first_errors: list[str] = []

    def success(self) -> None:
        self.ok += 1

    def failure(self, message: str | None) -> None:
        self.errors += 1
        message = message or "unknown error"
        if len(self.first_errors) < 3 and message not in self.first_errors:
            self.first_errors.append(message)
        if self.ok == 0 and self.errors >= ABORT_AFTER_ERRORS:
            # Nothing has worked yet: a wrong base URL, key or model name. Stop instead of spending retries on
            # every remaining sample.
            kept = self.kept or (
                f"finished samples are saved in {self.where}, and rerunning the same command retries the failed ones"
                if self.where is not None else "nothing was kept, so fix it and run the same command again")
            raise RunAborted(
                f"The first {self.errors} {self.what} all failed, so the run was stopped. First error: "
                f"{self.first_errors[0].rstrip('.')}. {self.hint}; {kept}."
            )

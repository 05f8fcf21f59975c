"""A conversation longer than the model under test accepts (`ContextLengthError`, HTTP 400 "maximum context
length" and the like) is a permanent outcome, not a failure to retry: the sample is recorded as `too_long` and
counted apart. With `fit_history` the task first drops the conversation's oldest history messages until the
request fits: half of the history is kept, then half of that, down to none (the judge's own shortening of
`scoring/shorten.py` also drops the oldest turns first), and the record says what was cut."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from uxbench.data.schema import AnyCase
from uxbench.errors import ContextLengthError

T = TypeVar("T")

IDENTITY_OPTIONAL: dict[str, Any] = {"fit_history": False}
"""Task options that enter the run identity only when set, so that runs made before they existed keep their id."""


def identity_options(options: Any) -> dict[str, Any]:
    """`options.model_dump(mode="json")` without the optional keys left at their "absent" value."""
    dumped: dict[str, Any] = options.model_dump(mode="json")
    return {k: v for k, v in dumped.items() if not (k in IDENTITY_OPTIONAL and v == IDENTITY_OPTIONAL[k])}


async def fitted(case: AnyCase, call: Callable[[AnyCase], Awaitable[T]], *, enabled: bool
                 ) -> tuple[T, dict[str, int] | None]:
    """`call(case)`; on a context-length error and `enabled`, `call` again on the case with fewer history
    messages (oldest dropped first) until it fits. Returns (the result, what was cut or None). Raises the last
    `ContextLengthError` when even the case without history is too long, or when not enabled."""
    try:
        return await call(case), None
    except ContextLengthError as err:
        if not enabled:
            raise
        if not case.history:
            raise _still_too_long(err, case, 0) from None
    history = list(case.history)
    keep, attempts = len(history) // 2, 1
    while True:
        attempts += 1
        shorter = case.model_copy(update={"history": history[len(history) - keep:] if keep else []})
        try:
            result = await call(shorter)
        except ContextLengthError as err:
            if keep == 0:
                raise _still_too_long(err, shorter, len(history)) from None
            keep //= 2
            continue
        return result, {"history_messages": len(history), "kept_messages": keep,
                        "dropped_messages": len(history) - keep, "attempts": attempts}


def _still_too_long(err: ContextLengthError, shortest: AnyCase, dropped: int) -> ContextLengthError:
    """The error of a case too long even in its shortest form, saying so and how long that form was."""
    chars = sum(len(str(getattr(shortest, f, None) or "")) for f in ("query", "response", "failed_response",
                                                                        "complaint"))
    gone = f"with all {dropped} history messages dropped" if dropped else "with no history to drop"
    return ContextLengthError(f"{err} [--fit-history: {gone}, the shortest request was still too long; the case's "
                              f"own text in it: {chars:,} characters, the rest is the prompt around it]",
                              status=err.status)


def too_long_text(err: ContextLengthError) -> str:
    return f"{type(err).__name__}: {err}"

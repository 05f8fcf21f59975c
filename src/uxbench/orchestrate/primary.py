"""Which judge is a Task 2/3 run's primary judge: the one its headline figure, `report` and `leaderboard` use.

One rule for `uxbench run --judge J` and `uxbench score RUN --judge J`: the first judge to score a run becomes
its primary judge; a later judge adds its scores beside it and the primary judge stays, unless `--primary` asks
to make the new judge primary (`--no-primary`: never). Whenever the choice is not the obvious one (a run that
already has another primary judge), a note says what happened, since it decides how the run is ranked.
"""

from __future__ import annotations

from typing import Any


def choose_primary(manifest: dict[str, Any], key: str, spec: str, make_primary: bool | None,
                   scored: set[str]) -> tuple[str | None, str | None]:
    """(the run's primary judge key after judge `key` scores it, a note for the user or None). `scored`: the
    judges with scores in the run; a primary judge without any (its scoring failed at once) does not count."""
    current = manifest.get("primary_judge")
    if current not in scored:
        current = None
    if current == key:
        return key, None
    current_spec = ((manifest.get("judges") or {}).get(current) or {}).get("spec", current)
    if make_primary:
        if current:
            return key, (f"{spec} is now this run's primary judge, in place of {current_spec}: `uxbench report` and "
                         "`uxbench leaderboard` show and rank the run by its scores.")
        return key, None
    if current:
        return current, (f"{spec} scores this run beside its primary judge {current_spec}, which stays primary: "
                         "`uxbench leaderboard` ranks the run by it (add --primary to rank by "
                         f"{spec}, or `uxbench leaderboard --judge {spec}`).")
    if make_primary is None:
        return key, None
    return None, f"{spec} scores this run but is not its primary judge (--no-primary); the run has none yet."

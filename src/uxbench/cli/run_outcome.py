"""What the end of `uxbench run` says about the samples that did not give a figure: how many, where they are
counted (Task 1 leaves them out of its figures; Tasks 2/3 count them as not good among all cases and leave
them out of the scored-only figures), and what a rerun can do about them."""

from __future__ import annotations

from typing import Any

_RATES = {"good_pct": "Good %", "recovery_rate": "Recovery Rate"}


def outcome_lines(summary: dict[str, Any], score_failures: int, *, fit_history: bool = False
                  ) -> tuple[list[str], bool]:
    """(lines to print, whether anything failed that a rerun retries). `score_failures`: failed judge scores and
    strategy labels; `fit_history`: --fit-history was given (a conversation too long even then is one whose
    shortest form did not fit)."""
    n = int(summary.get("n_selected") or summary.get("n_samples") or 0)
    errors = int(summary.get("n_errors") or 0)
    too_long = int(summary.get("n_too_long") or 0)
    cut = int(summary.get("n_history_cut") or 0)
    task1 = summary.get("task") == "judge"
    rate = _RATES.get(str(summary.get("rate_name")), "Good %")
    where = ("they are left out of the figures" if task1 else
             f"each counts as not good in the {rate} of all {n} cases and is left out of the {rate} of the scored "
             "replies")
    lines: list[str] = []
    skipped = summary.get("skipped_rows") or {}
    if skipped.get("count"):
        listed = f": {summary.get('run_dir')}/{skipped['listed_in']}" if skipped.get("listed_in") else ""
        lines.append(f"[yellow]{skipped['count']} invalid rows were skipped[/] (--skip-invalid); the figures are of "
                     f"the {n} cases that ran. Each skipped row with its file, line and reason{listed}")
    if errors or score_failures:
        first = (summary.get("errors") or [None])[0]
        what = [f"{errors} of {n} samples failed"] if errors else []
        what += [f"{score_failures} scores failed"] if score_failures else []
        lines.append("[red]" + " and ".join(what) + f"[/]: {where}" + (f"; first error: {first}" if first else "")
                     + ". Rerun the same command to retry them.")
    if too_long:
        first = (summary.get("too_long_errors") or [None])[0]
        fix = ("Even with --fit-history they did not fit: the shortest request (every history message dropped) was "
               "still too long, so the model's context is too small for them (use a model with a longer context)"
               if fit_history else "Rerun with --fit-history to drop their oldest history messages until they fit "
               "(what was cut is recorded per sample)")
        lines.append(
            f"[yellow]{too_long} of {n} conversations are longer than the model accepts[/]: recorded as too long "
            f"and never retried; {where}. {fix}" + (f". First: {first}" if first else "") + ".")
    if cut:
        lines.append(f"{cut} conversations were shortened to fit the model (oldest history messages dropped; "
                     "extra.history_cut of each sample in samples.jsonl says how many).")
    return lines, bool(errors or score_failures)

"""A judge's error rates from a Task 1 run of that judge, and the judge-corrected Good% they give.

A Task 2/3 judge is calibrated by a Task 1 run (`uxbench run --task judge --model JUDGE`) on replies with real
users' labels, under the same protocol: the GRM protocol (binary, zero-shot, verdict from log-probabilities) for a
`grm` judge, the same binary template and strategy with a written verdict for a `pointwise` one. The run's
sensitivity (liked replies called good) and specificity (disliked replies called bad) over its answered cases go
into `metrics.judge_correction.corrected_rate`. A GRM judge with another threshold than the Task 1 run's 0.5 is
calibrated by re-reading the Task 1 probabilities at that threshold.

The identity check: a different model, protocol, formulation or strategy is an error (the rates would measure
another judge); different templates, language, provider arguments or sampling settings are warnings.

The counts (not the path) are kept in the run's manifest under `calibrations`, so the summary can be recomputed
anywhere; `uxbench report / leaderboard --calibration` compute the same figures without writing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError, UxbenchError
from uxbench.metrics.judge_correction import corrected_rate, rescaled
from uxbench.runs.store import MANIFEST, SUMMARY, RunStore

TASK1_THRESHOLD = 0.5
"""The p(good) threshold of a Task 1 run's probability verdicts."""
FEW_CALIBRATION_CASES = 30


@dataclass
class CalibrationRun:
    """A finished Task 1 run read for calibration: its identity and (gold, prediction, p(good)) per case."""

    path: Path
    run_id: str
    model: str
    model_args: dict[str, Any]
    task_config: dict[str, Any]
    template_hashes: dict[str, str]
    data: str
    demo: bool
    verdicts: list[tuple[str, str | None, float | None]] = field(default_factory=list)


def load_calibration_run(path: str | Path) -> CalibrationRun:
    """Read a finished Task 1 run directory; a clear error for anything else."""
    where = Path(path)
    if not (where / MANIFEST).is_file():
        raise UxbenchError(f"--calibration {where}: not a run directory (no {MANIFEST}). Pass the directory of a "
                           "Task 1 run of the judge: uxbench run --task judge --model JUDGE --data LABELLED_DATA.")
    store = RunStore.open_existing(where)
    try:
        manifest = store.read_manifest() or {}
        if manifest.get("task") != "judge":
            raise ConfigError(f"--calibration {where} is a {manifest.get('task')!r} run; a calibration is a Task 1 "
                              "(judge) run of the judge, on replies with real users' labels.")
        if not (where / SUMMARY).is_file():
            raise UxbenchError(f"--calibration {where} has not finished (no {SUMMARY}): rerun its `uxbench run` "
                               "command to finish it.")
        model = manifest.get("model") if isinstance(manifest.get("model"), dict) else {}
        data = manifest.get("data") if isinstance(manifest.get("data"), dict) else {}
        run = CalibrationRun(
            path=store.path, run_id=str(manifest.get("run_id") or where.name), model=str((model or {}).get("spec")),
            model_args=dict((model or {}).get("args") or {}), task_config=dict(manifest.get("task_config") or {}),
            template_hashes=dict(manifest.get("template_hashes") or {}),
            data=str((data or {}).get("description") or (data or {}).get("source") or ""),
            demo=bool((data or {}).get("demo")),
        )
        for rec in store.iter_records(store.read_selection()):
            if rec.gold in ("good", "bad"):
                prediction = rec.prediction if rec.status == "ok" else None
                run.verdicts.append((str(rec.gold), prediction, rec.score if rec.status == "ok" else None))
    finally:
        store.close()
    if not run.verdicts:
        raise UxbenchError(f"--calibration {where} holds no case with a good/bad label.")
    return run


def _protocol_errors(info: dict[str, Any], cal: CalibrationRun) -> list[str]:
    cfg, settings = cal.task_config, dict(info.get("settings") or {})
    mode = str(info.get("mode") or settings.get("mode") or "")
    errors = []
    if str(info.get("spec")) != cal.model:
        errors.append(f"it measured {cal.model}, but the judge is {info.get('spec')}")
    if cfg.get("formulation", "binary") != "binary":
        errors.append(f"its formulation is {cfg.get('formulation')}, the judges of Tasks 2/3 answer good / bad")
    verdict_from = cfg.get("verdict_from", "text")
    if mode == "grm":
        if verdict_from != "logprobs" or cfg.get("strategy", "zero_shot") != "zero_shot":
            errors.append("the judge uses the GRM protocol (a zero-shot verdict read from log-probabilities), the "
                          f"Task 1 run {cfg.get('strategy')} with verdicts from {verdict_from}: rerun it with "
                          "--strategy zero_shot --verdict-from logprobs")
    elif mode == "pointwise":
        if verdict_from != "text":
            errors.append("the judge writes its verdict (pointwise), the Task 1 run read it from log-probabilities: "
                          "rerun it with --verdict-from text")
        if cfg.get("strategy", "zero_shot") != settings.get("strategy", "zero_shot"):
            errors.append(f"the judge's strategy is {settings.get('strategy')}, the Task 1 run's "
                          f"{cfg.get('strategy')}: rerun it with --strategy {settings.get('strategy')}")
    else:
        errors.append(f"the judge's mode {mode!r} is unknown")
    return errors


def _protocol_warnings(info: dict[str, Any], cal: CalibrationRun) -> list[str]:
    cfg, settings = cal.task_config, dict(info.get("settings") or {})
    warnings = []
    if (settings.get("lang") or "auto") != (cfg.get("lang") or "auto"):
        warnings.append(f"template language {settings.get('lang')} (judge) vs {cfg.get('lang')} (calibration)")
    mine, theirs = dict(info.get("template_hashes") or {}), cal.template_hashes
    changed = sorted(k for k in set(mine) & set(theirs) if mine[k] != theirs[k])
    if changed or not set(mine) & set(theirs):
        warnings.append("the judge templates differ from the calibration run's"
                        + (f" ({', '.join(changed)})" if changed else " (no template in common)"))
    args, cal_args = dict(info.get("args") or {}), cal.model_args
    differ = sorted(k for k in set(args) | set(cal_args) if args.get(k) != cal_args.get(k))
    if differ:
        warnings.append(f"provider arguments differ ({', '.join(differ)})")
    if info.get("mode") == "pointwise":
        for key in ("temperature", "max_tokens", "reasoning_effort"):
            if settings.get(key) != cfg.get(key):
                warnings.append(f"{key} {settings.get(key)} (judge) vs {cfg.get(key)} (calibration)")
    if cal.demo:
        warnings.append("the calibration run used the bundled demo set, not real users' labels")
    return warnings


def calibration_record(info: dict[str, Any], cal: CalibrationRun, *, where: str = "--calibration") -> dict[str, Any]:
    """What the manifest keeps of a judge's calibration: the source, the counts at the judge's threshold, and the
    identity warnings. Raises ConfigError when the Task 1 run measured another judge or protocol."""
    errors = _protocol_errors(info, cal)
    if errors:
        raise ConfigError(f"{where} {cal.path} cannot calibrate the judge {info.get('spec')}: " + "; ".join(errors)
                          + ".")
    warnings = _protocol_warnings(info, cal)
    threshold = float((info.get("settings") or {}).get("threshold", TASK1_THRESHOLD)) \
        if info.get("mode") == "grm" else None
    reread = threshold is not None and threshold != TASK1_THRESHOLD
    counts = {"good_hits": 0, "good_n": 0, "bad_hits": 0, "bad_n": 0}
    n_text = 0
    for gold, prediction, score in cal.verdicts:
        if reread and score is not None:
            prediction = "good" if score >= (threshold or 0.0) else "bad"
        elif reread:
            n_text += prediction is not None
        if prediction is None:
            continue  # unanswered: the scored-only rates leave it out, as Tasks 2/3 leave out unscorable replies
        counts[f"{gold}_n"] += 1
        counts[f"{gold}_hits"] += prediction == gold
    if reread:
        warnings.append(f"verdicts re-read at the judge's threshold {threshold:g} from the Task 1 probabilities"
                        + (f" ({n_text} read from the text kept as they were)" if n_text else ""))
    few = [w for w, n in (("liked", counts["good_n"]), ("disliked", counts["bad_n"])) if n < FEW_CALIBRATION_CASES]
    if few:
        warnings.append(f"few calibration cases ({counts['good_n']} liked, {counts['bad_n']} disliked): wide "
                        "intervals")
    return {"source": str(cal.path), "run_id": cal.run_id, "model": cal.model, "data": cal.data, "demo": cal.demo,
            "threshold": threshold, "counts": counts, "warnings": warnings}


def corrected_block(metrics: dict[str, Any], record: dict[str, Any], confidence: float = 0.95) -> dict[str, Any]:
    """The judge-corrected rates beside a judge's `good_rate_metrics`: of the scored replies, and of all cases
    (the scored-only estimate times the scored share: a case without a verdict counts as not good)."""
    c = record["counts"]
    n_scored, n_good, n_cases = int(metrics.get("n_scored") or 0), int(metrics.get("n_good") or 0), \
        int(metrics.get("n_cases") or 0)
    scored = corrected_rate(n_good, n_scored, good_hits=c["good_hits"], good_n=c["good_n"], bad_hits=c["bad_hits"],
                            bad_n=c["bad_n"], confidence=confidence)
    share = n_scored / n_cases if n_cases else 0.0
    return {"scored_only": scored, "all_cases": rescaled(scored, share), "calibration": record}


def attach_corrections(summary: dict[str, Any], records: dict[str, dict[str, Any]] | None) -> None:
    """Add `corrected` to every judge of a Task 2/3 summary that has a calibration record."""
    for key, judge in (summary.get("judges") or {}).items():
        record = (records or {}).get(key)
        if record is not None and isinstance(judge.get("metrics"), dict):
            judge["corrected"] = corrected_block(judge["metrics"], record)


def calibrations_in_manifest(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = manifest.get("calibrations")
    return dict(found) if isinstance(found, dict) else {}


def calibrate_judges(judges: dict[str, dict[str, Any]], runs: list[CalibrationRun], *, only: str | None = None,
                     ) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Calibration records for the judges (key -> info) that one of `runs` measured (same model spec), and
    notes for those none did. `only`: calibrate that judge key alone."""
    records: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for key, info in judges.items():
        if only is not None and key != only:
            continue
        matching = [r for r in runs if r.model == str(info.get("spec"))]
        if not matching:
            continue
        records[key] = calibration_record(info, matching[-1])
    if only is not None and only not in records:
        specs = ", ".join(sorted({r.model for r in runs}))
        notes.append(f"no calibration run measured the judge {judges.get(only, {}).get('spec')} (given: {specs})")
    return records, notes

"""`uxbench judge eval`: a judge on Task 1 data, through the same runner as `uxbench run --task judge
--verdict-from logprobs`, then agreement with a reference judge and a paired test against another judge.

Each judge runs as a normal Task 1 run (its run directory is kept, resumable and reportable). The figures of
the judge come from that run's summary (Avg-Acc, Good-Acc, Bad-Acc with CIs; ECE and Brier of p(good));
agreement (Cohen's kappa) and the paired test (paired stratified bootstrap of the Avg-Acc difference, and
McNemar's test) pair the runs' verdicts case by case.

The baseline: a TF-IDF + logistic regression (`uxbench.judge_train.baseline`) trained on the judge's own
training rows (`DIR/train.jsonl` of a judge `uxbench judge train` wrote, or `--baseline-train`), with the
judge's class weights and prior when its `model.json` states them, scored on the same cases and paired with
the judge's verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uxbench.data import user_files
from uxbench.errors import DataError
from uxbench.orchestrate.progress import ProgressFn


@dataclass
class JudgeRun:
    spec: str
    run_dir: Path
    summary: dict[str, Any]
    verdicts: dict[str, tuple[str, str | None, float | None]]
    """case id -> (gold, verdict or None, p(good) or None)."""


async def run_judge(spec: str, args: dict[str, str], data: str, *, runs_root: Path, n_boot: int, seed: int,
                    concurrency: int | None = None, skip_invalid: bool = False,
                    progress: ProgressFn | None = None) -> JudgeRun:
    from uxbench.orchestrate.runner import execute
    from uxbench.orchestrate.spec import RunSpec
    from uxbench.runs.store import RunStore
    from uxbench.tasks.base import SummaryOptions

    run = RunSpec(task="judge", model=spec, model_args=args, data=data, runs_root=runs_root,
                  concurrency=concurrency, task_options={"verdict_from": "logprobs"},
                  summary=SummaryOptions(n_boot=n_boot, seed=seed), skip_invalid=skip_invalid)
    result = await execute(run, progress=progress)
    verdicts: dict[str, tuple[str, str | None, float | None]] = {}
    with RunStore.open_existing(result.run_dir) as store:
        selection = store.read_selection()
        for record in store.iter_records(selection):
            if record.status == "ok" and record.gold is not None:
                verdicts[record.case_id] = (str(record.gold), record.prediction, record.score)
    return JudgeRun(spec=spec, run_dir=result.run_dir, summary=result.summary, verdicts=verdicts)


def _json_object(path: Path) -> dict[str, Any]:
    loaded = user_files.parse_json(user_files.read_bytes(path), str(path))
    if not isinstance(loaded, dict):
        raise DataError("should hold a JSON object", source=str(path))
    return loaded


def figures(run: JudgeRun) -> dict[str, Any]:
    """The judge's own figures, from its run summary."""
    metrics = run.summary["metrics"]
    cal = run.summary.get("calibration") or {}
    return {
        "judge": run.spec, "run_dir": str(run.run_dir), "n": metrics["n"],
        "n_errors": run.summary.get("n_errors"), "n_unparseable": run.summary.get("n_unparseable"),
        "avg_acc": metrics["all"]["avg_acc"], "good_acc": metrics["all"]["good_acc"],
        "bad_acc": metrics["all"]["bad_acc"], "accuracy": metrics["all"]["accuracy"],
        "ece": cal.get("ece"), "brier": cal.get("brier"), "n_scored": cal.get("n"),
    }


def _common(a: JudgeRun, b: JudgeRun) -> list[str]:
    ids = sorted(set(a.verdicts) & set(b.verdicts))
    if not ids:
        raise DataError(f"{a.spec} and {b.spec} have no answered case in common: nothing to pair")
    return ids


def agreement(a: JudgeRun, b: JudgeRun, *, n_boot: int, seed: int) -> dict[str, Any]:
    """Cohen's kappa of the two judges' verdicts on their common cases."""
    from uxbench.metrics.agreement import cohen_kappa

    ids = _common(a, b)
    return {"reference": b.spec, **cohen_kappa([a.verdicts[i][1] for i in ids], [b.verdicts[i][1] for i in ids],
                                               n_boot=n_boot, seed=seed)}


def paired(a: JudgeRun, b: JudgeRun, *, n_boot: int, seed: int) -> dict[str, Any]:
    """Avg-Acc(a) - Avg-Acc(b) on the common cases (a missing verdict counts as wrong), with McNemar's test."""
    from uxbench.metrics.paired import mcnemar, paired_bootstrap_diff

    ids = _common(a, b)
    golds = [a.verdicts[i][0] for i in ids]
    a_ok = [a.verdicts[i][1] == g for i, g in zip(ids, golds, strict=True)]
    b_ok = [b.verdicts[i][1] == g for i, g in zip(ids, golds, strict=True)]
    return {"against": b.spec, "bootstrap": paired_bootstrap_diff(a_ok, b_ok, golds, n_boot=n_boot, seed=seed),
            "mcnemar": mcnemar(a_ok, b_ok)}


def _judge_dir(spec: str) -> Path | None:
    """The directory `uxbench judge train` wrote, when `spec` names one (lite:DIR, hf:OUT/merged, hf:OUT/adapter)."""
    provider, _, name = spec.partition(":")
    if provider not in ("lite", "hf") or not name:
        return None
    path = Path(name).expanduser()
    for candidate in (path, path.parent):
        if (candidate / "train.jsonl").is_file() and (candidate / "model_card.json").is_file():
            return candidate
    return None


def default_runs_root(spec: str) -> Path:
    """Where `judge eval` writes its runs: `DIR/eval-runs` of a judge trained by `uxbench judge train` (beside the
    judge, out of the user's `runs/`, where `leaderboard` and `view` would list them), else `runs`."""
    found = _judge_dir(spec)
    return found / "eval-runs" if found is not None else Path("runs")


def default_baseline_rows(spec: str) -> str | None:
    """`DIR/train.jsonl` of a judge trained by `uxbench judge train`, else None."""
    found = _judge_dir(spec)
    return str(found / "train.jsonl") if found is not None else None


def _judge_settings(spec: str) -> dict[str, Any]:
    """Class weight and prior share of a lite judge's model.json (the baseline copies them), else {}."""
    found = _judge_dir(spec)
    meta = found / "model.json" if found is not None else None
    if meta is None or not meta.is_file():
        card = found / "model_card.json" if found is not None else None
        if card is not None and card.is_file():
            loaded = _json_object(card)
            return {"class_weight": "none" if loaded.get("class_weights") is None else "balanced",
                    "prior": (loaded.get("prior") or {}).get("share_good")}
        return {}
    loaded = _json_object(meta)
    return {"class_weight": loaded.get("class_weight", "balanced"),
            "prior": (loaded.get("prior") or {}).get("share_good")}


def baseline_against(run: JudgeRun, train_path: str, data: str, *, n_boot: int, seed: int,
                     skip_invalid: bool = False) -> dict[str, Any]:
    """The TF-IDF baseline trained on `train_path`, scored on the cases of `data` the judge's run holds."""
    import numpy as np

    from uxbench.judge_train.data import load_rows
    from uxbench.judge_train.model import ClassWeight
    from uxbench.judge_train.train import baseline_section, items_of

    train_rows, _ = load_rows([train_path])
    test_rows, _ = load_rows([data], skip_invalid=skip_invalid)
    if not train_rows or len({r.label for r in train_rows}) < 2:
        raise DataError("the baseline needs training rows of both classes", source=train_path,
                        hint="give --baseline-train the judge's training rows, or --no-baseline")
    answered = [r for r in test_rows if r.id in run.verdicts]
    if not answered:
        raise DataError(f"{run.spec} answered none of the cases of {data}: nothing to compare with the baseline")
    settings = _judge_settings(run.spec)
    y = np.array([r.label == "good" for r in train_rows])
    prior = settings.get("prior") or float(np.clip(y.mean(), 1e-4, 1 - 1e-4))
    weight: ClassWeight = "none" if settings.get("class_weight") == "none" else "balanced"
    section = baseline_section(items_of(train_rows), train_rows, items_of(answered), answered,
                               [run.verdicts[r.id][1] for r in answered], class_weight=weight, prior=prior,
                               n_boot=n_boot, seed=seed)
    section.pop("verdicts")
    return {**section, "trained_on": train_path, "class_weight": weight, "prior_share_good": prior}


async def evaluate(judge: str, data: str, *, judge_args: dict[str, str] | None = None, reference: str | None = None,
                   reference_args: dict[str, str] | None = None, against: str | None = None,
                   against_args: dict[str, str] | None = None, runs_root: Path = Path("runs"), n_boot: int = 2000,
                   seed: int = 0, concurrency: int | None = None, baseline_rows: str | None = None,
                   skip_invalid: bool = False, progress: ProgressFn | None = None) -> dict[str, Any]:
    kw: dict[str, Any] = {"runs_root": runs_root, "n_boot": n_boot, "seed": seed, "concurrency": concurrency,
                          "skip_invalid": skip_invalid, "progress": progress}
    main = await run_judge(judge, judge_args or {}, data, **kw)
    out: dict[str, Any] = {"data": data, "judge": figures(main)}
    if baseline_rows is not None:
        out["baseline"] = baseline_against(main, baseline_rows, data, n_boot=n_boot, seed=seed,
                                           skip_invalid=skip_invalid)
    if reference is not None:
        ref = await run_judge(reference, reference_args or {}, data, **kw)
        out["reference"] = figures(ref)
        out["agreement"] = agreement(main, ref, n_boot=n_boot, seed=seed)
    if against is not None:
        other = await run_judge(against, against_args or {}, data, **kw)
        out["against"] = figures(other)
        out["paired"] = paired(main, other, n_boot=n_boot, seed=seed)
    return out

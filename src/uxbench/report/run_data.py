"""What the leaderboard and the bias analyses read from a finished run directory: its summary and, per case, the
outcome they pair on (Task 1: judged right or wrong; Tasks 2/3: each judge's verdict on the reply)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uxbench.errors import UxbenchError
from uxbench.report.compare import open_run_store
from uxbench.runs.store import SUMMARY
from uxbench.runs.summary import check_summary
from uxbench.scoring.strategies_llm import is_strategy_key


@dataclass(frozen=True)
class Verdict:
    """One judge's reading of one reply."""

    case_id: str
    label: str | None
    """good / bad; None when unscorable or unreadable."""
    score: float | None
    """p(good) for probability judges."""


@dataclass
class RunData:
    """A finished run: summary, manifest and the per-case outcomes of its selected samples."""

    path: Path
    manifest: dict[str, Any]
    summary: dict[str, Any]
    task: str
    model: str
    label: str = ""
    """The model, made unique among the runs being compared by what differs (`report.run_setup.label_runs`)."""
    outcomes: dict[str, tuple[str, bool]] = field(default_factory=dict)
    """Task 1: case_id -> (gold, judged right), unparseable and failed answers being wrong."""
    judged: dict[str, tuple[str | None, float | None]] = field(default_factory=dict)
    """Task 1: case_id -> (the judge's label, its score: a Likert value, a rubric's mean, p(good)); None where
    the answer could not be read or the call failed."""
    replies: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Tasks 2/3: sample_id -> (case_id, reply length in characters) of the successful generations."""
    verdicts: dict[str, dict[str, Verdict]] = field(default_factory=dict)
    """Tasks 2/3: judge key -> sample_id -> verdict (successful scores of successful generations only)."""

    @property
    def generative(self) -> bool:
        return self.task in ("eval", "recovery")

    @property
    def judges(self) -> dict[str, dict[str, Any]]:
        """Judge key -> what the summary (else the manifest) says of it: spec, mode, settings, metrics."""
        found = self.summary.get("judges") or self.manifest.get("judges") or {}
        return dict(found) if isinstance(found, dict) else {}

    @property
    def primary_judge(self) -> str | None:
        key = self.summary.get("primary_judge") or self.manifest.get("primary_judge")
        return str(key) if key else None

    @property
    def demo(self) -> bool:
        return bool(self.summary.get("demo_data"))

    @property
    def fingerprint(self) -> str | None:
        data = self.summary.get("data")
        return str(data.get("fingerprint")) if isinstance(data, dict) and data.get("fingerprint") else None


def load_run_data(path: str | Path) -> RunData:
    """Read a finished run directory (any task) with the per-case outcomes the paired analyses need."""
    store = open_run_store(path)
    try:
        manifest = store.read_manifest() or {}
        summary = store.read_summary()
        if summary is None:
            raise UxbenchError(f"{store.path} has no {SUMMARY}: the run has not finished. Rerun the same "
                               "`uxbench run` command to resume it, then try again.")
        check_summary(summary, str(store.path / SUMMARY))
        task = str(summary.get("task") or manifest.get("task") or "?")
        model_entry = manifest.get("model")
        model = str(summary.get("model") or (model_entry.get("spec") if isinstance(model_entry, dict) else "?"))
        run = RunData(path=store.path, manifest=manifest, summary=summary, task=task, model=model, label=model)
        selected = store.read_selection()
        if task == "judge":
            for rec in store.iter_records(selected):
                if rec.gold is not None and rec.case_id not in run.outcomes:
                    run.outcomes[rec.case_id] = (rec.gold, rec.status == "ok" and rec.prediction == rec.gold)
                    ok = rec.status == "ok"
                    run.judged[rec.case_id] = (rec.prediction if ok else None, rec.score if ok else None)
        elif run.generative:
            for rec in store.iter_records(selected):
                if rec.status == "ok":
                    run.replies[rec.sample_id] = (rec.case_id, len(rec.raw_output or ""))
            for key in store.judges():
                if is_strategy_key(key):
                    continue  # a strategy classifier's labels, not a judge's verdicts
                run.verdicts[key] = {
                    s.sample_id: Verdict(s.case_id, s.label, s.score)
                    for s in store.iter_scores(key, selected) if s.status == "ok" and s.sample_id in run.replies
                }
    finally:
        store.close()
    return run


def judge_label(key: str, info: dict[str, Any], all_infos: dict[str, dict[str, Any]]) -> str:
    """A judge's name in tables: its spec, with the mode when another judge has the same spec, and the key when
    that is still ambiguous."""
    spec = str(info.get("spec") or key)
    same = [k for k, i in all_infos.items() if str(i.get("spec") or k) == spec]
    if len(same) <= 1:
        return spec
    mode = str(info.get("mode") or "")
    same_mode = [k for k in same if str(all_infos[k].get("mode") or "") == mode]
    return f"{spec} ({mode})" if mode and len(same_mode) == 1 else f"{spec} [{key}]"

"""Run directories written through `RunStore` directly, with the verdicts a test chooses: Task 2/3 runs scored
by judges named by their spec, and Task 1 runs with chosen per-case correctness. Summaries are the real ones
(`orchestrate.summary.run_summary`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uxbench.data.schema import EvalCase, JudgeCase, Message
from uxbench.orchestrate.summary import run_summary
from uxbench.runs.records import SampleRecord, ScoreRecord
from uxbench.runs.store import RunStore
from uxbench.tasks.base import SummaryOptions
from uxbench.tasks.registry import create_task

Label = str | None


def judge_key(spec: str) -> str:
    return f"pointwise-{spec.replace(':', '-')}"


def write_eval_run(
    path: Path, model: str, replies: Sequence[str], judges: dict[str, Sequence[Label]], *,
    scores: dict[str, Sequence[float | None]] | None = None, primary: str | None = None,
    case_ids: Sequence[str] | None = None, fingerprint: str = "fp-eval", modes: dict[str, str] | None = None,
) -> Path:
    """A Task 2 run: one case per reply (ids c00, c01, ... unless given), each judge's labels in case order."""
    ids = list(case_ids or [f"c{i:02d}" for i in range(len(replies))])
    task = create_task("eval", {})
    store = RunStore(path)
    selected = []
    for i, (cid, reply) in enumerate(zip(ids, replies, strict=True)):
        case = EvalCase(id=cid, query=f"question {cid}", history=[Message(role="user", content="hi")])
        sid = f"{path.name}-{cid}"
        selected.append(sid)
        store.put(SampleRecord(sample_id=sid, case_id=cid, index=i, status="ok", raw_output=reply,
                               strata={"scenario": "s", "history_messages": 1}),
                  case.__pydantic_serializer__.to_json(case))
        for spec, labels in judges.items():
            score = (scores or {}).get(spec, [None] * len(ids))[i]
            store.put_score(ScoreRecord(sample_id=sid, judge=judge_key(spec), case_id=cid, index=i, status="ok",
                                        label=labels[i], score=score, score_status="full" if score is not None
                                        else "text"))
    store.write_selection(selected)
    infos = {judge_key(s): {"spec": s, "args": {}, "mode": (modes or {}).get(s, "pointwise"), "settings": {},
                            "template_hashes": {}} for s in judges}
    manifest: dict[str, Any] = {
        "run_id": path.name, "task": "eval", "task_config": task.config(), "model": {"spec": model, "args": {}},
        "judges": infos, "primary_judge": judge_key(primary or next(iter(judges))) if judges else None,
        "data": {"description": "test cases", "fingerprint": fingerprint, "demo": False},
    }
    store.write_manifest(manifest)
    store.write_summary(run_summary(store, task, manifest, SummaryOptions(n_boot=200), selected=selected))
    store.close()
    return path


def write_judge_run(path: Path, model: str, outcomes: Sequence[tuple[str, bool]], *,
                    scores: Sequence[float] | None = None, scenarios: Sequence[str] | None = None) -> Path:
    """A Task 1 run: case i has gold outcomes[i][0] and was judged right when outcomes[i][1]; `scores` are
    probability verdicts p(good) (the summary then has calibration), `scenarios` each case's scenario."""
    task = create_task("judge", {})
    store = RunStore(path)
    selected = []
    for i, (gold, right) in enumerate(outcomes):
        cid = f"c{i:02d}"
        case = JudgeCase(id=cid, query="q", response="r", label=gold)  # type: ignore[arg-type]
        other = "bad" if gold == "good" else "good"
        sid = f"{path.name}-{cid}"
        selected.append(sid)
        extra: dict[str, Any] = {"score": scores[i]} if scores is not None else {}
        if scenarios is not None:
            extra["strata"] = {"scenario": scenarios[i]}
        store.put(SampleRecord(sample_id=sid, case_id=cid, index=i, status="ok", gold=gold,
                               prediction=gold if right else other, **extra),
                  case.__pydantic_serializer__.to_json(case))
    store.write_selection(selected)
    manifest: dict[str, Any] = {
        "run_id": path.name, "task": "judge", "task_config": task.config(), "model": {"spec": model, "args": {}},
        "data": {"description": "test cases", "fingerprint": "fp-judge", "demo": False},
    }
    store.write_manifest(manifest)
    store.write_summary(run_summary(store, task, manifest, SummaryOptions(n_boot=200), selected=selected))
    store.close()
    return path

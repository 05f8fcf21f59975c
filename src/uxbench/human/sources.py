"""What a study draws its items from: a run directory (with the run's verdicts as judges) or a data set."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from uxbench.errors import UxbenchError
from uxbench.runs.curation import CURATION_DB, Curation, curated
from uxbench.runs.store import MANIFEST, RunStore


@dataclass
class Candidate:
    """One case that may become an item: what the annotator sees, its hidden label, the judges' verdicts."""

    case_id: str
    turns: list[dict[str, str]]
    """Role and text of each turn, the last one being the reply to judge."""
    label: str | None
    """good / bad: the gold label (Task 1) or None."""
    stratum: str
    scenario: str | None = None
    judges: dict[str, str | None] = field(default_factory=dict)
    """Judge name -> its good / bad verdict on this reply."""


def _turns(case: dict[str, Any], reply: str | None) -> list[dict[str, str]]:
    turns = [{"role": str(m.get("role")), "text": str(m.get("content") or "")}
             for m in case.get("history") or [] if isinstance(m, dict)]
    if case.get("task") == "recovery":
        turns.append({"role": "assistant", "text": str(case.get("failed_response") or "")})
        turns.append({"role": "user", "text": str(case.get("complaint") or "")})
    else:
        turns.append({"role": "user", "text": str(case.get("query") or "")})
    turns.append({"role": "assistant", "text": str(reply or "")})
    return turns


def _scenario(case: dict[str, Any]) -> str | None:
    labels = case.get("labels") or {}
    found = labels.get("scenario_key") or labels.get("scenario")
    return str(found) if found else None


def from_run(path: Path) -> tuple[list[Candidate], dict[str, Any]]:
    """The run's selected samples with their cases, but those excluded in its curation file."""
    excluded = Curation(path / CURATION_DB).excluded()
    store = RunStore.open_existing(path)
    try:
        manifest = store.read_manifest() or {}
        summary = store.read_summary() or {}
        task = str(summary.get("task") or manifest.get("task"))
        model = str(summary.get("model") or (manifest.get("model") or {}).get("spec") or "model")
        selected = store.read_selection()
        out: list[Candidate] = []
        if task == "judge":
            for rec, case_json in store.iter_with_cases(selected):
                if case_json is None or rec.gold not in ("good", "bad") or rec.case_id in excluded:
                    continue
                case = orjson.loads(case_json)
                pred = rec.prediction if rec.status == "ok" and rec.prediction in ("good", "bad") else None
                out.append(Candidate(rec.case_id, _turns(case, case.get("response")), rec.gold, rec.gold,
                                     _scenario(case), {model: pred}))
        else:
            judges = summary.get("judges") or manifest.get("judges") or {}
            names = {k: str(info.get("spec") or k) for k, info in judges.items()}
            verdicts: dict[str, dict[str, str | None]] = {}
            for key in judges:
                for score in store.iter_scores(key, selected):
                    if score.status == "ok":
                        verdicts.setdefault(score.sample_id, {})[names[key]] = score.label
            primary = names.get(str(summary.get("primary_judge") or ""))
            for rec, case_json in store.iter_with_cases(selected):
                if case_json is None or rec.status != "ok" or rec.case_id in excluded:
                    continue
                case = orjson.loads(case_json)
                seen = verdicts.get(rec.sample_id, {})
                out.append(Candidate(rec.case_id, _turns(case, rec.raw_output), None,
                                     str(seen.get(primary or "") or "unscored"), _scenario(case), seen))
    finally:
        store.close()
    return out, {"source": str(path), "task": task, "kind": "run", "model": model,
                 "identity_hash": manifest.get("identity_hash")}


def from_data(source: str) -> tuple[list[Candidate], dict[str, Any]]:
    from uxbench.data.loaders import load_cases

    cases = curated(load_cases(source, task="judge"), source, None)  # a curation file beside the data applies
    out = []
    for case in cases:
        data = orjson.loads(case.__pydantic_serializer__.to_json(case))
        out.append(Candidate(case.id, _turns(data, data.get("response")), data.get("label"),
                             str(data.get("label")), _scenario(data)))
    return out, {"source": source, "task": "judge", "kind": "data"}


def load_candidates(source: str) -> tuple[list[Candidate], dict[str, Any]]:
    path = Path(source)
    candidates, info = from_run(path) if (path / MANIFEST).is_file() else from_data(source)
    if not candidates:
        raise UxbenchError(f"{source} holds no case a study can use (Task 1 cases with a label, or a run's "
                           "stored cases).")
    return candidates, info

"""`uxbench sim fidelity RUN_DIR`: the User Fidelity Score of a simulated-session run (§3.5 of SIMULATORS.md).

For every session: the persona's items (`fidelity_items`), checked by code (`fidelity_code`), then, with a judge,
the items code left pending (`fidelity_judge`; one call per session, resumable: answers are kept in the run's
`sim.sqlite` under the judge key `fidelity:PROVIDER:MODEL`). UFS of a session = satisfied / checked applicable
items. Reported (`RUN_DIR/fidelity.json`, per session `fidelity_sessions.jsonl`):

- the mean UFS, the rate per item family (satisfied / checked items) and the **premature-disclosure rate**
  (sessions with a violated premature- or never-disclosure item / sessions with such an item checked), each with a
  cluster-bootstrap interval over personas;
- UFS split by the session's success (the judge never sees it) and by the corruption gate's verdict;
- what stayed unchecked (no judge, or its answer unusable), counted by family: the score is over checked items
  only, and says so;
- a warning when the judge is the simulator's own model (a model grading its own role-play is lenient with it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from uxbench.data import user_files
from uxbench.fileio import atomic_write_bytes, atomic_write_lines
from uxbench.metrics.session import cluster_ratio
from uxbench.sim.fidelity_code import ItemResult, code_results
from uxbench.sim.fidelity_items import DISCLOSURE_FAMILIES, FAMILIES
from uxbench.sim.persona import Persona
from uxbench.sim.store import SimStore
from uxbench.sim.types import SessionRecord

FIDELITY_FILE = "fidelity.json"
SESSIONS_FILE = "fidelity_sessions.jsonl"
CODE_ONLY = "code"
"""The pass key without a judge."""


def judge_key(spec: str | None) -> str:
    return f"fidelity:{spec}" if spec else CODE_ONLY


@dataclass(frozen=True)
class SessionFidelity:
    session_id: str
    persona_id: str
    success: bool
    flagged: bool
    results: tuple[ItemResult, ...]
    judged: bool
    """The judge's answer was used (False without a judge or when it failed)."""

    @property
    def checked(self) -> list[ItemResult]:
        return [r for r in self.results if r.checked]

    @property
    def ufs(self) -> float | None:
        checked = self.checked
        return sum(r.status == "satisfied" for r in checked) / len(checked) if checked else None

    def row(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "persona_id": self.persona_id, "success": self.success,
                "flagged": self.flagged, "ufs": self.ufs, "judged": self.judged,
                "violations": [{"item": r.item, "turn": r.turn, "by": r.by, "evidence": r.evidence}
                               for r in self.results if r.status == "violated"],
                "unchecked": [r.item for r in self.results if r.status == "pending"]}


def _ratio(rows: list[tuple[str, float, float]], n_boot: int, seed: int) -> dict[str, Any]:
    """sum(num) / sum(den) with a cluster bootstrap over personas; rows are (persona, num, den)."""
    by: dict[str, list[float]] = {}
    for persona, num, den in rows:
        acc = by.setdefault(persona, [0.0, 0.0])
        acc[0] += num
        acc[1] += den
    keys = sorted(by)
    return cluster_ratio(np.array([by[k][0] for k in keys], dtype=float),
                         np.array([by[k][1] for k in keys], dtype=float), n_boot=n_boot, seed=seed)


def _mean_ufs(sessions: list[SessionFidelity], n_boot: int, seed: int) -> dict[str, Any]:
    scored = [s for s in sessions if s.ufs is not None]
    out = _ratio([(s.persona_id, float(s.ufs or 0.0), 1.0) for s in scored], n_boot, seed)
    return {**out, "n_sessions": len(scored)}


def aggregate(sessions: list[SessionFidelity], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The run-level figures (see the module docstring)."""
    families: dict[str, Any] = {}
    for family in FAMILIES:
        rows = [(s.persona_id, float(r.status == "satisfied"), 1.0) for s in sessions for r in s.results
                if r.family == family and r.checked]
        families[family] = {**_ratio(rows, n_boot, seed), "n_items": len(rows),
                            "n_unchecked": sum(1 for s in sessions for r in s.results
                                               if r.family == family and r.status == "pending"),
                            "n_not_applicable": sum(1 for s in sessions for r in s.results
                                                    if r.family == family and r.status == "not_applicable")}
    disclosure = []
    for s in sessions:
        items = [r for r in s.results if r.family in DISCLOSURE_FAMILIES and r.checked]
        if items:
            disclosure.append((s.persona_id, float(any(r.status == "violated" for r in items)), 1.0))
    violations = Counter(r.item.split(":")[0] for s in sessions for r in s.results if r.status == "violated")
    return {
        "ufs": _mean_ufs(sessions, n_boot, seed),
        "by_family": families,
        "premature_disclosure_rate": {**_ratio(disclosure, n_boot, seed), "n_sessions": len(disclosure),
                                      "definition": "sessions with a premature or never-disclosure violation / "
                                                    "sessions with a disclosure item checked"},
        "by_success": {"success": _mean_ufs([s for s in sessions if s.success], n_boot, seed),
                       "failure": _mean_ufs([s for s in sessions if not s.success], n_boot, seed)},
        "by_gate": {"flagged": _mean_ufs([s for s in sessions if s.flagged], n_boot, seed),
                    "clean": _mean_ufs([s for s in sessions if not s.flagged], n_boot, seed)},
        "violations_by_family": dict(violations.most_common()),
        "n_sessions": len(sessions),
        "n_judged": sum(s.judged for s in sessions),
    }


def _flagged(record: SessionRecord, persona: Persona) -> bool:
    from uxbench.sim.gate import gate_flags

    return bool(gate_flags(record, persona))


def session_fidelity(record: SessionRecord, persona: Persona, answer: dict[str, Any] | None) -> SessionFidelity:
    """One session's items: code, then the judge's stored answer when there is one."""
    from uxbench.sim.fidelity_judge import JudgeAnswer, apply_answer

    results = code_results(record, persona)
    judged = answer is not None
    if answer is not None:
        results = apply_answer(results, JudgeAnswer(**answer), persona, record)
    return SessionFidelity(record.session_id, record.persona_id, record.success, _flagged(record, persona),
                           tuple(results), judged)


def _simulator_of(manifest: dict[str, Any]) -> str | None:
    """The run's simulator spec (`manifest.simulator.spec`, else the identity's)."""
    value = manifest.get("simulator")
    if isinstance(value, dict) and value.get("spec"):
        return str(value["spec"])
    identity = manifest.get("identity")
    if isinstance(identity, dict) and isinstance(identity.get("simulator"), str):
        return str(identity["simulator"])
    return None


def warnings_for(manifest: dict[str, Any], judge: str | None) -> list[str]:
    out = []
    simulator = _simulator_of(manifest)
    if judge is None:
        out.append("No --judge: paraphrased disclosures, hallucinations and goal pursuit are unchecked; the UFS is "
                   "over the items code can decide.")
    elif simulator is not None and judge == simulator:
        out.append(f"The judge ({judge}) is the simulator's own model: a model grading its own role-play tends to "
                   "pass it. Use a different provider:model for --judge.")
    return out


async def judge_pending(store: SimStore, records: list[SessionRecord], personas: dict[str, Persona], model: Any,
                        key: str, *, width: int, tick: Callable[[int], None] | None = None) -> int:
    """Ask the judge about every session it has not answered yet; returns the number of failures. A judge whose
    first answers all fail (a wrong key, URL or model; answers never in the format) stops the pass
    (`RunAborted`, as `uxbench run` stops): its answers so far are kept."""
    from uxbench.mining.llm import map_bounded
    from uxbench.orchestrate.progress import FailureGuard
    from uxbench.sim.fidelity_judge import judge_session

    done = store.judged_ids(key)
    todo = [r for r in records if r.session_id not in done]
    failures = 0
    guard = FailureGuard("judge calls", store.path, "Check the judge's model name, base_url and API key",
                         kept=f"the answers it gave are kept in {store.path / 'sim.sqlite'}, and rerunning the same "
                              "command asks only about the sessions it has not answered")

    async def one(record: SessionRecord) -> None:
        nonlocal failures
        recording = _Recording(model)
        exchange = await judge_session(record, personas[record.persona_id], recording)
        spent = recording.ledger.usage.get("judge")
        usage = spent.model_dump() if spent is not None else None
        if exchange.ok and exchange.value is not None:
            store.put_judgement(record.session_id, key, {"answer": exchange.value.as_dict(), "usage": usage,
                                                         "attempts": exchange.attempts})
            guard.success()
        else:
            failures += 1
            store.put_judgement(record.session_id, key, {"error": exchange.failure()[:300], "usage": usage,
                                                         "attempts": exchange.attempts}, ok=False)
            guard.failure(exchange.failure())

    await map_bounded(todo, one, width, tick)
    return failures


class _Recording:
    """The judge model, with each call's tokens and cost kept for the session (`sim.session.Ledger`)."""

    def __init__(self, model: Any) -> None:
        from uxbench.sim.session import Ledger

        self.model = model
        self.ledger = Ledger({"judge": model.usage.models[model.spec].price})

    async def generate(self, messages: Any, config: Any = None) -> Any:
        out = await self.model.generate(messages, config)
        self.ledger.add("judge", out)
        return out


def check_judged(store: SimStore, records: list[SessionRecord], judge: str) -> tuple[int, str | None]:
    """(sessions the judge failed on, its first error) over `records`; a judge that answered none of them is an
    error, not a score: the figures would be code's alone under the judge's name."""
    from uxbench.errors import UxbenchError

    key = judge_key(judge)
    ok = store.judged_ids(key)
    failed = store.failed_judgements(key)
    wanted = [r.session_id for r in records]
    n_failed = sum(1 for sid in wanted if sid not in ok and sid in failed)
    first = next((str(failed[sid].get("error")) for sid in wanted if sid not in ok and sid in failed), None)
    if wanted and not any(sid in ok for sid in wanted):
        raise UxbenchError(
            f"The judge {judge} answered none of the {len(wanted)} sessions, so there is no judged User Fidelity "
            f"Score to report. First error: {(first or 'no answer').rstrip('.')}. Check the judge's model name, "
            "base_url and API key (or how it answers), then rerun; without --judge the score is over the items "
            "code decides.")
    return n_failed, first


def fidelity_report(store: SimStore, records: Iterable[SessionRecord], personas: dict[str, Persona],
                    judge: str | None, manifest: dict[str, Any], *, n_boot: int = 2000, seed: int = 0
                    ) -> dict[str, Any]:
    """Aggregate the stored answers of `judge` (None: code only), write `fidelity.json` and the per-session file."""
    key = judge_key(judge)
    bodies = store.judgements(key) if judge else {}
    answers = {sid: body.get("answer") for sid, body in bodies.items()}
    sessions = [session_fidelity(r, personas[r.persona_id], answers.get(r.session_id)) for r in records]
    failed = sum(1 for s in sessions if judge and not s.judged)
    summary: dict[str, Any] = {
        "kind": "uxbench.sim.fidelity", "run": str(store.path), "judge": judge, "key": key,
        "warnings": warnings_for(manifest, judge), "judge_failures": failed,
        "judge_usage": _usage_total(bodies.values()), **aggregate(sessions, n_boot=n_boot, seed=seed),
        "n_boot": n_boot, "seed": seed,
    }
    path = store.path / FIDELITY_FILE
    previous = orjson.loads(path.read_bytes()) if path.is_file() else {}
    passes = dict(previous.get("passes") or {}) if isinstance(previous, dict) else {}
    passes[key] = summary
    atomic_write_bytes(path, orjson.dumps({"kind": "uxbench.sim.fidelity", "latest": key, "passes": passes},
                                          option=orjson.OPT_INDENT_2))
    atomic_write_lines(store.path / SESSIONS_FILE, (orjson.dumps({"key": key, **s.row()}) for s in sessions))
    return summary


def _usage_total(bodies: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The judge's calls, tokens and cost over the sessions it answered (None cost when a price is unknown)."""
    from uxbench.sim.types import Usage

    total, n = Usage(), 0
    for body in bodies:
        if isinstance(body.get("usage"), dict):
            total = total.add(Usage.model_validate(body["usage"]))
            n += 1
    return {**total.model_dump(), "n_sessions": n}


def read_fidelity(run_dir: Path, judge: str | None = None) -> dict[str, Any] | None:
    """A run's fidelity summary: the pass of `judge` (a spec, `code`, or None for the latest)."""
    path = run_dir / FIDELITY_FILE
    if not path.is_file():
        return None
    data = user_files.parse_json(user_files.read_bytes(path), str(path))
    passes = (data.get("passes") if isinstance(data, dict) else None) or {}
    if judge is None:
        key = data.get("latest")
    else:
        key = CODE_ONLY if judge == CODE_ONLY else judge_key(judge)
    found = passes.get(key)
    return found if isinstance(found, dict) else None

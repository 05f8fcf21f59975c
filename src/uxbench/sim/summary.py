"""The summary of a simulated-session run, computed from its store alone (so a resumed run, a rerun and
`uxbench report` agree), and the sidecar rows (`acts.jsonl`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from uxbench.metrics.session import SessionOutcome, session_headline, session_metrics
from uxbench.sim.gate import GATE_TYPES, gate_flags
from uxbench.sim.persona import Persona
from uxbench.sim.types import PARTIES, SessionRecord, Usage

SATISFACTION_JUDGE_PREFIX = "satisfaction:"
"""Judgement keys of the per-turn satisfaction judges (`satisfaction:PROVIDER:MODEL`)."""


def judge_curve(record: SessionRecord, judgement: dict[str, Any] | None) -> tuple[float | None, ...]:
    if not judgement:
        return ()
    scores = judgement.get("turns") or {}
    return tuple(scores.get(str(t.turn_index)) for t in record.turns if t.role == "assistant")


def outcome_of(record: SessionRecord, flagged: bool, judgement: dict[str, Any] | None = None) -> SessionOutcome:
    """The metrics' view of one session."""
    users = record.user_turns
    acts = [t.act or "free" for t in users[1:]]
    if record.termination.detail == "the user left without a message" and record.termination.reason in (
            "patience_exhausted",):
        acts.append("leave")
    assistants = [t for t in record.turns if t.role == "assistant"]
    return SessionOutcome(
        cluster=record.persona_id, trial=record.trial, success=record.success, reason=record.termination.reason,
        assistant_turns=len(assistants), acts=tuple(acts),
        satisfaction=tuple(record.satisfaction_curve()),
        judge=judge_curve(record, judgement),
        likes=sum(t.feedback == "like" for t in assistants), dislikes=sum(t.feedback == "dislike" for t in assistants),
        skims=sum(t.skim for t in users), chains=tuple(c.outcome or "no_recovery" for c in record.chains),
        flagged=flagged, acts_measured=record.mode != "free",
    )


def build_summary(records: Iterable[SessionRecord], personas: dict[str, Persona], manifest: dict[str, Any], *,
                  judgements: dict[str, dict[str, dict[str, Any]]] | None = None, n_boot: int = 2000, seed: int = 0,
                  failed: dict[str, dict[str, dict[str, Any]]] | None = None,
                  ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary, acts rows). `judgements`: judge key -> session id -> body; `failed`: the same for the judgements
    with a failed call (counted, and their calls costed, but not in the curves)."""
    result: dict[str, Any] = {}
    rows = [orjson.loads(line) for line in summary_rows(
        records, personas, manifest, result, judgements=judgements, n_boot=n_boot, seed=seed, failed=failed)]
    return result["summary"], rows


def judge_counts(spec: str, bodies: list[dict[str, Any]], failed: list[dict[str, Any]]) -> dict[str, Any]:
    """What the satisfaction judge gave: of the replies it was asked about, how many it rated 1-5, how many answers
    held no rating and how many calls failed, with the first of each (so a judge that never answered usably says
    why, instead of a dash), and its usage over every call (failed judgements included)."""
    every = [*bodies, *failed]
    usage = Usage()
    for body in every:
        if body.get("usage"):
            usage = usage.add(Usage.model_validate(body["usage"]))
    scores = [v for body in bodies for v in (body.get("turns") or {}).values()]
    return {
        "spec": spec, "sessions": len(bodies), "sessions_failed": len(failed),
        "replies": sum(len(body.get("turns") or {}) for body in every),
        "rated": sum(v is not None for v in scores),
        "unparsed": sum(int(body.get("unparsed") or 0) for body in every),
        "errors": sum(int(body.get("errors") or 0) for body in every),
        "unparsed_example": next((b["unparsed_example"] for b in every if b.get("unparsed_example")), None),
        "error_example": next((b["error_example"] for b in every if b.get("error_example")), None),
        "usage": usage.model_dump() if every else None,
    }


@dataclass(frozen=True)
class SessionDigest:
    """What a summary takes from one session, and its lines of acts.jsonl and sessions.jsonl: made from the record
    as the summary reads it, or as the session ends (`session_digest`), the same either way."""

    session_id: str
    lang: str
    outcome: SessionOutcome
    flag_types: frozenset[str]
    flagged: bool
    discarded: tuple[str, ...]
    """The reasons of the generations discarded, in the order the turns give them."""
    usage: tuple[tuple[str, Usage], ...]
    error: str | None
    """The termination's detail of a session that ended in error."""
    reward: tuple[str, float | None, int] | None
    acts_line: bytes
    """Its row of acts.jsonl (`acts_row`), serialised."""
    log: bytes
    """Its lines of sessions.jsonl (`canonical_rows`), serialised."""


def session_digest(record: SessionRecord, persona: Persona | None, found: list[dict[str, Any]] | None = None,
                   judgement: dict[str, Any] | None = None, judged: dict[str, Any] | None = None) -> SessionDigest:
    """The digest of one stored session. `found`: the gate's flags when already computed; `judgement`: the
    satisfaction judge's of this session; `judged`: every judge's, by key (acts.jsonl's `judgements`)."""
    from uxbench.sim.store import log_lines

    if found is None:
        found = gate_flags(record, persona) if persona is not None else []
    detail = record.termination.detail
    return SessionDigest(
        session_id=record.session_id, lang=record.lang,
        outcome=outcome_of(record, bool(found), judgement),
        flag_types=frozenset(f["type"] for f in found), flagged=bool(found),
        discarded=(*(r for turn in record.turns for r in turn.discarded), *unusable_reasons(detail)),
        usage=tuple(record.usage.items()),
        error=detail if record.termination.reason == "error" else None,
        reward=(record.persona_id, record.reward, record.tool_calls) if record.task_id is not None else None,
        acts_line=orjson.dumps(acts_row(record, found, judged or {})),
        log=log_lines(record),
    )


def summary_rows(records: Iterable[SessionRecord | SessionDigest], personas: dict[str, Persona],
                 manifest: dict[str, Any], result: dict[str, Any], *,
                 judgements: dict[str, dict[str, dict[str, Any]]] | None = None,
                 n_boot: int = 2000, seed: int = 0, failed: dict[str, dict[str, dict[str, Any]]] | None = None,
                 flags: dict[str, list[dict[str, Any]]] | None = None,
                 each: Callable[[bytes], None] | None = None) -> Iterator[bytes]:
    """The acts rows (serialised), one per session as it is read (memory flat in the number of sessions, but for
    the small per-session outcomes the bootstrap needs); `result["summary"]` is set once the rows are consumed.
    `records` may hold digests made as the sessions ended (`session_digest`, only where no judge has judged
    them: they hold no judgement); `flags`: the gate's flags of sessions already checked (`gate_flags` of the
    stored record and persona), by id; `each`: called with every session's lines of sessions.jsonl."""
    judgements = judgements or {}
    failed = failed or {}
    judge_key = next((k for k in sorted({*judgements, *failed}) if k.startswith(SATISFACTION_JUDGE_PREFIX)), None)
    judged_bodies: list[dict[str, Any]] = []
    failed_bodies: list[dict[str, Any]] = []
    outcomes: list[SessionOutcome] = []
    by_type: Counter[str] = Counter()
    discarded: Counter[str] = Counter()
    usage: dict[str, Usage] = {}
    errors: list[str] = []
    error_parties: Counter[str] = Counter()
    flagged_ids: list[str] = []
    by_lang: dict[str, list[SessionOutcome]] = {}
    rewards: list[tuple[str, float | None, int]] = []
    for item in records:
        sid = item.session_id
        judgement = judgements.get(judge_key, {}).get(sid) if judge_key else None
        if judgement is not None:
            judged_bodies.append(judgement)
        elif judge_key and (broken := failed.get(judge_key, {}).get(sid)) is not None:
            failed_bodies.append(broken)
        digest = item if isinstance(item, SessionDigest) else session_digest(
            item, personas.get(item.persona_id), flags.get(sid) if flags is not None else None, judgement,
            {k: v.get(sid) for k, v in judgements.items()})
        if digest.reward is not None:
            rewards.append(digest.reward)
        for kind in digest.flag_types:
            by_type[kind] += 1
        if digest.flagged:
            flagged_ids.append(sid)
        discarded.update(digest.discarded)
        for party, used in digest.usage:
            usage[party] = usage.get(party, Usage()).add(used)
        if digest.error is not None:
            error_parties[error_party(digest.error)] += 1
            if len(errors) < 5:
                errors.append(digest.error)
        outcomes.append(digest.outcome)
        by_lang.setdefault(digest.lang, []).append(digest.outcome)
        if each is not None:
            each(digest.log)
        yield digest.acts_line
    kw = {"n_boot": n_boot, "seed": seed}
    n = len(outcomes)
    clean = [o for o in outcomes if not o.flagged]
    summary: dict[str, Any] = {
        "kind": "sim",
        "run_id": manifest.get("run_id"),
        "demo": bool(manifest.get("demo")),
        "mode": manifest.get("mode"),
        "model": manifest.get("model"),
        "simulator": manifest.get("simulator"),
        "assessor": manifest.get("assessor"),
        "satisfaction_judge": judge_key.removeprefix(SATISFACTION_JUDGE_PREFIX) if judge_key else None,
        "n_sessions": n,
        "n_personas": len({o.cluster for o in outcomes}),
        "trials": manifest.get("trials"),
        "max_turns": manifest.get("max_turns"),
        "n_errors": sum(o.reason == "error" for o in outcomes),
        "errors": errors,
        "errors_by_party": dict(error_parties),
        "metrics": session_metrics(outcomes, **kw),
        "gate": {"n_flagged": len(flagged_ids), "n": n, "rate": round(len(flagged_ids) / n, 6) if n else None,
                 "by_type": {kind: by_type.get(kind, 0) for kind in GATE_TYPES},
                 "flagged_sessions": flagged_ids[:50]},
        "metrics_unflagged": session_metrics(clean, **kw) if len(clean) != n else None,
        "by_lang": {lang: session_headline(group, **kw) for lang, group in sorted(by_lang.items())},
        "discarded": {"generations": sum(discarded.values()), "by_reason": dict(discarded),
                      "note": "simulator outputs discarded (never edited): regenerated, or the session ended in "
                              "error after two; counted, not hidden"},
        "usage": {party: usage[party].model_dump() for party in PARTIES if party in usage},
        "cost_per_session_usd": {party: _per_session(usage[party].cost_usd, n) for party in PARTIES if party in usage},
    }
    if judge_key:
        summary["judge"] = judge_counts(judge_key.removeprefix(SATISFACTION_JUDGE_PREFIX), judged_bodies,
                                        failed_bodies)
        if summary["judge"]["usage"] is not None:  # the judge's calls, in the cost table with every party's
            spent = usage.get("judge", Usage()).add(Usage.model_validate(summary["judge"]["usage"]))
            summary["usage"]["judge"] = spent.model_dump()
            summary["cost_per_session_usd"]["judge"] = _per_session(spent.cost_usd, n)
    if rewards:
        summary["reward"] = _reward(rewards, n_boot, seed)
    summary["headline"] = _headline(summary["metrics"])
    if summary["metrics_unflagged"] is not None:
        summary["headline_unflagged"] = _headline(summary["metrics_unflagged"])
    result["summary"] = summary


def _reward(rows: list[tuple[str, float | None, int]], n_boot: int, seed: int) -> dict[str, Any]:
    """Tool tasks: the mean of the evaluator's rewards (an unscored session counts 0) with a cluster-bootstrap
    interval over tasks, and the agent's tool calls per session."""
    import numpy as np

    from uxbench.metrics.session import cluster_ratio

    by: dict[str, list[float]] = {}
    for task, reward, _ in rows:
        acc = by.setdefault(task, [0.0, 0.0])
        acc[0] += reward or 0.0
        acc[1] += 1
    keys = sorted(by)
    mean = cluster_ratio(np.array([by[k][0] for k in keys]), np.array([by[k][1] for k in keys]), n_boot=n_boot,
                         seed=seed)
    return {"mean": mean, "unscored": sum(r is None for _, r, _ in rows),
            "tool_calls_per_session": round(sum(c for _, _, c in rows) / len(rows), 4)}


def unusable_reasons(detail: str) -> list[str]:
    """The reasons of the generations discarded in a session that ended because none was usable (they belong to
    no kept turn, and are counted with the others)."""
    from uxbench.sim.store import UNUSABLE

    if not detail.startswith(f"{UNUSABLE} (") or not detail.endswith(")"):
        return []
    return [r for r in detail[len(UNUSABLE) + 2 : -1].split("; ") if r]


def error_party(detail: str) -> str:
    """Whose failure ended a session with reason `error`: assistant (retried by a rerun), simulator, assessor."""
    from uxbench.sim.store import MUT_ERROR

    if detail.startswith(MUT_ERROR):
        return "assistant"
    return "assessor" if "assessor" in detail else "simulator"


def _per_session(cost: float | None, n: int) -> float | None:
    return None if cost is None or not n else round(cost / n, 8)


def _headline(metrics: dict[str, Any]) -> dict[str, Any]:
    sat = metrics.get("satisfaction") or {}
    return {
        "n_sessions": metrics.get("n_sessions"),
        "success_rate": metrics.get("success_rate"),
        "abandonment_rate": metrics.get("abandonment_rate"),
        "dissatisfied_per_100": (metrics.get("signal_rates") or {}).get("rates", {}).get("any_dissatisfied"),
        "final_satisfaction": sat.get("final"),
        "turns_to_success": {k: (metrics.get("turns_to_success") or {}).get(k) for k in ("value", "n")},
    }


def acts_row(record: SessionRecord, flags: list[dict[str, Any]], judgements: dict[str, Any]) -> dict[str, Any]:
    """One sidecar row: a session's acts, states and end (the canonical log holds its texts)."""
    turns = []
    for t in record.turns:
        entry: dict[str, Any] = {"turn_index": t.turn_index, "role": t.role}
        if t.role == "user":
            entry.update(act=t.act, item=t.item, facts_stated=list(t.facts_stated), satisfaction=t.satisfaction,
                         patience_left=t.patience_left, skim=t.skim, attempts=t.attempts,
                         discarded=list(t.discarded))
        else:
            entry.update(feedback=t.feedback,
                         assessment=t.assessment.model_dump(mode="json") if t.assessment is not None else None)
            if t.tool_steps:
                entry["tool_calls"] = [{"name": c.name, "arguments": c.arguments, "error": c.error,
                                        "result": c.result[:500]} for step in t.tool_steps for c in step.calls]
        turns.append(entry)
    task = {"task_id": record.task_id, "reward": record.reward, "reward_breakdown": record.reward_breakdown,
            "tool_calls": record.tool_calls} if record.task_id is not None else {}
    return {
        **task,
        "session_id": record.session_id, "persona_id": record.persona_id, "persona_hash": record.persona_hash,
        "lang": record.lang, "trial": record.trial, "seed": record.seed, "mode": record.mode,
        "termination": record.termination.model_dump(), "success": record.success,
        "completed": list(record.completed), "abandoned": list(record.abandoned),
        "chains": [c.model_dump(mode="json") for c in record.chains],
        "usage": {k: v.model_dump() for k, v in record.usage.items()},
        "gate": flags, "judgements": {k: v for k, v in judgements.items() if v is not None}, "turns": turns,
    }

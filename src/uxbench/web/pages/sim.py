"""Simulated-session runs (`uxbench sim run`) in `uxbench view`: a run page (headline figures with CIs, with and
without the sessions the corruption gate flagged; endings; the gate; the sessions, each linked) and a session page
(the transcript with each user act, the assessment of each reply, and the satisfaction curve: the simulator's state
and, when a judge rated the replies, the judge's)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from uxbench.web.context import state

router = APIRouter()
CURVE_W, CURVE_H, PAD = 560, 180, 28


def _entry(request: Request, sim_id: str) -> Any:
    entry = state(request).catalog.sims.get(sim_id)
    if entry is None:
        raise HTTPException(404, "no such simulated-session run")
    return entry


def sim_row(run_id: str, summary: dict[str, Any]) -> dict[str, Any]:
    """A simulated-session run as the start page and the published site list it: its models by spec (never
    their arguments), sessions, task success with its CI, and the sessions the corruption gate flagged."""
    head = summary.get("headline") or {}
    return {"id": run_id, "model": (summary.get("model") or {}).get("spec"),
            "simulator": (summary.get("simulator") or {}).get("spec"), "mode": summary.get("mode"),
            "n": summary.get("n_sessions"), "success": head.get("success_rate"),
            "flagged": (summary.get("gate") or {}).get("n_flagged"), "demo": bool(summary.get("demo"))}


def sim_rows(view: Any) -> list[dict[str, Any]]:
    return [sim_row(entry.id, entry.summary()) for entry in view.catalog.sims.values()]


@router.get("/sims/{sim_id}", response_class=HTMLResponse)
def sim_page(request: Request, sim_id: str) -> HTMLResponse:
    from uxbench.report.sim import headline_rows
    from uxbench.sim.gate import gate_flags

    view = state(request)
    entry = _entry(request, sim_id)
    summary = entry.summary()
    store = entry.store()
    try:
        personas = store.personas()
        sessions = []
        for record in store.iter_sessions():
            persona = personas.get(record.persona_id)
            flags = gate_flags(record, persona) if persona is not None else []
            sessions.append({"id": record.session_id, "persona": record.persona_id, "lang": record.lang,
                             "trial": record.trial, "reason": record.termination.reason, "success": record.success,
                             "turns": record.assistant_turns, "flags": sorted({f["type"] for f in flags}),
                             "final": (record.satisfaction_curve() or [None])[-1]})
    finally:
        store.close()
    from uxbench.report.run_settings import sim_run_settings
    from uxbench.report.sim import judge_note

    manifest = store.read_manifest() or {}
    modes = (f"{summary.get('mode')} mode, lang {manifest.get('lang')}, {manifest.get('trials')} trial(s), "
             f"at most {manifest.get('max_turns')} replies, seed {manifest.get('seed')}")
    lead = modes + (" · command line recorded" if (summary.get("invocation") or {}).get("command") else
                    " · no command line recorded")
    return view.page("sim_run.html", title=sim_id, sim=entry, summary=summary, headline=headline_rows(summary),
                     sessions=sessions, judge_note=judge_note(summary), settings=sim_run_settings(manifest, summary),
                     settings_lead=lead)


def session_judge_note(key: str, body: dict[str, Any], failed: bool) -> str | None:
    """What the satisfaction judge could not rate in one session, and why (None when it rated every reply)."""
    from uxbench.report.sim import plural
    from uxbench.sim.summary import SATISFACTION_JUDGE_PREFIX

    unparsed, errors = int(body.get("unparsed") or 0), int(body.get("errors") or 0)
    if not unparsed and not errors:
        return None
    rated = sum(v is not None for v in (body.get("turns") or {}).values())
    bits = []
    if unparsed:
        example = body.get("unparsed_example")
        bits.append(plural(unparsed, "answer held", "answers held") + " no rating 1-5"
                    + (f" (the first: {example!r})" if example else ""))
    if errors:
        example = body.get("error_example")
        bits.append(plural(errors, "call failed", "calls failed") + (f" ({example})" if example else "")
                    + ("; left out of the run's figures until a rerun asks again" if failed else ""))
    return (f"Satisfaction judge {key.removeprefix(SATISFACTION_JUDGE_PREFIX)} rated {rated} of "
            f"{len(body.get('turns') or {})} replies here: " + "; ".join(bits) + ".")


def curve_points(values: list[float | None], n: int) -> str:
    """SVG polyline points of a 1-5 curve over n positions (None values are skipped)."""
    if n <= 0:
        return ""
    step = (CURVE_W - 2 * PAD) / max(1, n - 1)
    pts = [f"{PAD + i * step:.1f},{CURVE_H - PAD - (v - 1) / 4 * (CURVE_H - 2 * PAD):.1f}"
           for i, v in enumerate(values) if v is not None]
    return " ".join(pts)


@router.get("/sims/{sim_id}/sessions/{session_id}", response_class=HTMLResponse)
def session_page(request: Request, sim_id: str, session_id: str) -> HTMLResponse:
    from uxbench.sim.gate import gate_flags

    view = state(request)
    entry = _entry(request, sim_id)
    store = entry.store()
    try:
        record = next(iter(store.iter_sessions([session_id])), None)
        if record is None:
            raise HTTPException(404, "no such session in this run")
        persona = store.personas().get(record.persona_id)
        judged = {key: body for key in store.judges() if (body := store.judgements(key).get(session_id))}
        failed = {key: body for key in store.judges() if (body := store.failed_judgements(key).get(session_id))}
    finally:
        store.close()
    items = []
    for t in record.turns:
        if t.role == "user":
            bits = [f"act: {t.act}"] + ([f"item: {t.item}"] if t.item else [])
            if t.satisfaction is not None:
                bits.append(f"satisfaction {t.satisfaction:.2f}, patience left {t.patience_left:g}")
            if t.facts_stated:
                bits.append("states " + ", ".join(t.facts_stated))
            if t.skim:
                bits.append("skimmed the reply")
            if t.discarded:
                bits.append("regenerated after: " + "; ".join(t.discarded))
        else:
            a = t.assessment
            bits = []
            if a is not None:
                verdict = ("completes " + ", ".join(a.completed)) if a.completed else (a.failure or "no failure")
                bits.append(f"assessed: {verdict}" + (f"; asks for {', '.join(a.asked_facts)}" if a.asked_facts
                                                      else ""))
            if t.feedback:
                bits.append(t.feedback)
            for step in t.tool_steps:  # the agent's tool calls before this reply, each with the tool's answer
                for call in step.calls:
                    args = json.dumps(call.arguments, ensure_ascii=False) if call.raw_arguments is None \
                        else call.raw_arguments
                    items.append({"role": "tool", "text": f"{call.name}({args})\n→ {call.result}",
                                  "note": "tool call, failed" if call.error else "tool call"})
        items.append({"role": t.role, "text": t.text, "note": " · ".join(bits)})
    sat: list[float | None] = list(record.satisfaction_curve())
    judge_key, judge_body = next(iter(judged.items()), (None, None))
    judge_curve = [((judge_body or {}).get("turns") or {}).get(str(t.turn_index)) for t in record.turns
                   if t.role == "assistant"] if judge_body else []
    n = max(len(sat), len(judge_curve))
    return view.page("sim_session.html", title=session_id, sim=entry, record=record, items=items,
                     judge_notes=[note for key, body in {**failed, **judged}.items()
                                  if (note := session_judge_note(key, body, key in failed))],
                     flags=gate_flags(record, persona) if persona is not None else [],
                     sat_points=curve_points(sat, n), judge_points=curve_points(judge_curve, n),
                     judge_key=judge_key, curve_w=CURVE_W, curve_h=CURVE_H, pad=PAD, n_points=n,
                     has_state=any(v is not None for v in sat))

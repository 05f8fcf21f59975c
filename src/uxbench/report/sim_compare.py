"""`uxbench sim compare A B`: two simulated-session runs on the same personas and seeds, paired session by session
(persona, trial), B minus A for each session metric with a paired cluster-bootstrap CI over personas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uxbench.errors import UxbenchError
from uxbench.metrics.session import SessionOutcome, paired_comparison
from uxbench.report.render import DASH, NOT_MEASURED, ReportFormat, _check_fmt, _markdown, _rich, paired_diff
from uxbench.sim.gate import gate_flags
from uxbench.sim.health import broken_reason, error_counts
from uxbench.sim.store import SimStore
from uxbench.sim.summary import outcome_of


def run_outcomes(path: Path) -> tuple[dict[str, Any], list[SessionOutcome], dict[tuple[str, int], tuple[str, int]]]:
    """(manifest, outcomes, (persona, trial) -> (persona hash, seed)) of one finished sim run; a run whose sessions
    mostly ended in error is refused (`sim.health`)."""
    store = SimStore.open_existing(path)
    try:
        manifest = store.read_manifest() or {}
        if store.read_summary() is None:
            raise UxbenchError(f"{path} has no summary.json: the run has not finished. Rerun the same "
                               "`uxbench sim run` command to resume it.")
        personas = store.personas()
        outcomes, keys = [], {}
        records = list(store.iter_sessions())
        reason = broken_reason(str(path), *error_counts(records))
        if reason is not None:
            raise UxbenchError(f"not compared: {reason}.")
        for record in records:
            persona = personas.get(record.persona_id)
            flagged = bool(gate_flags(record, persona)) if persona is not None else False
            outcomes.append(outcome_of(record, flagged))
            keys[(record.persona_id, record.trial)] = (record.persona_hash, record.seed)
    finally:
        store.close()
    return manifest, outcomes, keys


def paired_report(a: Path, b: Path, *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    man_a, out_a, keys_a = run_outcomes(a)
    man_b, out_b, keys_b = run_outcomes(b)
    shared = set(keys_a) & set(keys_b)
    differ = sorted(k for k in shared if keys_a[k] != keys_b[k])
    if differ:
        pid, trial = differ[0]
        raise UxbenchError(f"{a} and {b} did not meet the same users: persona '{pid}' trial {trial} has another "
                           "content hash or seed in one of them (edited persona files, or another --seed). Pair runs "
                           "made from the same personas with the same --seed.")
    if not shared:
        raise UxbenchError(f"{a} and {b} share no session (persona and trial): nothing to pair.")
    warnings = []
    if man_a.get("simulator") != man_b.get("simulator") or man_a.get("mode") != man_b.get("mode"):
        warnings.append("the runs used different simulators or modes: the difference mixes the assistants' effect "
                        "with the simulator's")
    report = paired_comparison(out_a, out_b, n_boot=n_boot, seed=seed)
    report.update({"a": str(a), "b": str(b), "model_a": (man_a.get("model") or {}).get("spec"),
                   "model_b": (man_b.get("model") or {}).get("spec"), "warnings": warnings,
                   "demo": bool(man_a.get("demo") or man_b.get("demo"))})
    return report


def render_paired(report: dict[str, Any], fmt: ReportFormat) -> str:
    _check_fmt(fmt)
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    header = ["metric", "A", "B", "B - A [95% CI]", "significant"]
    rows = []
    for name, m in (report.get("metrics") or {}).items():
        rows.append([name, f"{m['a']:.3f}", f"{m['b']:.3f}", paired_diff(m), "yes" if m["significant"] else "no"])
    rows += [[name, DASH, DASH, NOT_MEASURED, DASH] for name in (report.get("not_measured") or {})]
    if fmt == "csv":
        return "\n".join(",".join(f'"{c}"' for c in r) for r in [header, *rows]) + "\n"
    title = f"B ({report.get('model_b') or DASH}) minus A ({report.get('model_a') or DASH})"
    notes = [f"{report['n_pairs']} paired sessions over {report.get('n_clusters', 0)} personas (unpaired: "
             f"{report['only_a']} only in A, {report['only_b']} only in B); paired cluster bootstrap over personas."]
    notes += [f"{name}: {why}." for name, why in (report.get("not_measured") or {}).items()]
    notes += [f"Warning: {w}" for w in report.get("warnings", [])]
    if report.get("demo"):
        notes.insert(0, "DEMO: an embedded tiny model took part; the figures show the machinery only.")
    sections = [(title, header, rows)]
    if fmt == "table":
        return _rich(sections, notes, None, wrap=(0,))
    return _markdown(sections, notes, text_columns=1)

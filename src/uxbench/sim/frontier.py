"""`uxbench sim frontier RUN_DIR...`: what each simulator configuration costs against how faithfully it plays the
users (UserProxyBench's cost-fidelity frontier).

One run directory per configuration (simulator model x mode x assessor), all on the same personas and seeds (a
warning says when they are not). Per configuration: the cost per session of each party apart (the simulator's
own calls: realiser and assessor; the judges: the satisfaction judge and the UFS judge; the model under test), in
USD where every price is known and in tokens otherwise, and the mean UFS with its interval (`sim.fidelity`, the
pass of `--judge`, else each run's latest, else a code-only pass made now). The Pareto set holds the
configurations no other is both cheaper (or as cheap) and more faithful (or as faithful) than; the answer to
"the cheapest simulator with UFS >= target" is given by the estimate, and by the interval's lower bound for a
cautious choice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from uxbench.sim.fidelity import fidelity_report, read_fidelity
from uxbench.sim.store import SimStore
from uxbench.sim.types import SessionRecord, Usage

SIMULATOR_PARTIES = ("simulator", "assessor")
JUDGE_PARTIES = ("judge",)


def config_label(manifest: dict[str, Any]) -> str:
    """`simulator (mode)`, with the assessor when it is a model."""
    simulator = (manifest.get("simulator") or {}).get("spec", "?")
    assessor = (manifest.get("assessor") or {}).get("spec", "rules")
    label = f"{simulator} ({manifest.get('mode', '?')})"
    return label if assessor == "rules" else f"{label}, assessor {assessor}"


def _per_session(records: list[SessionRecord], parties: tuple[str, ...], extra: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    """Mean cost (USD, None when a price is unknown) and fresh tokens per session of `parties` together."""
    total = Usage()
    for record in records:
        for party in parties:
            if party in record.usage:
                total = total.add(record.usage[party])
    if extra:
        total = total.add(Usage.model_validate({k: v for k, v in extra.items() if k in Usage.model_fields}))
    n = max(1, len(records))
    return {"usd": None if total.cost_usd is None else total.cost_usd / n,
            "tokens": (total.input_tokens + total.output_tokens) / n, "calls": total.calls / n,
            "cached_calls": total.cached_calls / n}


def run_entry(run_dir: Path, judge: str | None, *, n_boot: int, seed: int) -> dict[str, Any]:
    """One configuration: its costs by party and its UFS."""
    store = SimStore.open_existing(run_dir)
    try:
        manifest = store.read_manifest() or {}
        records = list(store.iter_sessions())
        fidelity = read_fidelity(run_dir, judge)
        note = ""
        if fidelity is None:
            if judge is not None:
                note = f"no fidelity pass with judge {judge}: run `uxbench sim fidelity {run_dir} --judge {judge}`"
            fidelity = fidelity_report(store, records, store.personas(), None, manifest, n_boot=n_boot, seed=seed)
            note = note or "no fidelity pass yet: a code-only pass was made now (no judge items)"
        ufs_judge_usage = fidelity.get("judge_usage") if fidelity.get("judge") else None
    finally:
        store.close()
    return {
        "run": str(run_dir), "label": config_label(manifest), "mode": manifest.get("mode"),
        "simulator": (manifest.get("simulator") or {}).get("spec"), "assessor": (manifest.get("assessor") or {})
        .get("spec"), "model": (manifest.get("model") or {}).get("spec"), "n_sessions": len(records),
        "personas": sorted(map(tuple, (manifest.get("identity") or {}).get("personas") or [])),
        "seed": manifest.get("seed"), "trials": manifest.get("trials"),
        "cost": {"simulator": _per_session(records, SIMULATOR_PARTIES),
                 "judges": _per_session(records, JUDGE_PARTIES, ufs_judge_usage),
                 "model_under_test": _per_session(records, ("assistant",))},
        "ufs": fidelity["ufs"], "fidelity_judge": fidelity.get("judge"),
        "premature_disclosure_rate": fidelity.get("premature_disclosure_rate"),
        "demo": bool(manifest.get("demo")), "note": note,
    }


def _dominates(a: dict[str, Any], b: dict[str, Any], unit: str) -> bool:
    ca, cb = a["cost"]["simulator"][unit], b["cost"]["simulator"][unit]
    ua, ub = a["ufs"].get("value"), b["ufs"].get("value")
    if ca is None or cb is None or ua is None or ub is None:
        return False
    return bool(ca <= cb and ua >= ub and (ca < cb or ua > ub))


def frontier(entries: list[dict[str, Any]], *, target: float | None = None) -> dict[str, Any]:
    """The Pareto set and the cheapest configuration reaching `target`, on the simulator's cost per session."""
    unit = "usd" if all(e["cost"]["simulator"]["usd"] is not None for e in entries) else "tokens"
    warnings = []
    if unit == "tokens":
        warnings.append("some prices are unknown (local or unpriced models): cost is compared in tokens per session")
    if len({(tuple(map(tuple, e["personas"])), e["seed"], e["trials"]) for e in entries}) > 1:
        warnings.append("the runs do not share personas, seed and trials: their UFS is not measured on the same users")
    if len({e["fidelity_judge"] for e in entries}) > 1:
        warnings.append("the runs' UFS come from different judges (or none): compare with one --judge")
    for e in entries:
        e["pareto"] = not any(_dominates(o, e, unit) for o in entries if o is not e)
    out: dict[str, Any] = {"kind": "uxbench.sim.frontier", "cost_unit": unit, "target": target, "entries": entries,
                           "pareto": [e["label"] for e in entries if e["pareto"]], "warnings": warnings}
    if target is not None:
        def cheapest(ok: Any) -> str | None:
            meeting = [e for e in entries if ok(e) and e["cost"]["simulator"][unit] is not None]
            return min(meeting, key=lambda e: e["cost"]["simulator"][unit])["label"] if meeting else None

        out["cheapest_meeting_target"] = cheapest(lambda e: (e["ufs"].get("value") or 0) >= target)
        out["cheapest_meeting_target_ci"] = cheapest(lambda e: (e["ufs"].get("ci_low") or 0) >= target)
    return out


def frontier_report(run_dirs: list[Path], *, judge: str | None = None, target: float | None = None,
                    n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    from uxbench.errors import ConfigError

    if len(run_dirs) < 2:
        raise ConfigError("uxbench sim frontier compares configurations: pass two or more sim run directories "
                          "(one per simulator model x mode)")
    return frontier([run_entry(p, judge, n_boot=n_boot, seed=seed) for p in run_dirs], target=target)

"""`uxbench sim sensitivity RUN_DIR...`: does the conclusion depend on the simulator?

The runs are the same assistants, each under two or more simulator configurations (simulator model x mode x
assessor), on the same personas and seeds. For every assistant and every configuration other than the baseline:
each session metric's change from the baseline with a paired cluster-bootstrap interval (`metrics.session
.paired_comparison`: same persona and trial, so the same user and seed). For every metric: the assistants'
values under each configuration and Kendall's tau between the baseline ranking and each other one, with whether
the order changed. A metric that moves significantly, or an order that changes, under another simulator is a
conclusion the simulator made."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError
from uxbench.metrics.session import PAIRED_METRICS, SessionOutcome, paired_comparison
from uxbench.metrics.sim_real import kendall_tau
from uxbench.sim.frontier import config_label
from uxbench.sim.gate import gate_flags
from uxbench.sim.health import broken_reason, error_counts
from uxbench.sim.store import SimStore
from uxbench.sim.summary import outcome_of


def _load(run_dir: Path) -> tuple[str, str, list[SessionOutcome], dict[str, Any]]:
    store = SimStore.open_existing(run_dir)
    try:
        manifest = store.read_manifest() or {}
        personas = store.personas()
        outcomes = []
        records = list(store.iter_sessions())
        manifest = {**manifest, "_broken": broken_reason(str(run_dir), *error_counts(records))}
        for record in records:
            persona = personas.get(record.persona_id)
            flagged = bool(gate_flags(record, persona)) if persona is not None else False
            outcomes.append(outcome_of(record, flagged))
    finally:
        store.close()
    model = manifest.get("model") or {}
    assistant = str(model.get("spec", "?")) + (f" {model['args']}" if model.get("args") else "")
    return assistant, config_label(manifest), outcomes, manifest


def _value(outcomes: list[SessionOutcome], metric: str) -> float | None:
    num, den = PAIRED_METRICS[metric]
    d = sum(den(o) for o in outcomes)
    return sum(num(o) for o in outcomes) / d if d > 0 else None


def _order(values: dict[str, float]) -> list[list[str]]:
    """Assistants best to worst by value (higher first), ties grouped."""
    groups: dict[float, list[str]] = {}
    for name, value in values.items():
        groups.setdefault(round(value, 9), []).append(name)
    return [sorted(groups[v]) for v in sorted(groups, reverse=True)]


def _check_every_assistant_everywhere(cells: dict[tuple[str, str], list[SessionOutcome]], configs: list[str]
                                      ) -> None:
    """Every assistant under every configuration: one seen under a single simulator has no change to measure and
    would leave a ranking compared over fewer assistants (a Kendall tau over one)."""
    assistants = sorted({a for a, _ in cells})
    missing = [(a, [c for c in configs if (a, c) not in cells]) for a in assistants]
    missing = [(a, cs) for a, cs in missing if cs]
    if missing:
        listed = "; ".join(f"{a} is missing under {', '.join(cs)}" for a, cs in missing[:5])
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        raise ConfigError(f"uxbench sim sensitivity compares each assistant under every simulator configuration: "
                          f"{listed}{more}. Pass a run of each assistant under each configuration (same personas and "
                          "seeds), or leave out the assistants that have only one.")


def _how(base: dict[str, float], other: dict[str, float], common: list[str]) -> str:
    """How an order changed: `reversed` when a pair of assistants swaps, `tied` when pairs the baseline told
    apart are tied (the simulator no longer separates them), `split` when it separates a baseline tie."""
    def sign(x: float) -> int:
        return (x > 1e-9) - (x < -1e-9)

    signs = [(sign(base[a] - base[b]), sign(other[a] - other[b])) for a, b in itertools.combinations(common, 2)]
    if any(x * y < 0 for x, y in signs):
        return "reversed"
    return "tied" if any(x and not y for x, y in signs) else "split"


def sensitivity_report(run_dirs: list[Path], *, baseline: str | None = None, n_boot: int = 2000, seed: int = 0
                       ) -> dict[str, Any]:
    everything = [_load(p) for p in run_dirs]
    # Complete as passed (every assistant under every configuration); a run then left out as broken takes only
    # its own cell away, so its assistant is compared where it still has the baseline and another configuration.
    _check_every_assistant_everywhere({(a, label): o for a, label, o, _ in everything},
                                      list(dict.fromkeys(label for _, label, _, _ in everything)))
    excluded = [{"run": str(p), "config": label, "reason": manifest["_broken"]}
                for p, (_, label, _, manifest) in zip(run_dirs, everything, strict=True) if manifest["_broken"]]
    loaded = [entry for entry in everything if not entry[3]["_broken"]]
    if excluded and len({label for _, label, _, _ in loaded}) < 2:
        raise ConfigError("uxbench sim sensitivity needs two usable simulator configurations; not compared: "
                          + " | ".join(e["reason"] for e in excluded) + ".")
    run_dirs = [p for p, entry in zip(run_dirs, everything, strict=True) if not entry[3]["_broken"]]
    configs = list(dict.fromkeys(label for _, label, _, _ in loaded))
    if len(configs) < 2:
        which = "the run uses" if len(run_dirs) == 1 else f"these {len(run_dirs)} runs all use"
        raise ConfigError(f"uxbench sim sensitivity needs runs under two or more simulator configurations; {which} "
                          f"{configs[0] if configs else 'none'}. Run the same personas and seeds with another "
                          "--simulator or --mode and pass both run directories.")
    if baseline is not None and baseline not in configs:
        import difflib

        close = difflib.get_close_matches(baseline, configs, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise ConfigError(f"--baseline '{baseline}' is none of the configurations: {'; '.join(configs)}.{hint}")
    base = baseline or configs[0]
    cells: dict[tuple[str, str], list[SessionOutcome]] = {}
    for assistant, label, outcomes, _ in loaded:
        if (assistant, label) in cells:
            raise ConfigError(f"two runs of {assistant} under {label}: pass one run per assistant and configuration")
        cells[(assistant, label)] = outcomes
    assistants = sorted({a for a, _ in cells})
    changes = []
    for assistant in assistants:
        if (assistant, base) not in cells:
            continue
        for label in configs:
            if label == base or (assistant, label) not in cells:
                continue
            paired = paired_comparison(cells[(assistant, base)], cells[(assistant, label)], n_boot=n_boot, seed=seed)
            changes.append({"assistant": assistant, "config": label, **paired})
    rankings: dict[str, Any] = {}
    for metric in PAIRED_METRICS:
        per_config: dict[str, dict[str, float]] = {}
        for (assistant, label), outcomes in cells.items():
            value = _value(outcomes, metric)
            if value is not None:
                per_config.setdefault(label, {})[assistant] = value
        entry: dict[str, Any] = {"values": per_config, "order": {c: _order(v) for c, v in per_config.items()},
                                 "versus_baseline": {}}
        for label in configs:
            if label == base or label not in per_config or base not in per_config:
                continue
            common = sorted(set(per_config[base]) & set(per_config[label]))
            tau = kendall_tau([per_config[base][a] for a in common], [per_config[label][a] for a in common])
            changed = None if len(common) < 2 else (  # one assistant has no order to change
                _order({a: per_config[base][a] for a in common}) != _order({a: per_config[label][a] for a in common}))
            entry["versus_baseline"][label] = {"n_assistants": len(common), "kendall_tau": tau,
                                               "order_changed": changed,
                                               "how": _how(per_config[base], per_config[label], common) if changed
                                               else None}
        rankings[metric] = entry
    significant = [c for c in changes for m in (c.get("metrics") or {}).values() if m.get("significant")]
    return {"kind": "uxbench.sim.sensitivity", "baseline": base, "configs": configs, "assistants": assistants,
            "runs": [{"run": str(p), "assistant": a, "config": c, "n_sessions": len(o)}
                     for p, (a, c, o, _) in zip(run_dirs, loaded, strict=True)],
            "changes": changes, "rankings": rankings, "excluded": excluded,
            "verdict": {"metric_changes_significant": len(significant),
                        "orders_changed": sorted(m for m, e in rankings.items()
                                                 if any(v["order_changed"] for v in e["versus_baseline"].values()))},
            "n_boot": n_boot, "seed": seed}

"""`uxbench sim validate --real LOGS RUN_DIR...`: simulated users against real ones (§3.6 of SIMULATORS.md).

Free-run comparison (this module): the simulated runs' sessions and the real logs go through the same mining
rules (`validate_data`), and their reactions are compared:
- per reaction type, the rate per assistant turn on each side and the ratio simulated / real;
- the Jensen-Shannon distance between the two reaction distributions;
- the **cooperativeness gap**: real minus simulated dissatisfied-reaction rate (repeat, rephrase, complaint,
  dismissal); positive = the simulated users complain, repeat and give up less than real ones;
- KS on session length (user turns), with both medians;
- the discriminator AUC (`discriminator`: 0.5 = indistinguishable);
- real thumbs against simulated like / dislike, per assistant turn;
- Kendall's tau between the assistants' ranking by simulated and by real dissatisfied rate, where the real logs
  name the assistant (turn metadata `model`) and several simulated runs test those assistants;
- a split-half control: the same figures between two halves of the real logs, the scale sampling noise alone
  gives (a simulated side no farther from the real one than that is as close as the data can tell).
Intervals are cluster bootstraps over conversations (`metrics.sim_real`). Replay validation (each real reply
answered by the simulator and compared turn by turn, with kappa) is in `validate_replay`."""

from __future__ import annotations

from typing import Any

from uxbench.metrics.sim_real import compare_reactions, kendall_tau, ks_lengths
from uxbench.sim.discriminator import discriminator_auc
from uxbench.sim.reactions import DISSATISFIED, REACTIONS
from uxbench.sim.validate_data import Side

THUMBS = ("like", "dislike", "none")


def _pooled(name: str, sides: list[Side]) -> Side:
    out = Side(name)
    for side in sides:
        out.sessions += side.sessions
        out.thumbs += side.thumbs
        out.lengths += side.lengths
        out.user_texts += side.user_texts
        out.digests += side.digests
        for key, value in side.by_assistant.items():
            out.by_assistant.setdefault(key, []).extend(value)
    return out


def _rate(sessions: list[list[str]]) -> float | None:
    turns = sum(len(s) for s in sessions)
    return sum(1 for s in sessions for x in s if x in DISSATISFIED) / turns if turns else None


def _pair(real: Side, sim: Side, *, n_boot: int, seed: int, discriminator: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "reactions": compare_reactions(real.sessions, sim.sessions, REACTIONS, DISSATISFIED, n_boot=n_boot,
                                       seed=seed),
        "session_length": ks_lengths(real.lengths, sim.lengths),
    }
    thumbs = compare_reactions(real.thumbs, sim.thumbs, THUMBS, {"dislike"}, n_boot=n_boot, seed=seed)
    real_has = any(x != "none" for s in real.thumbs for x in s)
    out["thumbs"] = {**thumbs, "note": None if real_has else "the real logs carry no thumbs: nothing to compare"}
    if discriminator:
        out["discriminator"] = discriminator_auc(real.user_texts, sim.user_texts, seed=seed,
                                                 n_boot=max(200, n_boot // 4))
    return out


def system_level(real: Side, sims: list[tuple[str, Side]]) -> dict[str, Any]:
    """Kendall's tau over the assistants both sides name (by their dissatisfied rate)."""
    sim_by: dict[str, list[list[str]]] = {}
    for _label, side in sims:
        for key, value in side.by_assistant.items():
            sim_by.setdefault(key, []).extend(value)
    common = sorted(set(real.by_assistant) & set(sim_by))
    rows = [{"assistant": a, "real": _rate(real.by_assistant[a]), "sim": _rate(sim_by[a]),
             "n_real_sessions": len(real.by_assistant[a]), "n_sim_sessions": len(sim_by[a])} for a in common]
    rows = [r for r in rows if r["real"] is not None and r["sim"] is not None]
    out: dict[str, Any] = {"assistants": rows, "measure": "dissatisfied-reaction rate per assistant turn"}
    if len(rows) >= 2:
        out["kendall_tau"] = kendall_tau([float(r["real"] or 0.0) for r in rows],
                                         [float(r["sim"] or 0.0) for r in rows])
    else:
        out["note"] = ("needs two or more assistants named on both sides (real turn metadata `model`, one simulated "
                       f"run per assistant); found {len(rows)}")
    return out


def free_run_report(real: Side, sims: list[tuple[str, Side]], *, n_boot: int = 2000, seed: int = 0,
                    discriminator: bool = True) -> dict[str, Any]:
    """The free-run comparison of simulated runs (pooled, and each on its own) with the real logs."""
    pooled = _pooled("simulated", [side for _, side in sims])
    report: dict[str, Any] = {
        "kind": "uxbench.sim.validate", "mode": "free_run",
        "real": {"name": real.name, "n_conversations": len(real.sessions),
                 "n_assistant_turns": sum(len(s) for s in real.sessions)},
        "simulated": [{"name": label, "n_conversations": len(side.sessions),
                       "n_assistant_turns": sum(len(s) for s in side.sessions)} for label, side in sims],
        "labels": list(REACTIONS), "dissatisfied_labels": sorted(DISSATISFIED),
        "pooled": _pair(real, pooled, n_boot=n_boot, seed=seed, discriminator=discriminator),
        "per_run": {label: _pair(real, side, n_boot=n_boot, seed=seed, discriminator=False)
                    for label, side in sims} if len(sims) > 1 else {},
        "split_half_control": _pair(real.half(0), real.half(1), n_boot=n_boot, seed=seed, discriminator=False),
        "system_level": system_level(real, sims),
        "notes": ["Reaction labels come from the mining rules on both sides; the rules' own errors (measured on "
                  "real follow-ups in docs/MINING.md) apply to both.",
                  "Simulated timestamps are synthetic: timing signals (skim) are not compared."],
        "n_boot": n_boot, "seed": seed,
    }
    return report

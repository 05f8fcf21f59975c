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
  gives (a simulated side no farther from the real one than that is as close as the data can tell);
- per assistant, never pooled over assistants (a helpful and a never-helping assistant pooled are a mixture of
  both and like neither): the figures and the verdict (`validate_verdict`) against the control;
- the like-with-like checks (`validate_checks`: language, task vs chit-chat, mining drops) and the yardstick the
  real users gave (`yardstick`: thumbs or ratings, and how well the mined labels track them).
Intervals are cluster bootstraps (`metrics.sim_real`) over conversations on the real side and over personas on a
simulated one (a persona's trials are not independent). Replay validation (each real reply answered by the
simulator and compared turn by turn, with kappa) is in `validate_replay`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from uxbench.metrics.sim_real import compare_reactions, kendall_tau, ks_lengths
from uxbench.sim.discriminator import discriminator_auc
from uxbench.sim.reactions import DISSATISFIED, REACTIONS
from uxbench.sim.validate_data import Side
from uxbench.sim.validate_verdict import verdict
from uxbench.sim.yardstick import yardstick

THUMBS = ("like", "dislike", "none")


@dataclass(frozen=True)
class SimSide:
    """One simulated run: its label, the assistant it tested, its side."""

    label: str
    assistant: str
    side: Side


def _pooled(name: str, sides: list[Side]) -> Side:
    out = Side(name)
    for side in sides:
        for attr in ("sessions", "thumbs", "lengths", "user_texts", "digests", "clusters", "langs", "openers",
                     "ratings"):
            getattr(out, attr).extend(getattr(side, attr))
        for key, value in side.by_assistant.items():
            out.by_assistant.setdefault(key, []).extend(value)
    return out.sorted()


def _rate(sessions: list[list[str]]) -> float | None:
    turns = sum(len(s) for s in sessions)
    return sum(1 for s in sessions for x in s if x in DISSATISFIED) / turns if turns else None


def pair(real: Side, sim: Side, *, n_boot: int, seed: int, discriminator: bool) -> dict[str, Any]:
    """Every figure of one comparison, cluster by cluster."""
    out: dict[str, Any] = {
        "n_conversations": {"real": len(real.sessions), "sim": len(sim.sessions)},
        "reactions": compare_reactions(real.cluster_sessions(), sim.cluster_sessions(), REACTIONS, DISSATISFIED,
                                       n_boot=n_boot, seed=seed),
        "session_length": ks_lengths(real.lengths, sim.lengths),
        "clusters": "conversations (real), personas (simulated)",
    }
    thumbs = compare_reactions(real.cluster_thumbs(), sim.cluster_thumbs(), THUMBS, {"dislike"}, n_boot=n_boot,
                               seed=seed)
    real_has = any(x != "none" for s in real.thumbs for x in s)
    out["thumbs"] = {**thumbs, "note": None if real_has else "the real logs carry no thumbs: nothing to compare"}
    if discriminator:
        out["discriminator"] = discriminator_auc(real.user_texts, sim.user_texts, seed=seed,
                                                 n_boot=max(200, n_boot // 4))
    return out


def system_level(real: Side, sims: list[SimSide]) -> dict[str, Any]:
    """Kendall's tau over the assistants both sides name (by their dissatisfied rate)."""
    sim_by: dict[str, list[list[str]]] = {}
    for sim in sims:
        for key, value in sim.side.by_assistant.items():
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


def free_run_report(real: Side, sims: list[SimSide], *, n_boot: int = 2000, seed: int = 0,
                    discriminator: bool = True, checks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The free-run comparison of simulated runs with the real logs: per assistant (runs of one assistant pooled,
    never runs of different assistants), each with its verdict against the split-half control."""
    control = pair(real.half(0), real.half(1), n_boot=n_boot, seed=seed, discriminator=discriminator)
    by_assistant: dict[str, Any] = {}
    for assistant in dict.fromkeys(s.assistant for s in sims):
        runs = [s for s in sims if s.assistant == assistant]
        side = runs[0].side if len(runs) == 1 else _pooled(assistant, [s.side for s in runs])
        figures = pair(real, side, n_boot=n_boot, seed=seed, discriminator=discriminator)
        by_assistant[assistant] = {"runs": [s.label for s in runs], **figures, "verdict": verdict(figures, control)}
    stick = yardstick(real, n_boot=max(200, n_boot // 4), seed=seed)
    if stick.get("caveat"):
        for entry in by_assistant.values():
            entry["verdict"]["caveat"] = stick["caveat"]
    notes = ["Reaction labels come from the mining rules on both sides; the rules' own errors (measured on real "
             "follow-ups in docs/MINING.md) apply to both.",
             "Simulated timestamps are synthetic: timing signals (skim) are not compared.",
             f"Yardstick: {stick['note']}." + (f" Caveat: {stick['caveat']}." if stick.get("caveat") else "")]
    if len(by_assistant) > 1:
        notes.append("Each assistant is judged on its own: runs of different assistants are never pooled (a mixture "
                     "of a helpful and a never-helping assistant resembles neither).")
    return {
        "kind": "uxbench.sim.validate", "mode": "free_run",
        "real": {"name": real.name, "n_conversations": len(real.sessions),
                 "n_assistant_turns": sum(len(s) for s in real.sessions)},
        "simulated": [{"name": s.label, "assistant": s.assistant, "n_conversations": len(s.side.sessions),
                       "n_personas": len(set(s.side.clusters)),
                       "n_assistant_turns": sum(len(x) for x in s.side.sessions)} for s in sims],
        "labels": list(REACTIONS), "dissatisfied_labels": sorted(DISSATISFIED),
        "by_assistant": by_assistant,
        "split_half_control": control,
        "system_level": system_level(real, sims),
        "yardstick": stick,
        "checks": checks or [],
        "notes": notes,
        "n_boot": n_boot, "seed": seed,
    }

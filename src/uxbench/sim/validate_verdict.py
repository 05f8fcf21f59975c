"""The verdict of a free-run validation, per assistant, judged against the real logs' own split-half control.

Each criterion compares the simulated side with the real one and, where sampling noise matters, with what two
halves of the real logs give each other (the control):

- **wording**: a classifier tells simulated from real user messages when its AUC's interval lies above 0.5;
- **reaction mix**: the Jensen-Shannon distance's interval lies above the control's;
- **dissatisfaction**: the cooperativeness gap's interval excludes 0 (positive: the simulated users complain,
  repeat and give up less than the real ones);
- **thumbs** (where the real logs have them): the gap between the real thumbs-down rate and the simulated
  dislike rate excludes 0;
- **session length**: the KS test rejects equal distributions (p < 0.05) and its statistic exceeds the
  control's.

The verdict is `differs` when a criterion shows a difference (each named, with its figures), `no_difference_found`
when every criterion was computed and none does (never "faithful": the intervals say how large a difference could
still hide), and `undetermined` when a criterion could not be computed and none shows a difference.
"""

from __future__ import annotations

from typing import Any

P_LENGTH = 0.05


def _ci(cell: dict[str, Any], digits: int = 3) -> str:
    if cell.get("value") is None:
        return "n/a"
    text = f"{cell['value']:.{digits}f}"
    if cell.get("ci_low") is not None and cell.get("ci_high") is not None:
        text += f" [{cell['ci_low']:.{digits}f}, {cell['ci_high']:.{digits}f}]"
    return text


def _criterion(name: str, status: str, text: str) -> dict[str, str]:
    return {"criterion": name, "status": status, "evidence": text}


def _wording(pair: dict[str, Any]) -> dict[str, str]:
    disc = pair.get("discriminator") or {}
    if disc.get("value") is None or disc.get("ci_low") is None:
        return _criterion("wording", "unknown", disc.get("note") or "the discriminator was not run")
    base = disc.get("length_baseline") or {}
    text = f"discriminator AUC {_ci(disc)}; length alone {_ci(base)}"
    if disc["ci_low"] > 0.5:
        return _criterion("wording", "differs", f"a classifier tells simulated from real user messages: {text}")
    return _criterion("wording", "within", f"not told apart beyond chance: {text}")


def _mix(pair: dict[str, Any], control: dict[str, Any]) -> dict[str, str]:
    js, cjs = pair["reactions"]["js_distance"], control["reactions"]["js_distance"]
    if js.get("ci_low") is None or cjs.get("ci_high") is None:
        return _criterion("reaction_mix", "unknown", f"JS distance {_ci(js)}, control {_ci(cjs)}")
    text = f"JS distance {_ci(js)} against the split-half control's {_ci(cjs)}"
    if js["ci_low"] > cjs["ci_high"]:
        return _criterion("reaction_mix", "differs", f"the reaction mix differs beyond sampling noise: {text}")
    return _criterion("reaction_mix", "within", text)


def _gap(cell: dict[str, Any], name: str, what: str) -> dict[str, str]:
    if cell.get("ci_low") is None or cell.get("ci_high") is None:
        return _criterion(name, "unknown", f"{what} {_ci(cell)}")
    text = f"{what} {_ci(cell)} (real - simulated)"
    if cell["ci_low"] > 0:
        return _criterion(name, "differs", f"the simulated users are more cooperative than the real ones: {text}")
    if cell["ci_high"] < 0:
        return _criterion(name, "differs", f"the simulated users are less cooperative than the real ones: {text}")
    return _criterion(name, "within", text)


def _length(pair: dict[str, Any], control: dict[str, Any]) -> dict[str, str]:
    ks, cks = pair["session_length"], control["session_length"]
    if ks.get("statistic") is None:
        return _criterion("session_length", "unknown", "no sessions to compare")
    text = (f"KS {ks['statistic']:.3f} (p = {ks['p_value']:.3g}; medians {ks['median_real']} real, "
            f"{ks['median_sim']} simulated user turns), control KS "
            + ("n/a" if cks.get("statistic") is None else f"{cks['statistic']:.3f}"))
    if ks["p_value"] < P_LENGTH and ks["statistic"] > (cks.get("statistic") or 0.0):
        return _criterion("session_length", "differs", f"session lengths differ: {text}")
    return _criterion("session_length", "within", text)


def verdict(pair: dict[str, Any], control: dict[str, Any]) -> dict[str, Any]:
    """The verdict for one assistant's simulated side (see the module docstring)."""
    criteria = [_wording(pair), _mix(pair, control),
                _gap(pair["reactions"]["cooperativeness_gap"], "dissatisfaction", "dissatisfied-rate gap"),
                _length(pair, control)]
    thumbs = pair.get("thumbs") or {}
    if not thumbs.get("note"):
        criteria.append(_gap(thumbs.get("cooperativeness_gap") or {}, "thumbs",
                             "thumbs-down (real) vs dislike (simulated) gap"))
    differs = [c for c in criteria if c["status"] == "differs"]
    unknown = [c for c in criteria if c["status"] == "unknown"]
    if differs:
        status = "differs"
        summary = "The simulated users differ from the real ones: " + "; ".join(
            c["evidence"] for c in differs) + "."
    elif unknown:
        status = "undetermined"
        summary = "No difference shown, but not every criterion could be computed: " + "; ".join(
            f"{c['criterion']}: {c['evidence']}" for c in unknown) + "."
    else:
        status = "no_difference_found"
        summary = ("No difference found beyond the real logs' own split-half noise; the intervals bound how large "
                   "a difference could still hide: " + "; ".join(c["evidence"] for c in criteria) + ".")
    return {"status": status, "summary": summary, "criteria": criteria,
            "judged_against": "the real logs' split-half control (two halves of the real conversations)"}

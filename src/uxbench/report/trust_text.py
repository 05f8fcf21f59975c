"""How the trust figures read in text: judge-corrected rates (with their flag or refusal), their calibration,
the minimum detectable difference. Shared by the run summary, the protocol table, `report` and `leaderboard`."""

from __future__ import annotations

from typing import Any

from uxbench.report.render import DASH, pct

FLAG_MARK = " !"
"""After a corrected figure whose raw rate lies outside what the judge can produce (see the notes)."""


def corrected_cell(entry: dict[str, Any] | None) -> str:
    """`54.1 [47.6, 60.6]`, with ` !` when flagged; `refused` for an uninformative judge; a dash without one."""
    if not entry:
        return DASH
    if entry.get("status") == "refused":
        return "refused"
    text = pct(entry)
    return text + (FLAG_MARK if entry.get("flags") else "")


def block_of(judge: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `corrected` block of a judge's summary entry, when it has one."""
    block = (judge or {}).get("corrected")
    return block if isinstance(block, dict) else None


def correction_notes(name: str, block: dict[str, Any] | None) -> list[str]:
    """One line saying where a judge's error rates come from, and one per flag or refusal."""
    if not block:
        return []
    scored, record = block.get("scored_only") or {}, block.get("calibration") or {}
    se, sp = scored.get("sensitivity") or {}, scored.get("specificity") or {}
    j = scored.get("youden_j")
    lines = [f"{name} corrected with {record.get('run_id') or record.get('source')}: Good-Acc (sensitivity) "
             f"{pct(se)} % of {se.get('n')} liked replies, Bad-Acc (specificity) {pct(sp)} % of {sp.get('n')} "
             "disliked" + (f", J = {j:.3f}" if j is not None else "") + "; corrected 95% CI by the delta method over "
             "the three binomials (Lee et al. 2025)."]
    if scored.get("status") == "refused":
        lines.append(f"{name}: correction refused: {str(scored.get('reason') or '').split(': ', 1)[-1]}.")
    for flag in scored.get("flags") or []:
        lines.append(f"{FLAG_MARK.strip()} {name}: {flag['message']}.")
    lines += [f"{name}: calibration note: {w}." for w in record.get("warnings") or []]
    return lines


def mdd_text(entry: dict[str, Any] | None) -> str:
    """`4.1 pp` (or a dash) for a minimum detectable difference entry."""
    if not entry or entry.get("value") is None:
        return DASH
    return f"{100 * entry['value']:.1f} pp"

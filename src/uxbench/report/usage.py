"""The cost line under a run's figures (`uxbench run`, `score` and `report`): what each model role was asked,
its tokens and its cost, and the run's total. Usage is summed over the stored records, so a resumed run shows
what the whole run cost."""

from __future__ import annotations

from typing import Any

from uxbench.runtime.cost import format_cost


def _role(key: str) -> str:
    if key == "model":
        return "model"
    return "strategy labels" if key.startswith("strategy:") else "judge"


def _entry_text(key: str, entry: dict[str, Any]) -> str:
    requests = int(entry.get("requests") or 0)
    cached = int(entry.get("cache_hits") or 0)
    tokens_in = int(entry.get("input_tokens") or 0) + int(entry.get("cached_input_tokens") or 0)
    tokens_out = int(entry.get("output_tokens") or 0) + int(entry.get("cached_output_tokens") or 0)
    text = f"{_role(key)} {entry.get('spec')}: {requests:,} answers"
    if cached:
        text += f" ({cached:,} from the cache, free)"
    sent = entry.get("requests_sent")
    if isinstance(sent, int) and sent != requests - cached:
        extra = sent - (requests - cached)
        most = entry.get("unanswered_cost_usd_max")
        spent = (f"; counted as spent: up to {format_cost(most)} at the mean cost of an answer" if most
                 else "; their tokens are unknown" if extra > 0 and "unanswered_cost_usd_max" in entry else "")
        text += (f", {sent:,} requests sent ({extra:,} unanswered: retried, failed or lost to an interruption{spent})"
                 if extra > 0 else f", {sent:,} requests sent")
    text += f", {tokens_in:,} input + {tokens_out:,} output tokens, {format_cost(entry.get('cost_usd'))}"
    return text


def cost_note(summary: dict[str, Any]) -> str | None:
    """'Cost: $0.0123 (model openai:gpt-4o-mini: 24 requests, ...; judge ...)', or None for a summary
    without usage (written by an older version)."""
    usage: dict[str, Any] = summary.get("usage") or {}
    if not usage:
        return None
    parts = [_entry_text(key, entry) for key, entry in usage.items() if isinstance(entry, dict)]
    total = summary.get("cost_usd")
    unknown = "" if total is not None else (
        " (a model's price is unknown: add it to a prices file named by $UXBENCH_PRICES)")
    most = summary.get("cost_usd_max")
    if total is not None and most is not None and most > total:
        unknown = f" for the answers, up to {format_cost(most)} with the requests sent but unanswered"
    return f"Cost: {format_cost(total)}{unknown}; " + "; ".join(parts) + "."

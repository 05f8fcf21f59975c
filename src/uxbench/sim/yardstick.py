"""The yardstick real users gave: where the real logs carry thumbs or ratings, how well do the mining rules'
reaction labels (the vocabulary `sim validate` compares in) track them, on that log?

- **thumbs** (per assistant turn): of the replies a real user disliked, the share the rules label as followed by
  dissatisfaction (recall of real dislikes), the same share among liked replies (a false-alarm rate), and the
  AUC of the label for a dislike against a like, with a cluster-bootstrap interval over conversations;
- **ratings** (per conversation, turn metadata `rating` with `rating_scale`): the AUC of the conversation's
  dissatisfied-label rate for a low rating (in the lower half of the scale) against a high one.

The primary yardstick is the thumbs where there are any, then the ratings; only where the log has neither do
the mined labels stand alone, and the report says so.
"""

from __future__ import annotations

from typing import Any

from uxbench.metrics.auc import auc
from uxbench.metrics.proportions import wilson_ci
from uxbench.sim.reactions import DISSATISFIED
from uxbench.sim.validate_data import Side


def _share(k: int, n: int) -> dict[str, Any]:
    low, high = wilson_ci(k, n) if n else (None, None)
    return {"value": k / n if n else None, "ci_low": low, "ci_high": high, "k": k, "n": n}


def _thumbs(real: Side, n_boot: int, seed: int) -> dict[str, Any] | None:
    scores: list[float] = []
    disliked: list[bool] = []
    clusters: list[str] = []
    for cluster, labels, thumbs in zip(real.clusters, real.sessions, real.thumbs, strict=True):
        for label, thumb in zip(labels, thumbs, strict=True):
            if thumb in ("like", "dislike") and label != "end":
                scores.append(float(label in DISSATISFIED))
                disliked.append(thumb == "dislike")
                clusters.append(cluster)
    if not scores:
        return None
    k_dis = sum(s for s, d in zip(scores, disliked, strict=True) if d)
    k_like = sum(s for s, d in zip(scores, disliked, strict=True) if not d)
    n_dis = sum(disliked)
    return {"unit": "assistant turns with a thumb and a user message after them",
            "recall_of_dislikes": _share(int(k_dis), n_dis),
            "dissatisfied_after_likes": _share(int(k_like), len(scores) - n_dis),
            "auc": auc(scores, disliked, clusters=clusters, n_boot=n_boot, seed=seed)}


def _ratings(real: Side) -> dict[str, Any] | None:
    rated = [(r, labels) for r, labels in zip(real.ratings, real.sessions, strict=True) if r is not None]
    if not rated:
        return None
    values = [r for r, _ in rated]
    low_end, high_end = real.rating_scale or (min(values), max(values))
    middle = (low_end + high_end) / 2
    scores, low = [], []
    for rating, labels in rated:
        said = [x for x in labels if x != "end"]
        scores.append(sum(x in DISSATISFIED for x in said) / len(said) if said else 0.0)
        low.append(rating < middle)
    return {"unit": "conversations with a rating", "scale": [low_end, high_end],
            "low": f"rating below {middle:g} (the lower half of the scale)", "n_low": sum(low),
            "n_high": len(low) - sum(low),
            "auc": auc(scores, low), "score": "the conversation's share of replies followed by dissatisfaction"}


def yardstick(real: Side, *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Which yardstick the real logs offer and how well the mined labels track it."""
    thumbs, ratings = _thumbs(real, n_boot, seed), _ratings(real)
    primary = "thumbs" if thumbs else "ratings" if ratings else "mined labels"
    out: dict[str, Any] = {"primary": primary, "thumbs": thumbs, "ratings": ratings}
    if primary == "mined labels":
        out["note"] = ("the real logs carry no thumbs and no ratings: the mining rules' labels are the only "
                       "yardstick, with the error rates measured in docs/MINING.md")
    else:
        cell = (thumbs or ratings or {})["auc"]
        who = "the real users' own thumbs" if primary == "thumbs" else "the log's own ratings"
        value = "n/a" if cell["value"] is None else f"{cell['value']:.3f}"
        interval = "" if cell.get("ci_low") is None else f" [{cell['ci_low']:.3f}, {cell['ci_high']:.3f}]"
        out["note"] = (f"{who} are the yardstick; the mined labels track them with AUC {value}{interval} (0.5 = not "
                       "at all)")
        if cell.get("ci_low") is not None and cell["ci_low"] <= 0.5:
            out["caveat"] = (f"the mining rules' labels do not track {who} on this log (AUC {value}{interval}): the "
                             "reaction-based criteria (reaction mix, dissatisfaction gap) say little about "
                             "satisfaction here")
    return out

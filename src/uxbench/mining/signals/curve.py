"""The precision-recall curve of a score against gold flags, the threshold for a target precision, and the
curve drawn as SVG (written here, no dependency) or PNG (matplotlib, the `plot` extra).

A point per distinct score: predicted positive when score >= threshold. Ties share a point, so the curve
never depends on the order of the items.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError
from uxbench.mining.signals.evaluate import prf


def pr_curve(scores: Sequence[float], gold: Sequence[bool]) -> list[dict[str, Any]]:
    """One point per distinct score, highest threshold first: threshold, tp, fp, fn, precision, recall,
    with Wilson CIs (`evaluate.prf`)."""
    if len(scores) != len(gold):
        raise ValueError(f"{len(scores)} scores but {len(gold)} gold flags")
    pairs = sorted(zip(scores, gold, strict=True), key=lambda p: -p[0])
    positives = sum(gold)
    points: list[dict[str, Any]] = []
    tp = fp = 0
    k = 0
    while k < len(pairs):
        threshold = pairs[k][0]
        while k < len(pairs) and pairs[k][0] == threshold:
            tp += pairs[k][1]
            fp += not pairs[k][1]
            k += 1
        points.append({"threshold": threshold, **prf(tp, fp, positives - tp)})
    return points


def threshold_for_precision(points: Sequence[dict[str, Any]], target: float) -> dict[str, Any] | None:
    """The point of highest recall whose precision is at least `target` (the higher threshold on a tie);
    None when no threshold reaches it."""
    best: dict[str, Any] | None = None
    for point in points:
        if point["tp"] and point["precision"] >= target and (best is None or point["recall"] > best["recall"]):
            best = point
    return best


def _svg(points: Sequence[dict[str, Any]], title: str, mark: dict[str, Any] | None) -> str:
    w, h, left, top, size = 480, 420, 60, 40, 340

    def xy(recall: float, precision: float) -> tuple[float, float]:
        return left + recall * size, top + (1 - precision) * size

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
             'font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{left}" y="24" font-size="14">{escape(title)}</text>',
             f'<rect x="{left}" y="{top}" width="{size}" height="{size}" fill="none" stroke="black"/>']
    for k in range(11):
        v = k / 10
        x, y = xy(v, v)
        parts.append(f'<line x1="{x:.1f}" y1="{top + size}" x2="{x:.1f}" y2="{top + size + 4}" stroke="black"/>'
                     f'<text x="{x:.1f}" y="{top + size + 16}" text-anchor="middle">{v:.1f}</text>'
                     f'<line x1="{left - 4}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="black"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    parts.append(f'<text x="{left + size / 2}" y="{top + size + 34}" text-anchor="middle">recall</text>'
                 f'<text x="16" y="{top + size / 2}" text-anchor="middle" '
                 f'transform="rotate(-90 16 {top + size / 2})">precision</text>')
    drawn = [p for p in points if p["precision"] is not None]
    if drawn:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(p["recall"], p["precision"]) for p in drawn))
        parts.append(f'<polyline points="{path}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
        for p in drawn:
            x, y = xy(p["recall"], p["precision"])
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="#1f77b4">'
                         f'<title>threshold {p["threshold"]:.3f}: P {p["precision"]:.2f}, R {p["recall"]:.2f}'
                         '</title></circle>')
    if mark is not None:
        x, y = xy(mark["recall"], mark["precision"])
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="none" stroke="#d62728" stroke-width="2"/>'
                     f'<text x="{x + 8:.1f}" y="{y - 8:.1f}" fill="#d62728">threshold {mark["threshold"]:.3f}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _png(points: Sequence[dict[str, Any]], title: str, mark: dict[str, Any] | None, path: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        raise ConfigError("a PNG curve needs matplotlib: pip install 'uxbench[plot]' (or write .svg, which "
                          "needs nothing)") from None
    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 4.4), dpi=100)
    ax = fig.add_subplot()
    drawn = [p for p in points if p["precision"] is not None]
    ax.plot([p["recall"] for p in drawn], [p["precision"] for p in drawn], marker="o", markersize=3)
    if mark is not None:
        ax.plot([mark["recall"]], [mark["precision"]], "o", markersize=10, fillstyle="none", color="tab:red")
        ax.annotate(f"threshold {mark['threshold']:.3f}", (mark["recall"], mark["precision"]),
                    textcoords="offset points", xytext=(8, 8), color="tab:red")
    ax.set(xlim=(0, 1.02), ylim=(0, 1.02), xlabel="recall", ylabel="precision", title=title)
    ax.grid(alpha=0.3)
    fig.savefig(path, format="png", metadata={"Software": None})


def write_curve(path: Path, points: Sequence[dict[str, Any]], title: str,
                mark: dict[str, Any] | None = None) -> Path:
    """Draw the curve to `path`; `.svg` or `.png` by its suffix."""
    suffix = path.suffix.lower()
    if suffix == ".svg":
        path.write_text(_svg(points, title, mark), encoding="utf-8")
    elif suffix == ".png":
        _png(points, title, mark, path)
    else:
        raise ConfigError(f"{path}: the plot's file name must end in .svg or .png")
    return path

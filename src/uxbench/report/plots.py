"""Plots as PNG or SVG bytes (matplotlib, the `plots` extra, Agg backend: no display needed).

`render(chart, "png" | "svg")` draws a chart of `report.plot_data` and `write(chart, path)` saves it, the format
from the file's suffix. Every bar, point and cell carries its value as a text label (SVG keeps text as text), so
the figure can be read without hovering and checked against the summary it came from. Output is reproducible:
no date in the metadata, a fixed SVG id salt. Chinese labels are drawn in an installed CJK font
(`plot_fonts.py`).
"""

from __future__ import annotations

import dataclasses
import io
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uxbench.errors import ConfigError
from uxbench.report.plot_data import BarChart, Chart, FunnelChart, Heatmap, ReliabilityChart, ScatterChart
from uxbench.report.plot_fonts import has_cjk, plot_fonts

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = ("png", "svg")
INSTALL_HINT = "Plots need matplotlib: pip install 'uxbench[plot]'."


def _figure(width: float, height: float) -> Figure:
    try:
        import matplotlib
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    return fig


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _errors(values: list[float | None], low: list[float | None], high: list[float | None]
            ) -> list[list[float]] | None:
    """Asymmetric error bars (below, above) for matplotlib; None when no bar has a CI."""
    if not any(lo is not None and hi is not None for lo, hi in zip(low, high, strict=True)):
        return None
    below, above = [], []
    for v, lo, hi in zip(values, low, high, strict=True):
        ok = v is not None and lo is not None and hi is not None
        below.append(max(0.0, (v or 0.0) - (lo or 0.0)) if ok else 0.0)
        above.append(max(0.0, (hi or 0.0) - (v or 0.0)) if ok else 0.0)
    return [below, above]


def _title(ax: Any, text: str, width_in: float, fontsize: int = 10) -> None:
    """The figure's title, centred on the figure (not on the axes, which long tick labels push aside) and wrapped
    to its width, so no part of it is cut off at the edges."""
    import textwrap

    chars = int(width_in * 150 / fontsize)  # about 0.6 em per Latin character at 100 dpi; CJK ones are 1 em
    chars = max(20, int(chars * 0.6) if has_cjk([text]) else chars)
    lines = [wrapped for line in text.split("\n") for wrapped in (textwrap.wrap(line, chars) or [""])]
    ax.figure.suptitle("\n".join(lines), fontsize=fontsize)


def _xticks(ax: Any, labels: list[str]) -> None:
    """Category labels under the x axis, slanted when they would run into each other."""
    slant = len(labels) > 4 or sum(len(label) for label in labels) > 8 * max(1, len(labels)) + 20
    ax.set_xticks(range(len(labels)), labels, rotation=30 if slant else 0, ha="right" if slant else "center")


def _bars(chart: BarChart) -> Figure:
    if chart.lines:
        return _lines(chart)
    n_cat, n_series = len(chart.categories), len(chart.series)
    if chart.horizontal:
        fig = _figure(8, 1.2 + 0.45 * n_cat)
    else:
        longest = max(len(series.name) for series in chart.series) if n_series > 1 else 0
        fig = _figure(max(6.0, 0.08 * longest + 1.0, min(16.0, 1.2 + 0.9 * n_cat * max(1, n_series) ** 0.5)),
                      4.8 + (0.22 * n_series if n_series > 1 else 0))
    ax = fig.add_subplot()
    width = 0.8 / max(1, n_series)
    for s_index, series in enumerate(chart.series):
        positions = [i - 0.4 + width * (s_index + 0.5) for i in range(n_cat)]
        heights = [v if v is not None else 0.0 for v in series.values]
        err = _errors(series.values, series.low, series.high)
        if chart.horizontal:  # counts: whole numbers
            bars = ax.barh(positions, heights, height=width, xerr=err, capsize=3, label=series.name)
            labels = ["n/a" if v is None else f"{v:.0f}" for v in series.values]
        else:
            bars = ax.bar(positions, heights, width=width, yerr=err, capsize=3, label=series.name)
            labels = [_fmt(v) + (f"\nn={n}" if n_series <= 3 else "")
                      for v, n in zip(series.values, series.n, strict=True)]
        ax.bar_label(bars, labels=labels, fontsize=7, padding=2)
    ticks = list(range(n_cat))
    if chart.horizontal:
        ax.set_yticks(ticks, chart.categories)
        ax.invert_yaxis()
        ax.set_xlabel(chart.xlabel)
        ax.margins(x=0.12)
    else:
        _xticks(ax, chart.categories)
        ax.set_ylabel(chart.ylabel)
        ax.set_ylim(0, 115)  # percentages, with room for the labels above a bar at 100
    if n_series > 1:  # under the figure: inside the axes it would hide the labels of the tallest bars, and the
        # constrained layout keeps it clear of the category labels however long and slanted they are
        fig.legend(fontsize=8, loc="outside lower center", frameon=False)
    _title(ax, chart.title, fig.get_figwidth())
    return fig


def _lines(chart: BarChart) -> Figure:
    """One line per series over the categories (days), the CI as a band where the series has one."""
    fig = _figure(max(7.5, min(16.0, 3.5 + 0.6 * len(chart.categories))), 4.8)
    ax = fig.add_subplot()
    xs = list(range(len(chart.categories)))
    for series in chart.series:
        ys = [math.nan if v is None else v for v in series.values]
        has_ci = any(lo is not None for lo in series.low)
        (line,) = ax.plot(xs, ys, marker="o", label=series.name + (" (95% CI band)" if has_ci else ""))
        if has_ci:
            lows = [math.nan if v is None else v for v in series.low]
            highs = [math.nan if v is None else v for v in series.high]
            ax.fill_between(xs, lows, highs, alpha=0.15, color=line.get_color())
        for x, v in zip(xs, series.values, strict=True):
            if v is not None:
                ax.annotate(_fmt(v), (x, v), textcoords="offset points", xytext=(0, 5), fontsize=6, ha="center")
    _xticks(ax, chart.categories)
    ax.set_ylabel(chart.ylabel)
    ax.set_ylim(0, 105)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _title(ax, chart.title, fig.get_figwidth())
    return fig


def _reliability(chart: ReliabilityChart) -> Figure:
    fig = _figure(6, 6)
    ax = fig.add_subplot()
    ax.plot([0, 100], [0, 100], linestyle="--", color="grey", linewidth=1, label="perfect calibration")
    for curve in chart.curves:
        scores = ", ".join(part for part in (
            f"ECE {curve.ece:.3f}" if curve.ece is not None else "",
            f"Brier {curve.brier:.3f}" if curve.brier is not None else "") if part)
        sizes = [20 + 180 * math.sqrt(n / max(curve.n)) for n in curve.n]
        ax.plot(curve.x, curve.y, marker="", linewidth=1.5, label=f"{curve.name} ({scores})" if scores else curve.name)
        ax.scatter(curve.x, curve.y, s=sizes, alpha=0.6)
        for x, y, n in zip(curve.x, curve.y, curve.n, strict=True):
            # Upright labels, below a point in the upper half and above one in the lower half: neighbouring bins
            # (a tenth of the axis apart) never run into each other, and no label leaves the axes.
            high = y > 50
            ax.annotate(f"{y:.1f} (n={n})", (x, y), textcoords="offset points", xytext=(0, -9 if high else 9),
                        rotation=90, ha="center", va="top" if high else "bottom", fontsize=7)
    ax.set_xlim(0, 100)
    ax.set_ylim(-2, 105)
    ax.set_xlabel("mean p(good) in the bin, %")
    ax.set_ylabel("good cases in the bin, %")
    fig.legend(fontsize=8, loc="outside lower center", frameon=False)  # under the figure: clear of every point
    _title(ax, chart.title, fig.get_figwidth())
    return fig


def _heatmap(chart: Heatmap) -> Figure:
    import numpy as np

    rows, cols = len(chart.rows), len(chart.columns)
    fig = _figure(max(5.0, 2.5 + 1.3 * cols), 3.2 + 0.7 * rows)
    ax = fig.add_subplot()
    grid = np.array([[np.nan if v is None else v for v in row] for row in chart.values], dtype=float)
    image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    for i in range(rows):
        for j in range(cols):
            value = chart.values[i][j]
            text = f"{_fmt(value)}{chart.marks[i][j]}\nn={chart.n[i][j]}" if value is not None else "n/a"
            light = value is not None and value < 60
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if light else "black")
    _xticks(ax, chart.columns)
    ax.set_yticks(range(rows), chart.rows)
    ax.set_xlabel("model judged")
    ax.set_ylabel("judge")
    fig.colorbar(image, ax=ax, label="Good % of scored")
    _title(ax, chart.title, fig.get_figwidth())
    return fig


def _scatter(chart: ScatterChart) -> Figure:
    fig = _figure(7, 4.8)
    ax = fig.add_subplot()
    xs = [p.x for p in chart.points]
    ys = [p.y for p in chart.points]
    err = _errors([p.y for p in chart.points], [p.low for p in chart.points], [p.high for p in chart.points])
    ax.errorbar(xs, ys, yerr=err, fmt="o", capsize=3)
    low, high = min(xs, default=0.0), max(xs, default=0.0)
    for p in chart.points:
        n = f" (n={p.n})" if p.n is not None else ""
        right = high > low and p.x > low + 0.6 * (high - low)  # labelled leftwards: inside the axes
        ax.annotate(f"{p.label} {p.y:.1f}{n}", (p.x, p.y), textcoords="offset points", xytext=(-5 if right else 5, 5),
                    ha="right" if right else "left", fontsize=7)
    ax.margins(x=0.08)
    if chart.x_is_date:
        import datetime as dt

        ticks = sorted(set(xs))
        ax.set_xticks(ticks, [dt.date.fromordinal(int(t)).isoformat() for t in ticks], rotation=30, ha="right")
    ax.set_xlabel(chart.xlabel)
    ax.set_ylabel(chart.ylabel)
    notes = [chart.note] if chart.note else []
    if chart.left_out:
        notes.append("not placed (unknown in the model table): " + ", ".join(chart.left_out))
    _title(ax, chart.title + ("\n" + "; ".join(notes) if notes else ""), 7, fontsize=9)
    return fig


def _funnel(chart: FunnelChart) -> Figure:
    """One horizontal bar panel per unit, each with its own count axis (rows, conversations and replies never
    share one), the steps top to bottom in pipeline order, each bar labelled with its count."""
    import textwrap

    from matplotlib.ticker import MaxNLocator

    heights = [0.75 + 0.42 * len(panel.steps) for panel in chart.panels]
    fig = _figure(8, 0.6 + sum(heights))
    axes = fig.subplots(len(chart.panels), 1, gridspec_kw={"height_ratios": heights}, squeeze=False)[:, 0]
    for ax, panel in zip(axes, chart.panels, strict=True):
        counts = [n for _, n in panel.steps]
        bars = ax.barh(range(len(counts)), counts, height=0.6)
        ax.bar_label(bars, labels=[f"{n:,}" for n in counts], fontsize=7, padding=2)
        ax.set_yticks(range(len(counts)), [label for label, _ in panel.steps])
        ax.invert_yaxis()
        ax.set_xlim(0, max(1, max(counts)) * 1.15)
        title = panel.title + (f" ({panel.note})" if panel.note else "")
        ax.set_title("\n".join(textwrap.wrap(title, 95)), fontsize=9, loc="left")
        ax.set_xlabel(panel.unit, fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.tick_params(labelsize=8)
    fig.suptitle(chart.title, fontsize=10)
    return fig


def _strings(value: Any) -> Iterator[str]:
    """Every string of a chart (its title, categories, labels...)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _draw(chart: Chart) -> Figure:
    if isinstance(chart, BarChart):
        return _bars(chart)
    if isinstance(chart, ReliabilityChart):
        return _reliability(chart)
    if isinstance(chart, Heatmap):
        return _heatmap(chart)
    if isinstance(chart, FunnelChart):
        return _funnel(chart)
    return _scatter(chart)


def figure(chart: Chart) -> Figure:
    """A matplotlib Figure of `chart` (not attached to pyplot, so nothing is kept between calls); its text uses
    DejaVu Sans with an installed CJK font as the fallback."""
    with plot_fonts(_strings(dataclasses.asdict(chart))):
        return _draw(chart)


def render(chart: Chart, fmt: str = "png") -> bytes:
    """The chart as PNG or SVG bytes."""
    if fmt not in FORMATS:
        raise ConfigError(f"Plot format must be png or svg, not {fmt!r}.")
    buf = io.BytesIO()
    metadata: dict[str, Any] = {"Date": None} if fmt == "svg" else {"Software": None}
    import matplotlib

    with plot_fonts(_strings(dataclasses.asdict(chart))):
        fig = _draw(chart)
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "uxbench"}):
            fig.savefig(buf, format=fmt, metadata=metadata)
    return buf.getvalue()


def write(chart: Chart, path: str | Path) -> Path:
    """Save the chart to `path`; the format comes from its suffix (.png or .svg)."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ConfigError(f"{path}: the file name must end in .png or .svg.")
    data = render(chart, fmt)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path

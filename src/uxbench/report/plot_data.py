"""What each plot shows, as plain data taken from the files uxbench writes (no matplotlib here).

Every figure is in percent (the tables' unit) and keeps its 95% CI and n, so `report.plots` draws exactly these
values and a test (or the web app) can compare them with `summary.json`, the bias report, the leaderboard or the
mining report without parsing a picture.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError, UxbenchError
from uxbench.report.funnel import FunnelChart, funnel

__all__ = ["KINDS", "BarChart", "Chart", "Curve", "FunnelChart", "Heatmap", "Point", "ReliabilityChart",
           "ScatterChart", "Series", "chart_for", "funnel", "reliability", "scaling", "scenario_bars",
           "self_preference", "signal_rates"]

KINDS = ("scenario", "reliability", "selfpref", "scaling", "funnel", "signals")
_RATE_NAMES = {"good_pct": "Good %", "recovery_rate": "Recovery Rate %"}
_TASK_TITLES = {"judge": "Task 1, UX Judge", "eval": "Task 2, UX Eval", "recovery": "Task 3, UX Recovery"}


@dataclass
class Series:
    """One set of bars or one line: a value per category with its CI (None where undefined) and n."""

    name: str
    values: list[float | None]
    low: list[float | None]
    high: list[float | None]
    n: list[int]


@dataclass
class BarChart:
    title: str
    ylabel: str
    categories: list[str]
    series: list[Series]
    horizontal: bool = False
    xlabel: str = ""
    lines: bool = False
    """Draw each series as a line over the categories (days) instead of bars."""


@dataclass
class Curve:
    """A reliability curve: per non-empty bin, mean p(good) (x) and the share of good cases (y), in percent."""

    name: str
    x: list[float]
    y: list[float]
    n: list[int]
    ece: float | None
    brier: float | None


@dataclass
class ReliabilityChart:
    title: str
    curves: list[Curve]


@dataclass
class Heatmap:
    """rows = judges, columns = candidate models; values in percent; marks '*' same family, '+' same org."""

    title: str
    rows: list[str]
    columns: list[str]
    values: list[list[float | None]]
    n: list[list[int]]
    marks: list[list[str]]


@dataclass
class Point:
    label: str
    x: float
    y: float
    low: float | None
    high: float | None
    n: int | None = None
    """The sample size behind y (labelled beside the point)."""


@dataclass
class ScatterChart:
    title: str
    xlabel: str
    ylabel: str
    points: list[Point]
    x_is_date: bool = False
    """x is a date's proleptic ordinal (`date.toordinal()`)."""
    note: str = ""
    left_out: list[str] = field(default_factory=list)


Chart = BarChart | ReliabilityChart | Heatmap | ScatterChart | FunnelChart


def _p(cell: dict[str, Any] | None, key: str = "value") -> float | None:
    value = (cell or {}).get(key)
    return None if value is None else 100.0 * float(value)


def _summaries(paths: list[str]) -> list[dict[str, Any]]:
    """The checked summary of every finished run among `paths` (any task)."""
    from uxbench.report.compare import open_run_store
    from uxbench.report.discover import discover
    from uxbench.runs.store import SUMMARY
    from uxbench.runs.summary import check_summary

    found = discover(paths)
    if not found.runs:
        raise UxbenchError("No finished run directory among " + ", ".join(paths) + ".")
    out = []
    for path in found.runs:
        store = open_run_store(path)
        try:
            summary = store.read_summary()
        finally:
            store.close()
        if summary is None:
            raise UxbenchError(f"{path} has no {SUMMARY}: the run has not finished.")
        check_summary(summary, str(path / SUMMARY))
        out.append(summary)
    return out


def _labels(summaries: list[dict[str, Any]]) -> list[str]:
    """Each run's model, with its run id when a model appears twice."""
    models = [str(s.get("model")) for s in summaries]
    return [m if models.count(m) == 1 else f"{m} ({s.get('run_id')})" for m, s in zip(models, summaries, strict=True)]


def scenario_bars(summaries: list[dict[str, Any]], by: str = "scenario") -> BarChart:
    """Task 1: Avg-Acc (all cases) per scenario of each run; Tasks 2/3: Good % (Recovery Rate) of the scored
    replies per scenario of each run x judge. Scenarios are ordered by their total n, largest first."""
    tasks = {str(s.get("task")) for s in summaries}
    if len(tasks) != 1:
        raise ConfigError(f"--kind scenario plots one task at a time; these runs hold {', '.join(sorted(tasks))}.")
    task = tasks.pop()
    cells: list[tuple[str, dict[str, dict[str, Any]]]] = []  # (series name, {scenario: {value, ci.., n}})
    for label, s in zip(_labels(summaries), summaries, strict=True):
        if task == "judge":
            values = ((s.get("metrics") or {}).get("breakdowns") or {}).get(by) or {}
            cells.append((label, {k: {**(v.get("avg_acc") or {}), "n": v.get("n", 0)} for k, v in values.items()}))
            continue
        judges = s.get("judges") or {}
        for key, j in judges.items():
            values = ((j.get("metrics") or {}).get("breakdowns") or {}).get(by) or {}
            name = label if len(judges) == 1 else f"{label}, judge {j.get('spec') or key}"
            cells.append((name, {k: {**(v.get("good_rate_scored_only") or {}), "n": v.get("n", 0)}
                                 for k, v in values.items()}))
    totals: dict[str, int] = {}
    for _, by_key in cells:
        for k, v in by_key.items():
            totals[k] = totals.get(k, 0) + int(v.get("n") or 0)
    if not totals:
        raise UxbenchError(f"No {by} breakdown in these runs" + ("" if task == "judge" else
                                                                 " (Tasks 2/3: score them first)") + ".")
    categories = sorted(totals, key=lambda k: (-totals[k], k))
    series = [Series(name, [_p(c.get(k)) for k in categories], [_p(c.get(k), "ci_low") for k in categories],
                     [_p(c.get(k), "ci_high") for k in categories], [int((c.get(k) or {}).get("n") or 0)
                                                                      for k in categories])
              for name, c in cells]
    metric = "Avg-Acc % (all cases)" if task == "judge" else \
        f"{_RATE_NAMES.get(str(summaries[0].get('rate_name')), 'Good %')} of scored"
    return BarChart(title=f"{_TASK_TITLES.get(task, task)}: {metric} by {by} (95% CI)", ylabel=metric,
                    categories=categories, series=series)


def reliability(summaries: list[dict[str, Any]]) -> ReliabilityChart:
    """Task 1 runs with probability verdicts: the calibration bins their summary holds."""
    curves = []
    for label, s in zip(_labels(summaries), summaries, strict=True):
        cal = s.get("calibration")
        if s.get("task") != "judge" or not isinstance(cal, dict) or not cal.get("n"):
            continue
        bins = [b for b in cal.get("bins") or [] if b.get("n")]
        curves.append(Curve(name=label, x=[100 * b["mean_p"] for b in bins], y=[100 * b["good_rate"] for b in bins],
                            n=[int(b["n"]) for b in bins], ece=cal.get("ece"), brier=cal.get("brier")))
    if not curves:
        raise UxbenchError("No run here has probability verdicts (Task 1 with --verdict-from logprobs), so there "
                           "is no reliability diagram to draw.")
    return ReliabilityChart(title="Task 1 reliability: share of good cases per p(good) bin", curves=curves)


def _pick_task(sections: dict[str, Any], task: str | None, what: str) -> str:
    if task is not None:
        if task in sections:
            return task
        # a leaderboard has one table per task and data set ("eval-1a2b3c4d"): a task name picks its only one
        boards = [key for key, section in sections.items() if isinstance(section, dict) and section.get("task") == task]
        if len(boards) == 1:
            return boards[0]
        if boards:
            raise ConfigError(f"The runs hold {len(boards)} data sets for --task {task}: pass one of "
                              f"{', '.join(boards)}.")
        raise ConfigError(f"No {what} for --task {task}; these runs have: {', '.join(sections) or 'none'}.")
    if not sections:
        raise UxbenchError(f"No {what} in these runs.")
    return next(iter(sections))


def self_preference(report: dict[str, Any], task: str | None = None) -> Heatmap:
    """The self-preference matrix of `report.bias.bias_report` for one task (default: the first)."""
    task = _pick_task(report.get("tasks") or {}, task, "scored Task 2/3 runs")
    matrix = report["tasks"][task]["self_preference"]
    judges, cands = matrix["judges"], matrix["candidates"]
    values, ns, marks = [], [], []
    for j in judges:
        row = matrix["cells"].get(j["key"]) or {}
        values.append([_p((row.get(c["label"]) or {}).get("rate")) for c in cands])
        ns.append([int(((row.get(c["label"]) or {}).get("rate") or {}).get("n") or 0) for c in cands])
        marks.append([str((row.get(c["label"]) or {}).get("relation") or "") for c in cands])
    return Heatmap(title=f"{_TASK_TITLES[task]}: Good % of scored, judge x model\n* same family, + same organisation",
                   rows=[j["label"] for j in judges], columns=[c["label"] for c in cands], values=values, n=ns,
                   marks=marks)


def scaling(board: dict[str, Any], task: str | None = None, by: str = "release") -> ScatterChart:
    """Each model's leaderboard figure against its release date (`by` release), size class (`by` size) or parameter
    count (`by` params), with the trend (Spearman's rho) the leaderboard computed."""
    if by not in ("release", "size", "params"):
        raise ConfigError(f"--by must be release, size or params, not {by!r}.")
    task = _pick_task(board.get("tasks") or {}, task, "leaderboard task")
    section = board["tasks"][task]
    if by not in section["trends"]:
        raise UxbenchError("No model here has a parameter count in the model table (data/models.yaml, "
                           "$UXBENCH_MODELS): plot --by size instead.")
    trend = section["trends"][by]
    rows = {r["model"]: r for r in section["rows"]}
    points = []
    for model in trend["models"]:
        row = rows[model]
        if by == "release":
            import datetime as dt

            x = float(dt.date.fromisoformat(row["released"]).toordinal())
        else:
            from uxbench.data.model_meta import SIZE_ORDER

            x = float(row["params_b"]) if trend["by"] == "params" else float(SIZE_ORDER[row["size"]])
        m = row["metric"]
        points.append(Point(label=model, x=x, y=_p(m) or 0.0, low=_p(m, "ci_low"), high=_p(m, "ci_high"),
                            n=m.get("n")))
    if not points:
        known = {"release": "release date", "size": "size", "params": "parameter count"}[by]
        raise UxbenchError(f"No model here has a known {known} in the model table (data/models.yaml, "
                           "$UXBENCH_MODELS).")
    from uxbench.report.leaderboard_render import trend_text

    note = "Trend: " + trend_text(trend)
    xlabel = {"release": "release date", "params": "parameters (billions)", "size": "size class"}[trend["by"]]
    return ScatterChart(title=f"{section['title']}: {section['metric']} by {xlabel}", xlabel=xlabel,
                        ylabel=section["metric"], points=points, x_is_date=by == "release", note=note,
                        left_out=list(trend.get("left_out") or []))


def signal_rates(report: Any, signals: tuple[str, ...] | None = None) -> BarChart:
    """Per day of a `mining.report.MiningReport`: the dissatisfied rate (Wilson CI) and each signal's rate over
    the turns where it could be computed. Signals that never fired, and days without a time, are left out."""
    from uxbench.mining.report import NO_TIME, TABLE_SIGNALS

    days = [d for d in report.by_day if d.key != NO_TIME]
    if not days:
        raise UxbenchError("No reply in this mining run has a timestamp, so there are no rates over time.")
    series = [Series("dissatisfied", [_pct(d.dissatisfied_rate) for d in days],
                     [_pct(d.dissatisfied_ci[0]) if d.dissatisfied_ci else None for d in days],
                     [_pct(d.dissatisfied_ci[1]) if d.dissatisfied_ci else None for d in days],
                     [d.turns for d in days])]
    for name in signals or TABLE_SIGNALS:
        values = [_pct(d.signals.get(name)) for d in days]
        if any(v for v in values):
            series.append(Series(name, values, [None] * len(days), [None] * len(days), [d.turns for d in days]))
    return BarChart(title="Signal rates per day (% of replies where each could be computed)", ylabel="% of replies",
                    categories=[d.key for d in days], series=series, lines=True)


def _pct(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


def _mining_dir(paths: list[str]) -> Path:
    if len(paths) != 1:
        raise ConfigError("--kind funnel and signals plot one mining output directory (from `uxbench mine run`).")
    path = Path(paths[0])
    if not (path / "stage_counts.json").is_file() and not (path / "signals.parquet").is_file():
        raise UxbenchError(f"{path} is not a mining output directory (no stage_counts.json or signals.parquet): "
                           "run `uxbench mine run` first.")
    return path


def chart_for(kind: str, paths: list[str], *, task: str | None = None, by: str = "release",
              n_boot: int = 1000, seed: int = 0) -> Chart:
    """The chart `uxbench plot --kind KIND PATHS...` draws."""
    if kind not in KINDS:
        import difflib

        close = difflib.get_close_matches(kind, KINDS, n=1)
        raise ConfigError(f"Unknown plot kind {kind!r}; kinds: {', '.join(KINDS)}."
                          + (f" Did you mean '{close[0]}'?" if close else ""))
    mining = [p for p in paths if (Path(p) / "stage_counts.json").is_file()]
    if kind not in ("funnel", "signals") and mining:
        raise ConfigError(f"{mining[0]} is a mining output directory: plot it with --kind funnel or signals.")
    if kind == "scenario":
        return scenario_bars(_summaries(paths))
    if kind == "reliability":
        return reliability(_summaries(paths))
    if kind == "selfpref":
        from uxbench.report.bias import bias_report

        return self_preference(bias_report(paths, n_boot=n_boot, seed=seed), task)
    if kind == "scaling":
        from uxbench.report.leaderboard import leaderboard

        return scaling(leaderboard(paths, n_boot=n_boot, seed=seed), task, by)
    path = _mining_dir(paths)
    if kind == "funnel":
        import orjson

        counts_path = path / "stage_counts.json"
        if not counts_path.is_file():
            raise UxbenchError(f"{path} has no stage_counts.json: the mining run has not finished.")
        return funnel(orjson.loads(counts_path.read_bytes()))
    from uxbench.mining.report import build_report

    return signal_rates(build_report(path))

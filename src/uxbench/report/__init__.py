"""Reports over finished runs: comparison tables, paired tests, rendering. Reads run stores only."""

from uxbench.report.compare import RunView, compare_runs, load_run, report_from_summaries, run_row
from uxbench.report.render import FORMATS, ReportFormat, render, render_summary

__all__ = [
    "FORMATS",
    "ReportFormat",
    "RunView",
    "compare_runs",
    "load_run",
    "render",
    "render_summary",
    "report_from_summaries",
    "run_row",
]

"""The mining funnel of a real log: `uxbench mine run --no-llm` on 400 rows of the ShareGPT development log; every
panel counts one unit, its steps in pipeline order, and no step exceeds the one before (`report.funnel`)."""

from __future__ import annotations

import itertools
from pathlib import Path

from signals_dev_support import signals_dev
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.mining.report import build_report
from uxbench.report.funnel import funnel_panels


def test_the_funnel_of_a_real_log_never_goes_back_up(tmp_path: Path) -> None:
    dev = signals_dev()
    log = tmp_path / "log.jsonl"
    with dev.log.open(encoding="utf-8") as src:
        log.write_text("".join(itertools.islice(src, 400)), encoding="utf-8")
    out = tmp_path / "mined"
    result = CliRunner().invoke(app, ["mine", "run", str(log), "--out", str(out), "--no-llm", "--workers", "1"])
    assert result.exit_code == 0, result.output
    counts = build_report(out).stage_counts
    panels = funnel_panels(counts)
    assert [p.unit for p in panels] == ["conversations", "replies"]  # no agents ran: no case panel
    for panel in panels:
        values = [n for _, n in panel.steps]
        assert values == sorted(values, reverse=True), panel
        assert values[0] > 0
    assert panels[0].steps[0] == ("grouped from the log", counts["sessions"]["sessions"])
    assert panels[0].note == f"from {counts['ingest']['rows']:,} log rows"
    replies = dict(panels[1].steps)
    assert replies["met with dissatisfaction"] == counts["signals"]["dissatisfied_turns"] > 0

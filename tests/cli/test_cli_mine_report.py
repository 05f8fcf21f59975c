"""`uxbench mine report` reads right: tables fit 80 columns without cutting a figure, every rate names its
denominator, signals the log does not record are n/a (not 0%), no table repeats the overall row under an
unlabelled key, and `mine run` ends by saying what to run next."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_support import invoke, write_jsonl

WRONG = "That is wrong, it is not what I asked about the printer settings."


def _conversation(cid: str, day: int, complain: bool, *, stamp: bool = True, feedback: bool = True
                  ) -> list[dict[str, Any]]:
    texts = [("user", "How do I change the default printer on my laptop?"),
             ("assistant", "Open the settings, choose printers, and pick the default one from the list."),
             ("user", WRONG if complain else "Thanks, that worked perfectly.")]
    rows = []
    for i, (role, text) in enumerate(texts):
        row: dict[str, Any] = {"conversation_id": cid, "turn_index": i, "role": role, "content": text}
        if stamp:
            row["created_at"] = f"2024-05-0{day}T10:00:{10 * i:02d}+00:00"
        if feedback and role == "assistant" and complain:
            row["feedback"] = "dislike"
        rows.append(row)
    return rows


def _mine(tmp_path: Path, rows: list[dict[str, Any]]) -> tuple[Path, str]:
    out = tmp_path / "out"
    result = invoke("mine", "run", write_jsonl(tmp_path / "log.jsonl", rows), "--out", out, "--no-llm",
                    "--workers", "1", "--quiet")
    assert result.exit_code == 0, result.output
    return out, result.stdout


def _report(out: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke("mine", "report", out, *extra)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_busy_log_fits_80_columns_and_names_denominators(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [r for i in range(140) for r in _conversation(f"a{i:03d}", 1, i % 4 == 0)]
    rows += [r for i in range(139) for r in _conversation(f"b{i:03d}", 2, i % 3 == 0)]
    out, stdout = _mine(tmp_path, rows)
    assert f"Next: `uxbench mine report {out}`" in stdout and f"`uxbench view {out}`" in stdout
    text = _report(out, monkeypatch)
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    assert "Dissatisfied: 82 of the 279 replies" in text
    assert "fired / computable" in text and "thumbs_down" in text
    report = json.loads(invoke("mine", "report", out, "--format", "json").stdout)
    day1, day2 = report["by_day"]
    assert (day1["key"], day1["turns"], day2["turns"]) == ("2024-05-01", 140, 139)
    assert f"│ 2024-05-02 │     {day2['turns']} │" in text  # the count whole (it used to read "139…")
    audit = invoke("mine", "audit", out).stdout  # COLUMNS=80 from _report
    assert max(len(line) for line in audit.splitlines()) <= 80 and "…" not in audit
    assert "error_diagnosis" in audit and "--format md or json show everything" in " ".join(audit.split())
    complaint = report["overall"]["counts"]["complaint"]
    assert complaint == [82, 279] and re.search(r"│ complaint +│ +82 / 279 │ +29\.4 \[", text)


def test_signals_the_log_does_not_record_are_na(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [r for i in range(6) for r in _conversation(f"c{i}", 1, i % 2 == 0, stamp=False, feedback=False)]
    out, _ = _mine(tmp_path, rows)
    text = _report(out, monkeypatch)
    assert "The log records no regenerations and no thumbs" in text
    assert "n/a: no thumbs in the log" in text and "n/a: no regenerations in the log" in text
    assert "0.0 [" not in text.split("thumbs_down", 1)[1].split("\n", 1)[0]  # not a measured 0%
    # no table that only repeats the overall figures under "(unlabelled)" or "(no time)"
    assert "No per-day table: the log has no timestamps." in text and "(no time)" not in text
    assert "No per-scenario table" in text and "│ (unlabelled)" not in text
    report = json.loads(invoke("mine", "report", out, "--format", "json").stdout)
    assert report["overall"]["signals"]["thumbs_down"] is None and report["not_recorded"][:1] == ["copied"]
    md = invoke("mine", "report", out, "--format", "md").stdout
    assert "| thumbs_down | — | n/a: no thumbs in the log |" in md


def test_the_scenario_table_keeps_long_names_and_counts_whole() -> None:
    from uxbench.mining.report import MiningReport, SignalRates
    from uxbench.mining.report_text import report_table

    def rates(key: str, turns: int, bad: int, complaints: tuple[int, int]) -> SignalRates:
        counts: dict[str, tuple[int, int] | None] = {"complaint": complaints, "thumbs_down": None}
        return SignalRates(key=key, turns=turns, dissatisfied=bad, dissatisfied_rate=bad / turns,
                           dissatisfied_ci=(0.0, 1.0), signals={}, counts=counts)

    scenarios = [rates("information_and_knowledge_queries_about_products", 1391, 139, (120, 1200)),
                 rates("emotional_support", 139, 13, (13, 130))]
    report = MiningReport(directory="out", conversations=900, assistant_turns=1530, dissatisfied_turns=152,
                          overall=rates("all replies", 1530, 152, (133, 1330)), not_recorded=["thumbs_down"],
                          scenarios_from="agents", by_scenario=scenarios, by_day=[], patterns_from="signals")
    text = report_table(report, 80)
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    flat = " ".join(text.split())
    assert "│ 1391 │ 10.0 [" in flat and "complaint 120/1200" in flat and "│ 139 │ 9.4 [" in flat
    assert "information_and_know" in text  # a name longer than its column folds; the figures stay whole
    assert "No failure patterns: no reply was dissatisfied." in text and "% of 0" not in text

"""`uxbench mine eval-signals` on a small log and labels written here: every figure equals a hand computation,
an item without a matching reply is counted (as not flagged), never skipped, and bad labels name their line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_signals_support import LABELS, wilson, write_fixture
from typer.testing import CliRunner

from extra_skip import require_extra
from uxbench.cli.main import app
from uxbench.errors import DataError
from uxbench.mining.deid import SALT_ENV
from uxbench.mining.signals.real_eval import load_labels

runner = CliRunner()

@pytest.fixture(scope="module")
def fixture_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("eval")
    log, labels = write_fixture(root)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "eval-signals-salt")
        got = runner.invoke(app, ["mine", "eval-signals", "--labels", str(labels), "--log", str(log),
                                  "--split", "all", "--format", "json", "--quiet"])
    assert got.exit_code == 0, got.output
    result: dict[str, Any] = json.loads(got.stdout)
    return result


def _check(m: dict[str, Any], tp: int, fp: int, fn: int) -> None:
    assert (m["tp"], m["fp"], m["fn"]) == (tp, fp, fn)
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    assert m["precision"] == pytest.approx(p) if p is not None else m["precision"] is None
    assert m["recall"] == pytest.approx(r) if r is not None else m["recall"] is None
    assert m["f1"] == pytest.approx(2 * p * r / (p + r) if p and r else 0.0)
    if tp + fp:
        assert m["precision_ci"] == pytest.approx(list(wilson(tp, tp + fp)))
    if tp + fn:
        assert m["recall_ci"] == pytest.approx(list(wilson(tp, tp + fn)))


def test_figures_equal_a_hand_computation(fixture_result: dict[str, Any]) -> None:
    r = fixture_result
    # 9 items; c7 (no turn 3), c8 (not in the log) and c9 (dropped) have no matching reply: counted, not skipped
    assert (r["n"], r["n_dissatisfied"], r["n_missing"]) == (9, 5, 3)
    # flagged: c1 (complaint), c2 (repeat), c6 (repeat of a quiz question); gold: c1 c2 c5 c7 c9
    _check(r["signals"]["dissatisfied"], tp=2, fp=1, fn=3)
    assert r["signals"]["dissatisfied"]["precision"] == pytest.approx(2 / 3)
    assert r["signals"]["dissatisfied"]["recall"] == pytest.approx(0.4)
    assert r["signals"]["dissatisfied"]["f1"] == pytest.approx(0.5)
    _check(r["signals"]["complaint"], tp=1, fp=0, fn=1)       # c1 found, c7 missing
    _check(r["signals"]["repeat"], tp=1, fp=1, fn=0)          # c2 right, c6 wrong
    _check(r["signals"]["dismiss"], tp=0, fp=0, fn=1)         # c9 missing
    _check(r["signals"]["praise"], tp=1, fp=0, fn=0)          # c3
    strata = {s: part["signals"]["dissatisfied"] for s, part in r["by_stratum"].items()}
    assert {s: part["n"] for s, part in r["by_stratum"].items()} == {"negative": 3, "random": 4, "similar": 2}
    _check(strata["negative"], tp=1, fp=0, fn=2)   # c1 | c7, c9
    _check(strata["similar"], tp=1, fp=1, fn=0)    # c2 | c6
    _check(strata["random"], tp=0, fp=0, fn=1)     # c5 missed; c3, c4, c8 right
    conf = r["confusion"]
    assert conf["complaint"] == {"complaint": 1, "missing": 1}
    assert conf["repeat"] == {"repeat": 1}
    assert conf["dismiss"] == {"missing": 1}
    assert conf["continue_positive"] == {"other": 1}
    assert conf["continue_neutral"] == {"continue": 1, "missing": 1, "repeat": 1}


def test_errors_are_listed_with_their_evidence(fixture_result: dict[str, Any]) -> None:
    r = fixture_result
    (fp,) = r["false_positives"]
    assert fp["conversation_id"] == "c6" and fp["followup"] == "What is the capital of Australia?"
    assert "repeat" in fp["evidence"] and fp["why"] == "a quiz asks the same question again"
    assert fp["prev_user"] == "What is the capital of Australia?"
    assert sorted(m["conversation_id"] for m in r["misses"]) == ["c5", "c7", "c9"]
    missing = {m["conversation_id"]: m["reason"] for m in r["missing"]}
    assert missing["c8"] == "conversation not in the log"
    assert "no_reply" in missing["c9"] and "prefilter" in missing["c9"]
    assert "turn 3" in missing["c7"]


def test_operating_point_is_chosen_on_dev_and_reported_on_the_split(fixture_result: dict[str, Any]) -> None:
    op = fixture_result["operating_point"]
    assert op["chosen_on"] == "dev" and op["tuned_on_reported"] is True  # split all holds the dev part
    # one point per distinct dissatisfied_score: c1, c2, c6 at 0.9; c5's topic change alone (weak) 0.3; 0
    assert [p["threshold"] for p in fixture_result["curve"]] == [0.9, 0.3, 0.0]
    assert fixture_result["curve"][-1]["recall"] == 1.0


def test_table_markdown_and_plots(tmp_path: Path) -> None:
    log, labels = write_fixture(tmp_path)
    base = ["mine", "eval-signals", "--labels", str(labels), "--log", str(log), "--split", "all", "--quiet"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "eval-signals-salt")
        table = runner.invoke(app, [*base, "--plot", str(tmp_path / "pr.svg")])
        md = runner.invoke(app, [*base, "--format", "md", "--no-errors"])
    assert table.exit_code == 0, table.output
    assert "dissatisfied (any)" in table.stdout and "0.67 [" in table.stdout
    assert "Misses of dissatisfied (3)" in table.stdout
    assert "follow-up: `What is the capital of Australia?`" in table.stdout
    assert "3 without a matching reply" in table.stdout
    assert md.exit_code == 0, md.output
    assert "| dissatisfied (any) | 5 | 3 | 2 | 1 | 3 |" in md.stdout and "Misses" not in md.stdout
    svg = (tmp_path / "pr.svg").read_text()
    assert svg.startswith("<svg") and "<polyline" in svg and svg.rstrip().endswith("</svg>")
    require_extra("plot")  # a PNG curve is matplotlib's (the SVG needs nothing)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "eval-signals-salt")
        png = runner.invoke(app, [*base, "--format", "md", "--no-errors", "--plot", str(tmp_path / "pr.png")])
    assert png.exit_code == 0, png.output
    assert (tmp_path / "pr.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_held_out_split_reports_only_its_conversations(tmp_path: Path) -> None:
    from uxbench.mining.signals.split import split_of

    log, labels = write_fixture(tmp_path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "eval-signals-salt")
        got = runner.invoke(app, ["mine", "eval-signals", "--labels", str(labels), "--log", str(log),
                                  "--format", "json", "--quiet"])
    assert got.exit_code == 0, got.output
    r = json.loads(got.stdout)
    held = [x for x in LABELS if split_of(x["conversation_id"]) == "held-out"]
    assert r["split"] == "held-out" and r["n"] == len(held)
    assert r["operating_point"]["tuned_on_reported"] is False


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        ({"conversation_id": "c", "u2_turn_index": 2, "label": "angry"}, "label", "unknown label"),
        ({"conversation_id": "c", "u2_turn_index": 0, "label": "repeat"}, "u2_turn_index", ">= 1"),
        ({"conversation_id": "c", "label": "repeat"}, "u2_turn_index", "missing field"),
        ({"conversation_id": "c", "u2_turn_index": 2, "label": "repeat", "dissatisfied": False}, "dissatisfied",
         "disagrees"),
        ({"conversation_id": "a", "u2_turn_index": 2, "label": "repeat"}, "u2_turn_index", "line 1 too"),
    ],
)
def test_bad_labels_name_line_and_field(tmp_path: Path, line: dict[str, Any], field: str, words: str) -> None:
    path = tmp_path / "labels.jsonl"
    first = {"conversation_id": "a", "u2_turn_index": 2, "label": "complaint"}
    path.write_text(json.dumps(first) + "\n\n" + json.dumps(line) + "\n")
    with pytest.raises(DataError) as err:
        load_labels(path)
    assert err.value.line == 3 and err.value.field == field and words in str(err.value)


def test_cli_error_for_bad_labels_has_no_traceback(tmp_path: Path) -> None:
    log, _ = write_fixture(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"conversation_id": "c1", "u2_turn_index": 2}\n')
    got = runner.invoke(app, ["mine", "eval-signals", "--labels", str(bad), "--log", str(log)])
    assert got.exit_code != 0 and "Traceback" not in got.output
    assert "line 1" in got.stderr and "label" in got.stderr


def test_threshold_flags_by_the_score_and_a_bad_plot_name_is_an_error(tmp_path: Path) -> None:
    log, labels = write_fixture(tmp_path)
    base = ["mine", "eval-signals", "--labels", str(labels), "--log", str(log), "--split", "all", "--quiet"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "eval-signals-salt")
        low = runner.invoke(app, [*base, "--threshold", "0.25", "--format", "json"])
        jpg = runner.invoke(app, [*base, "--plot", str(tmp_path / "pr.jpg")])
    assert low.exit_code == 0, low.output
    r = json.loads(low.stdout)
    # at 0.25 c5's weak topic change (score 0.3) is flagged too: TP c1 c2 c5, FP c6, FN c7 c9
    d = r["signals"]["dissatisfied"]
    assert (d["tp"], d["fp"], d["fn"]) == (3, 1, 2) and r["threshold"] == 0.25
    assert jpg.exit_code != 0 and "must end in .svg or .png" in jpg.output and "Traceback" not in jpg.output

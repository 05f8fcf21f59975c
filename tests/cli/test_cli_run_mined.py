"""`uxbench run --data OUT/` on a `uxbench mine run` output: its cases/ are the data; an output without cases (a
`--no-llm` run) is an error that names the folder and says why cases need `mine run --model`."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import assert_clean_error, invoke, judge_rows, write_jsonl


def _mining_output(root: Path, *, cases: bool) -> Path:
    out = root / "mined"
    out.mkdir()
    (out / "signals.parquet").write_bytes(b"PAR1")  # the marker of a mining output; not read here
    (out / "manifest.json").write_text("{}", encoding="utf-8")
    if cases:
        rows = judge_rows(12)
        (out / "cases").mkdir()
        write_jsonl(out / "cases" / "task1_judge_bad.jsonl", [r for r in rows if r["ground_truth"] == -1])
        write_jsonl(out / "cases" / "task1_judge_good.jsonl", [r for r in rows if r["ground_truth"] == 1])
    return out


def test_a_mining_output_stands_for_its_cases(tmp_path: Path) -> None:
    out = _mining_output(tmp_path, cases=True)
    via_output = invoke("run", "--data", out, "--model", "scripted:always-good", "--out", tmp_path / "a", "--quiet",
                        "--format", "json")
    via_cases = invoke("run", "--data", out / "cases", "--model", "scripted:always-good", "--out", tmp_path / "b",
                       "--quiet", "--format", "json")
    assert via_output.exit_code == 0 and via_cases.exit_code == 0, via_output.output + via_cases.output
    summaries = [json.loads((tmp_path / name / "summary.json").read_text(encoding="utf-8")) for name in ("a", "b")]
    assert summaries[0]["n_samples"] == summaries[1]["n_samples"] == 12, summaries[0]["n_samples"]
    assert summaries[0]["metrics"] == summaries[1]["metrics"]


def test_an_output_without_cases_says_which_folder_and_why(tmp_path: Path) -> None:
    out = _mining_output(tmp_path, cases=False)
    for data in (out, out / "cases"):
        result = invoke("run", "--data", data, "--model", "scripted:always-good", "--out", tmp_path / "r")
        assert_clean_error(result, f"{out}: is the output of `uxbench mine run` without test cases",
                           f"there is no {out / 'cases'}", "mine run --model PROVIDER:MODEL", "--no-llm")
        assert not (tmp_path / "r").exists()


def test_a_directory_named_cases_elsewhere_is_just_a_directory(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    write_jsonl(cases / "t1.jsonl", judge_rows(4))
    result = invoke("run", "--data", cases, "--model", "scripted:always-good", "--out", tmp_path / "r", "--quiet")
    assert result.exit_code == 0, result.output

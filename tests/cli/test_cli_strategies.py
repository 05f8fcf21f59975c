"""The CLI of recovery strategies (--strategy-model with `uxbench run` and `uxbench score`) and of other prompt
sets read with --data: what a user sees, and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import assert_clean_error, invoke, write_jsonl

PROMPT_SETS = Path(__file__).parents[1] / "data" / "prompt_sets"
ROWS = [
    {"cid": f"r{i}", "history": [{"role": "user", "content": "How long is the train ride?"}],
     "failed_response": "Eight hours.", "user_complaint": reply}
    for i, reply in enumerate(["Sorry, that was wrong: 4.5 hours.", "You're right, it is 4.5 hours.",
                               "Which train do you mean?"])
]
RUN = ("--task", "recovery", "--model", "scripted:echo", "--judge", "scripted:always-good", "--quiet")


def _labels(tmp_path: Path, answer: str) -> Path:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"rules": [], "default": answer}))
    return path


def test_run_with_a_strategy_model_prints_both_classifiers(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "task3.jsonl", ROWS)  # scripted:echo answers with the complaint itself
    labels = _labels(tmp_path, '{"strategy": "agreement"}')
    result = invoke("run", *RUN, "--data", data, "--out", tmp_path / "run",
                    "--strategy-model", f"scripted:file:{labels}")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Recovery strategies: share of the 3 non-empty recoveries" in out
    assert "Recovery Rate % of scored per strategy, primary judge scripted:always-good" in out
    assert f"M1=scripted:file:{labels}" in "".join(out.split())  # named in a note, which may fold the long path
    assert "unparseable" in out
    assert "agreement with hand labels" in out  # the rules' caveat
    apology = next(line for line in out.splitlines() if line.lstrip("│ ").startswith("apology"))
    assert "(1)" in apology and "(0)" in apology  # rules: 1 apology; the model: none


def test_score_labels_an_existing_run_without_a_judge(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "task3.jsonl", ROWS)
    run = tmp_path / "run"
    assert invoke("run", *RUN, "--data", data, "--out", run).exit_code == 0
    unreadable = _labels(tmp_path, "no idea")
    result = invoke("score", run, "--strategy-model", f"scripted:file:{unreadable}", "--quiet")
    assert result.exit_code == 0, result.output  # unparseable answers are counted, not failures
    assert "3 answers unparseable" in result.stdout
    summary = json.loads((run / "summary.json").read_text())
    (key,) = (k for k in summary["recovery_strategies"]["classifiers"] if k != "rules")
    assert summary["recovery_strategies"]["classifiers"][key]["distribution"]["unparseable"]["k"] == 3
    assert len(summary["judges"]) == 1


def test_strategy_options_refused_where_they_mean_nothing(tmp_path: Path) -> None:
    eval_data = write_jsonl(tmp_path / "t2.jsonl", [{"cid": "a", "query": "q"}])
    result = invoke("run", "--task", "eval", "--model", "scripted:echo", "--data", eval_data,
                    "--strategy-model", "scripted:echo", "--out", tmp_path / "r")
    assert_clean_error(result, "--strategy-model labels Task 3 recoveries", "add recovery")
    assert_clean_error(invoke("run", *RUN, "--data", eval_data, "--strategy-arg", "x=1"), "--strategy-arg needs")
    run = tmp_path / "eval-run"
    assert invoke("run", "--task", "eval", "--model", "scripted:echo", "--data", eval_data, "--out", run,
                  "--quiet").exit_code == 0
    assert_clean_error(invoke("score", run), "Name a judge")
    assert_clean_error(invoke("score", run, "--strategy-model", "scripted:echo"), "this run's task is eval")
    assert_clean_error(invoke("score", run, "--strategy-model", "scripted:echo", "--judge-mode", "grm"),
                       "need --judge")
    result = invoke("score", run, "--strategy-modle", "scripted:echo")
    assert result.exit_code == 2 and "--strategy-model" in result.output


def test_prompt_sets_validate_stats_and_run(tmp_path: Path) -> None:
    result = invoke("data", "validate", "--task", "eval", PROMPT_SETS)
    assert result.exit_code == 0, result.output
    assert "15 valid rows, 0 invalid" in result.stdout and "wildbench.jsonl: eval 3" in result.stdout
    stats = invoke("data", "stats", PROMPT_SETS / "mt_bench_question.jsonl", "--format", "json")
    assert stats.exit_code == 0, stats.output
    assert json.loads(stats.stdout)  # counts of the three MT-Bench cases
    run = invoke("run", "--task", "eval", "--model", "scripted:echo", "--judge", "scripted:always-good", "--quiet",
                 "--data", PROMPT_SETS / "arena_hard_v2_question.jsonl", "--out", tmp_path / "run")
    assert run.exit_code == 0, run.output
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["n_generated"] == 3
    wrong = invoke("run", "--task", "recovery", "--model", "scripted:echo", "--quiet",
                   "--data", PROMPT_SETS / "alpaca_eval.json", "--out", tmp_path / "r2")
    assert_clean_error(wrong, "alpaca_eval prompt row", "--task eval")

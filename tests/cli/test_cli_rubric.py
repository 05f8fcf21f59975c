"""`uxbench run --formulation rubric` against a real loopback HTTP server: the verdicts, the tie share in the
printed summary, and clean errors for a wrong rubric name, a broken rubric file and a misplaced --rubric."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import assert_clean_error, invoke, write_jsonl

from uxbench.testing import LoopbackConfig, LoopbackServer


def rubric_rows() -> list[dict[str, object]]:
    """Liked cases answered helpfulness 3-4, disliked ones 1-3: the server says what the reply's marker says."""
    rows = []
    for i, (gold, h) in enumerate([("good", 4), ("good", 3), ("good", 3), ("bad", 3), ("bad", 1), ("bad", 2)]):
        answer = {"helpfulness": h, "correctness": h, "coherence": 3, "complexity": 1, "verbosity": 2}
        rows.append({"cid": f"c{i}", "ground_truth": 1 if gold == "good" else -1, "query": f"question {i}",
                     "agent_response_full": f"reply {i} [[SAY:{json.dumps(answer)}]]"})
    return rows


def test_rubric_run_over_http(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "judge.jsonl", rubric_rows())
    with LoopbackServer(LoopbackConfig()) as server:
        result = invoke("run", "--model", "openai:loopback", "-M", f"base_url={server.base_url}",
                        "-M", "api_key_env=UXBENCH_NO_SUCH_KEY", "--quiet", "--data", data,
                        "--formulation", "rubric", "--rubric", "helpsteer2", "--lang", "en",
                        "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    ties = summary["rubric"]["pair_ties"]
    # scores: liked 0.875, 0.75, 0.75; disliked 0.75, 0.25, 0.5 -> 9 pairs, 2 ties, 6 liked higher
    assert ties["n_pairs"] == 9 and abs(ties["tie_share"]["value"] - 2 / 9) < 1e-9
    assert summary["metrics"]["all"]["good_acc"]["value"] == 1.0
    assert "same score 22.2" in result.stdout and "Rubric helpsteer2" in result.stdout
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert any(k.startswith("rubric:helpsteer2") for k in json.dumps(manifest).split('"'))


def test_rubric_mistakes_are_clean_errors(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "judge.jsonl", rubric_rows())
    base = ("run", "--model", "scripted:always-good", "--quiet", "--data", data, "--out", tmp_path / "r")
    assert_clean_error(invoke(*base, "--formulation", "rubric", "--rubric", "flsk"), "Did you mean 'flask'")
    broken = tmp_path / "mine.yaml"
    broken.write_text("id: mine\ntitle: {en: x, zh: x}\ndimensions: []\n", encoding="utf-8")
    assert_clean_error(invoke(*base, "--formulation", "rubric", "--rubric", broken), "mine.yaml", "dimensions")
    assert_clean_error(invoke(*base, "--rubric", "flask"), "rubric")
    assert_clean_error(invoke(*base, "--formulation", "rubric", "--strategy", "few_shot"), "few_shot")
    assert_clean_error(invoke(*base[:-2], "--task", "eval", "--rubric", "flask", "--out", tmp_path / "e"),
                       "--rubric is a judge option")

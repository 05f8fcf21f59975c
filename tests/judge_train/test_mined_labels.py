"""A judge trained from a `uxbench mine run` output: its card lists every label source with its count and the
measured precision of its signals on the real development set (or why there is none), the precision floor
leaves out labels from weak signals, rows with an empty user message never reach the files, and the test side
is a Task 1 file that `uxbench judge eval` reads back."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from extra_skip import require_extra

require_extra("judge")

from typer.testing import CliRunner  # noqa: E402

from uxbench.cli.main import app  # noqa: E402
from uxbench.judge_train.label_sources import shipped_precision  # noqa: E402

T0 = datetime(2024, 5, 1, 9, tzinfo=timezone.utc)
TOPICS = ["a static IP on Ubuntu", "sorting a list in Python", "descaling a coffee machine", "backing up photos",
          "a cover letter", "a flat bike tyre", "cold brew", "duplicates in Excel"]
WORDS = ("apple river stone cloud lamp garden engine paper violin orange silver window forest bridge candle tiger "
         "rocket pencil harbor meadow castle button planet mirror").split()


def _turn(cid: str, i: int, role: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"conversation_id": cid, "turn_index": i, "role": role, "content": content,
            "created_at": (T0 + timedelta(minutes=3 * i)).isoformat(), **extra}


def _log(path: Path) -> Path:
    rng = random.Random(0)
    rows = []
    for c in range(60):
        cid, topic = f"c{c}", f"{TOPICS[c % len(TOPICS)]} with the {' '.join(rng.sample(WORDS, 6))}"
        question = f"How do I go about {topic}? Please explain the steps."
        rows += [_turn(cid, 0, "user", question),
                 _turn(cid, 1, "assistant", f"For {topic}, first open the settings, then choose the manual option, "
                                            "enter the values, and save.")]
        follow = [
            "That's wrong, it still doesn't work. You didn't answer my question.",  # complaint -> bad
            "Great, thanks! That was really helpful.",  # praise -> good
            "When I open the settings and choose the manual option, which values should I enter?",  # builds_on
            question,  # asked again word for word: repeat -> bad, a signal below the floor
        ][c % 4]
        rows += [_turn(cid, 2, "user", follow), _turn(cid, 3, "assistant", "Enter the values your provider gave.")]
    rows += [_turn("e1", 0, "user", ""), _turn("e1", 1, "assistant", "Hello! How can I help?", feedback="like")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_card_lists_label_sources_with_precision_and_the_test_file_reads_back(tmp_path: Path) -> None:
    from uxbench.mining.pipeline import MineConfig, run_pipeline

    run_pipeline(MineConfig(inputs=(str(_log(tmp_path / "log.jsonl")),), out=str(tmp_path / "mined"), llm=False))
    out = tmp_path / "judge"
    runner = CliRunner()
    trained = runner.invoke(app, ["judge", "train", "--data", str(tmp_path / "mined"), "--out", str(out),
                                  "--encoder", "hashing", "--n-boot", "100", "--quiet"])
    assert trained.exit_code == 0, trained.output
    card = json.loads((out / "model_card.json").read_text())
    labels = card["data"]["labels"]
    by_source = {s["source"]: s for s in labels["sources"]}
    measured = {(e["label"], e["signal"]): e for e in shipped_precision()["signals"]}
    for name, label in (("complaint", "bad"), ("praise", "good"), ("builds_on", "good")):
        source = next(s for s in labels["sources"] if name in s["source"])
        assert source["label"] == label and source["rows"] > 0
        sig = next(s for s in source["signals"] if s["signal"] == name)
        assert sig["held_out"] == measured[(label, name)]["held-out"]  # count, agreement, precision and its CI
    repeat = by_source["signals:repeat"]
    assert repeat["rows"] == 0 and repeat["left_out_by_floor"] > 0  # held-out precision 0.5 < the 0.6 floor
    assert labels["from_rules"] == sum(s["rows"] for s in labels["sources"])
    assert card["data"]["left_out"]["empty user message"] == 1
    md = (out / "MODEL_CARD.md").read_text()
    assert "Where the labels came from" in md and "not with users" in md and "`signals:builds_on` -> good" in md
    assert "agreement with those rules, not with users" in trained.output

    files = [json.loads(line) for name in ("train.jsonl", "test.jsonl") for line in (out / name).open()]
    assert files and all(r["query"].strip() and r["response"].strip() for r in files)
    evaluated = runner.invoke(app, ["judge", "eval", "--judge", f"lite:{out}", "--data", str(out / "test.jsonl"),
                                    "--runs-root", str(tmp_path / "runs"), "--n-boot", "100", "--format", "json",
                                    "--quiet"])
    assert evaluated.exit_code == 0, evaluated.output
    result = json.loads(evaluated.stdout)
    assert result["judge"]["n"] == card["test"]["n"] and result["judge"]["n_errors"] == 0

    # with the floor at 0, every rule label is kept
    kept = runner.invoke(app, ["judge", "train", "--data", str(tmp_path / "mined"), "--out", str(tmp_path / "all"),
                               "--encoder", "hashing", "--n-boot", "50", "--min-label-precision", "0", "--quiet"])
    assert kept.exit_code == 0, kept.output
    all_labels = json.loads((tmp_path / "all" / "model_card.json").read_text())["data"]["labels"]
    assert {s["source"]: s for s in all_labels["sources"]}["signals:repeat"]["rows"] == repeat["left_out_by_floor"]

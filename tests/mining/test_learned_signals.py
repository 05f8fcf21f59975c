"""The learned follow-up classifier: the paired comparison by hand, a JSON round trip (no pickle), and
`uxbench mine train-signals` end to end on a log written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from extra_skip import require_extra
from uxbench.cli.main import app
from uxbench.errors import ConfigError
from uxbench.mining.deid import SALT_ENV
from uxbench.mining.signals.learned import MODEL_FILE, FollowupClassifier, Triple
from uxbench.mining.train_signals import compare

require_extra("learn")

runner = CliRunner()
TOPICS = ["the parser", "my router", "the SQL query", "the regex", "the docker build", "the CSS grid",
          "the bash loop", "the API call", "the unit test", "the cron job", "the import", "the chart",
          "the login form", "the CSV export", "the cache", "the thread pool", "the email filter", "the PDF",
          "the backup", "the font"]


def _triples() -> tuple[list[Triple], list[bool]]:
    bad = [Triple(f"How do I fix {t}?", f"Try this:\n```\nfix({k})\n```", f"That is wrong, {t} still fails "
                  f"with error {k}.") for k, t in enumerate(TOPICS)]
    good = [Triple(f"How do I fix {t}?", f"Try this:\n```\nfix({k})\n```", f"Thanks! Now do the same for "
                   f"item {k}.") for k, t in enumerate(TOPICS)]
    return bad + good, [True] * len(bad) + [False] * len(good)


def test_compare_by_hand() -> None:
    gold = [True, True, True, False, False, False]
    learned = [True, True, False, False, False, True]   # TP 2, FP 1, FN 1: F1 2/3; right on items 0,1,3,4
    rules = [True, False, False, True, False, False]    # TP 1, FP 1, FN 2: F1 0.4; right on items 0,4,5
    c = compare(gold, learned, rules, n_boot=200)
    assert c["f1_diff"] == pytest.approx(2 / 3 - 0.4)
    assert (c["learned"]["tp"], c["learned"]["fp"], c["learned"]["fn"]) == (2, 1, 1)
    assert (c["rules"]["tp"], c["rules"]["fp"], c["rules"]["fn"]) == (1, 1, 2)
    m = c["mcnemar"]
    assert (m["both_right"], m["a_only"], m["b_only"], m["both_wrong"]) == (2, 2, 1, 1)
    assert c["f1_diff_ci"][0] <= c["f1_diff"] <= c["f1_diff_ci"][1]


def test_round_trip_through_json_gives_the_same_probabilities(tmp_path: Path) -> None:
    triples, gold = _triples()
    clf = FollowupClassifier.fit(triples, gold)
    before = clf.predict_proba(triples)
    assert all(p > 0.5 for p in before[:20]) and all(p < 0.5 for p in before[20:])
    path = clf.save(tmp_path)
    data = json.loads(path.read_text())
    assert data["format"] == "uxbench-learned-followup" and data["version"] == 1
    after = FollowupClassifier.load(tmp_path).predict_proba(triples)
    assert after == pytest.approx(before, abs=1e-9)


def test_bad_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="train-signals"):
        FollowupClassifier.load(tmp_path)
    (tmp_path / MODEL_FILE).write_text('{"format": "something else"}')
    with pytest.raises(ConfigError, match="retrain"):
        FollowupClassifier.load(tmp_path)


def _write_log(root: Path) -> tuple[Path, Path]:
    log, labels = root / "log.jsonl", root / "labels.jsonl"
    triples, gold = _triples()
    with log.open("w") as f, labels.open("w") as g:
        for k, (t, bad) in enumerate(zip(triples, gold, strict=True)):
            for turn, (role, text) in enumerate([("user", t.prev_user), ("assistant", t.assistant),
                                                 ("user", t.next_user)]):
                f.write(json.dumps({"conversation_id": f"k{k}", "turn_index": turn, "role": role,
                                    "content": text}) + "\n")
            g.write(json.dumps({"conversation_id": f"k{k}", "u2_turn_index": 2,
                                "label": "complaint" if bad else "continue_neutral"}) + "\n")
    return log, labels


def test_train_signals_end_to_end(tmp_path: Path) -> None:
    log, labels = _write_log(tmp_path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "learned-salt-012")
        got = runner.invoke(app, ["mine", "train-signals", "--labels", str(labels), "--log", str(log), "--out",
                                  str(tmp_path / "model"), "--split", "all", "--folds", "4", "--format", "json",
                                  "--quiet"])
        held = runner.invoke(app, ["mine", "train-signals", "--labels", str(labels), "--log", str(log), "--out",
                                   str(tmp_path / "m2"), "--split", "held-out"])
    assert got.exit_code == 0, got.output
    report = json.loads(got.stdout)
    assert report["n_train"] == 40 and report["n_train_missing"] == 0 and "held_out" not in report
    cv = report["cv"]
    assert cv["learned"]["n"] == 40 and cv["learned"]["f1"] >= 0.9  # the two kinds differ in every word
    assert "verdict" in cv and (tmp_path / "model" / MODEL_FILE).is_file()
    assert json.loads((tmp_path / "model" / "report.json").read_text())["cv"]["learned"] == cv["learned"]
    assert held.exit_code != 0 and "held-out part is only for reporting" in held.output


def test_mine_run_with_the_learned_classifier_decides_dissatisfied(tmp_path: Path) -> None:
    """Trained on inverted labels (the thanks are the dissatisfied ones), the classifier, not the rules,
    decides: the rules' complaints stay in the table as signals, but the verdicts follow the model."""
    import pyarrow.parquet as pq

    log, labels = _write_log(tmp_path)
    inverted = tmp_path / "inverted.jsonl"
    rows = [json.loads(x) for x in labels.read_text().splitlines()]
    for r in rows:
        r["label"] = "continue_neutral" if r["label"] == "complaint" else "complaint"
    inverted.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "learned-salt-012")
        trained = runner.invoke(app, ["mine", "train-signals", "--labels", str(inverted), "--log", str(log),
                                      "--out", str(tmp_path / "model"), "--split", "all", "--folds", "4", "--quiet"])
        assert trained.exit_code == 0, trained.output
        spec = f"learned:{tmp_path / 'model'}"
        run = runner.invoke(app, ["mine", "run", str(log), "--out", str(tmp_path / "out"), "--no-llm", "--workers",
                                  "1", "--signals", spec, "--quiet"])
        evaluated = runner.invoke(app, ["mine", "eval-signals", "--labels", str(inverted), "--log", str(log),
                                        "--split", "all", "--signals", spec, "--format", "json", "--quiet"])
        bad = runner.invoke(app, ["mine", "run", str(log), "--out", str(tmp_path / "o2"), "--no-llm", "--signals",
                                  "learnd:x"])
    assert run.exit_code == 0, run.output
    table = pq.read_table(tmp_path / "out" / "signals.parquet").to_pylist()
    followed = [r for r in table if r["next_user_turn"] is not None]
    assert len(followed) == 40
    for r in followed:
        thanks = int(r["conversation_id"][1:]) >= 20
        assert r["dissatisfied"] is thanks, r
        assert ("learned" in r["dissatisfied_by"]) is thanks
        assert r["complaint"] is not thanks  # the rules' own signal is kept as it was
    assert evaluated.exit_code == 0, evaluated.output
    result = json.loads(evaluated.stdout)
    assert result["method"].startswith("learned:") and result["signals"]["dissatisfied"]["f1"] == 1.0
    assert bad.exit_code != 0 and "learned:DIR" in bad.output and "Traceback" not in bad.output

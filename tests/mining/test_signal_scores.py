"""Scores, not only flags: each detector's score with its evidence, `dissatisfied_score` and its threshold
(`--dissatisfied-threshold`, recorded in the manifest and in the signal stage's checkpoint key), error reports
about the reply's own code, and the guards against templated continuations."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pipeline_support import write_log
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.mining.deid import SALT_ENV
from uxbench.mining.signals import SignalConfig, analyse_followup, compute_signals
from uxbench.mining.signals.complaint import SCORE_EXPLICIT, SCORE_IMPLICIT, score_complaint
from uxbench.mining.signals.detect import dissatisfied_score
from uxbench.mining.signals.dismiss import SCORE_GIVE_UP, SCORE_RESIGNED, score_dismiss
from uxbench.mining.signals.error_report import SCORE_AFTER_CODE, SCORE_ASKED, find_error_report
from uxbench.mining.signals.results import SignalValue
from uxbench.mining.types import Session, Turn

runner = CliRunner()
CODE_REPLY = "Use pandas:\n```python\nimport pandas as pd\ndf = pd.read_excel('a.xlsx')\n```"


def _session(*texts: str) -> Session:
    roles = ("user", "assistant")
    return Session(conversation_id="c", turns=[
        Turn(conversation_id="c", turn_index=i, role=roles[i % 2], content=t) for i, t in enumerate(texts)])


def test_error_report_scores_high_after_code_and_low_when_the_reply_asked_for_it() -> None:
    after_code = find_error_report("almost but got this error: TypeError: f() got an unexpected keyword", CODE_REPLY)
    assert after_code is not None and after_code[0] == SCORE_AFTER_CODE and "got this error" in after_code[1]
    asked = find_error_report("Traceback (most recent call last): ...", "Please share the full error message.")
    assert asked is not None and asked[0] == SCORE_ASKED
    assert find_error_report("运行提示 IndexError: list index out of range", CODE_REPLY) is not None
    assert find_error_report("thanks, it runs now", CODE_REPLY) is None
    metrics = "the output is:\n\nMean Squared Error: 14851.17\nMean Absolute Error: 42.85"
    assert find_error_report(metrics, CODE_REPLY) is None
    f = analyse_followup("read an excel file", CODE_REPLY, "I changed it. Still same error")
    assert f.complaint.fired and f.complaint.score is not None and f.complaint.score >= 0.8
    assert f.label == "complaint"


@pytest.mark.parametrize("text", [
    "I'm a bit confused, you're saying we can do the first example but cannot do the second?",
    "You said the list was sorted and now you sort it again",
    "No, you placed THREE Os.",
    "You didn't exclude the reserved pins yet.",
    "Close, but not correct. The DEX should be negative.",
    "转人工！转人工！", "我早就实名了", "呵呵，真是谢谢你了", "骗子公司", "我要打工信部电话投诉你们",
])
def test_complaints_without_the_usual_keywords(text: str) -> None:
    found = score_complaint(text)
    assert found is not None and found[0] >= SCORE_IMPLICIT, (text, found)


@pytest.mark.parametrize("text", [
    "没事了，原来是静音了", "不用了谢谢，已经解决了", "笨笨的小狗怎么训练", "如果还是不行怎么办",
    "投诉进度在哪里查", "不好意思刚才发错了，订单号是123", "Not bad at all, thanks", "No problem, continue",
    # found reading what the rules flag on the unlabelled pool: role-play, a story, metrics printed by the code
    "Look, I'm sorry. I didn't mean anything of what I said, I was just going along",
    "Next part: Meanwhile, she feared that things could get worst for Kuroshio and Edinburgh.",
])
def test_neutral_messages_with_complaint_words_are_not_complaints(text: str) -> None:
    found = score_complaint(text)
    assert found is None or found[0] < SCORE_IMPLICIT, (text, found)


@pytest.mark.parametrize(("prev", "nxt"), [
    ("expand on Abdominal discomfort or pain in 1 paragraph", "expand on Bloating and gas in 1 paragraph"),
    ("invitation letter for telugu actor pavan kalyan from NATS", "invitation letter for telugu actor vishwak sen"
     " from NATS"),
    ("Can you provide a for sentence sub-header for my campaign", "Can you provide a four sentence sub-header for my"
     " campaign"),
    ("continue it", "continue it"),
    ("Question 1: What is 2+2? A) 3 B) 4", "Question 2: What is 3+3? A) 6 B) 7"),
])
def test_templated_continuations_are_not_repeats_or_rephrases(prev: str, nxt: str) -> None:
    f = analyse_followup(prev, "Here you go: ...", nxt)
    assert not f.repeat.fired and not f.rephrase.fired, (f.repeat, f.rephrase)
    assert f.continuation.fired and f.label == "continue"


def test_a_true_repeat_still_fires_with_a_score() -> None:
    f = analyse_followup("怎么申请退款", "亲，感谢您的咨询，请问还有什么可以帮您？", "怎么申请退款？")
    assert f.repeat.fired and f.repeat.score is not None and 0.6 <= f.repeat.score <= 0.9


def test_dissatisfied_score_combines_the_signals_as_independent_evidence() -> None:
    config = SignalConfig()
    values = {name: SignalValue() for name in (*config.strong_signals, *config.weak_signals)}
    values["complaint"] = SignalValue(fired=False, evidence="hint", score=0.35)
    values["rephrase"] = SignalValue(fired=False, evidence="similarity 0.5", score=0.4)
    assert dissatisfied_score(values, config) == pytest.approx(1 - 0.65 * 0.6)  # 0.61: two weak cues add up
    values["topic_change"] = SignalValue(fired=True, score=0.5)  # one weak signal of the two needed: 0.3
    assert dissatisfied_score(values, config) == pytest.approx(1 - 0.65 * 0.6 * 0.7, abs=1e-4)


def test_the_threshold_decides_the_flag() -> None:
    session = _session("read an excel file", CODE_REPLY, "Still same error", "Sorry, try this", "thanks")
    [first, _] = compute_signals(session)
    assert first.dissatisfied and first.dissatisfied_score == SCORE_AFTER_CODE  # "same error" after code
    assert first.complaint.score == first.dissatisfied_score
    [strict, _] = compute_signals(session, SignalConfig(dissatisfied_threshold=0.99))
    assert strict.dissatisfied_score == first.dissatisfied_score and not strict.dissatisfied
    assert strict.dissatisfied_by == [] and first.dissatisfied_by == ["complaint"]
    row = first.row()
    assert row["dissatisfied_score"] == first.dissatisfied_score and row["complaint_score"] == first.complaint.score
    assert SCORE_EXPLICIT > SCORE_IMPLICIT


def test_mine_run_records_the_threshold_and_recomputes_signals(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.jsonl")
    out = tmp_path / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "score-salt-01234")
        base = ["mine", "run", str(log), "--out", str(out), "--no-llm", "--workers", "1", "--quiet"]
        first = runner.invoke(app, base)
        assert first.exit_code == 0, first.output
        keys = {p.parent.name: p.read_text() for p in (out / "work").glob("*/_KEY")}
        table = pq.read_table(out / "signals.parquet").to_pylist()
        assert any(r["dissatisfied"] for r in table)
        assert all(r["dissatisfied"] == (r["dissatisfied_score"] >= 0.5) for r in table)
        again = runner.invoke(app, [*base, "--dissatisfied-threshold", "0.99"])
        assert again.exit_code == 0, again.output
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["config"]["signals"]["dissatisfied_threshold"] == 0.99
        after = {p.parent.name: p.read_text() for p in (out / "work").glob("*/_KEY")}
        assert after["03-prefilter"] == keys["03-prefilter"] and after["04-signals"] != keys["04-signals"]
        strict = pq.read_table(out / "signals.parquet").to_pylist()
        assert [r["dissatisfied_score"] for r in strict] == [r["dissatisfied_score"] for r in table]
        assert all(r["dissatisfied"] == (r["dissatisfied_score"] >= 0.99) for r in strict)
        assert sum(r["dissatisfied"] for r in strict) < sum(r["dissatisfied"] for r in table)
        bad = runner.invoke(app, [*base, "--dissatisfied-threshold", "1.5"])
        assert bad.exit_code == 2


@pytest.mark.parametrize(("text", "score"), [
    ("不指望你们了，我换一家", SCORE_GIVE_UP), ("那我还是打电话吧", SCORE_GIVE_UP), ("好吧，那我不要了", SCORE_GIVE_UP),
    ("行吧", SCORE_RESIGNED), ("唉。", SCORE_RESIGNED), ("算了", SCORE_GIVE_UP),
    ("不用了谢谢，已经解决了", None), ("没事了，原来是静音了", None), ("never mind, it works now", None),
    ("不需要了，已经拿到了", None),
])
def test_giving_up_resigned_and_resolved(text: str, score: float | None) -> None:
    found = score_dismiss(text)
    assert (found[0] if found else None) == score, (text, found)

"""Tasks 2/3 end to end against a real loopback OpenAI-compatible judge with scripted top logprobs: the GRM
score, verdict, partial / unscorable handling, a leading blank token, the shortening steps, the request size,
the pointwise fallback and the error for a judge without logprobs, all against hand-computed values."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from run_support import write_jsonl

from uxbench.errors import UxbenchError
from uxbench.orchestrate.runner import execute
from uxbench.orchestrate.spec import JudgeSpec, RunSpec
from uxbench.scoring.scorer import JudgeSettings
from uxbench.testing.loopback import LogprobEntry, LoopbackConfig, LoopbackServer

L = math.log
# What the judge "emits" for each marker, with the top alternatives at each position.
SCRIPTS: dict[str, list[LogprobEntry]] = {
    "full": [("good", L(0.6), [("good", L(0.6)), ("bad", L(0.2)), ("The", L(0.1))])],  # 0.75 good
    "blank": [("\n", L(0.9), [("\n", L(0.9)), ("good", L(0.05))]),
              ("bad", L(0.7), [("bad", L(0.7)), (" Good", L(0.3))])],  # 0.3 bad, read at position 1
    "one": [("You", L(0.6), [("You", L(0.6)), ("The", L(0.2)), ("good", L(0.05))])],  # partial 0.05 bad
    "none": [("The", L(0.7), [("The", L(0.7)), ("You", L(0.2))])],  # unscorable
    "mismatch": [("good", L(0.45), [("bad", L(0.5)), ("good", L(0.45))])],  # 0.4737 bad, emitted good
    "long": [("good", L(0.9), [("good", L(0.9)), ("bad", L(0.1))])],  # 0.9 good after shortening
}
MARK = re.compile(r"\{LP:(\w+)\}")


def _logprobs(messages: list[dict[str, Any]], body: dict[str, Any], answer: str) -> list[LogprobEntry] | None:
    found = MARK.findall(messages[-1]["content"])
    return SCRIPTS[found[-1]] if found else None


def _answer(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """The judge's text: its scripted tokens. (The model under test is `scripted:echo`: its reply repeats the
    question, so the question's marker reaches the judge's prompt.)"""
    found = MARK.findall(messages[-1]["content"])
    return "".join(tok for tok, _, _ in SCRIPTS[found[-1]]) if found else "good"


def eval_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"cid": f"e-{name}", "lang": "en", "history": [], "query": f"question {{LP:{name}}}", "scenario": "coding"}
        for name in SCRIPTS if name != "long"
    ]
    long_history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "x" * 600}
                    for i in range(10)]
    rows.append({"cid": "e-long", "lang": "en", "history": long_history, "query": "question {LP:long}",
                 "scenario": "writing"})
    return rows


@pytest.fixture
def server() -> Any:
    # 6,000 characters: the full "long" prompt (10 x 600 history characters) is refused, the last 6 fit.
    config = LoopbackConfig(responder=_answer, logprobs_responder=_logprobs, max_prompt_chars=6000)
    with LoopbackServer(config) as srv:
        yield srv


def _spec(data: Path, out: Path, srv: LoopbackServer, **judge: Any) -> RunSpec:
    return RunSpec(
        task="eval", model="scripted:echo", data=str(data), out=out,
        use_cache=False, max_attempts=2, concurrency=4,
        judge=JudgeSpec(model="openai:grm", args={"base_url": srv.base_url}, settings=JudgeSettings(**judge)),
    )


def test_grm_scores_equal_hand_computed_values(tmp_path: Path, server: LoopbackServer) -> None:
    data = write_jsonl(tmp_path / "eval.jsonl", eval_rows())
    result = asyncio.run(execute(_spec(data, tmp_path / "run", server, lang="en")))
    lines = (tmp_path / "run" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    scores = {json.loads(x)["case_id"]: json.loads(x) for x in lines}
    expect = {  # case: (label, score, status, shorten step, mismatch)
        "e-full": ("good", 0.75, "full", 0, False),
        "e-blank": ("bad", 0.3, "full", 0, False),
        "e-one": ("bad", 0.05, "partial", 0, False),
        "e-none": (None, None, "unscorable", 0, False),
        "e-mismatch": ("bad", 0.45 / 0.95, "full", 0, True),
        "e-long": ("good", 0.9, "full", 1, False),
    }
    for cid, (label, score, status, step, mismatch) in expect.items():
        s = scores[cid]
        assert (s["label"], s["score_status"], s["shorten_step"], s["emitted_mismatch"]) == \
            (label, status, step, mismatch), cid
        assert s["score"] == (None if score is None else pytest.approx(score)), cid

    judge = result.summary["judges"][result.summary["primary_judge"]]
    m = judge["metrics"]
    assert (m["n_cases"], m["n_scored"], m["n_good"]) == (6, 5, 2)
    assert m["good_rate_all_cases"]["value"] == pytest.approx(2 / 6)
    assert m["good_rate_scored_only"]["value"] == pytest.approx(2 / 5)
    assert (judge["n_unscorable"], judge["n_partial"], judge["n_emitted_mismatch"], judge["n_shortened"]) == \
        (1, 1, 1, 1)
    assert m["score_mean"] == pytest.approx((0.75 + 0.3 + 0.05 + 0.45 / 0.95 + 0.9) / 5)
    # A probability verdict asks for a few tokens only, with the top logprobs.
    grm_body = server.stats.last_body
    assert grm_body["max_tokens"] <= 4 and grm_body["logprobs"] is True and grm_body["top_logprobs"] == 20


def test_a_judge_without_logprobs_names_the_fallback(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "eval.jsonl", eval_rows()[:2])
    config = LoopbackConfig(responder=_answer, logprobs_supported=False)
    with LoopbackServer(config) as srv, pytest.raises(UxbenchError, match="--judge-mode pointwise") as info:
        asyncio.run(execute(_spec(data, tmp_path / "run", srv)))
    assert "openai:grm" in str(info.value)
    # the generations were kept: the pointwise fallback scores them without generating again
    with LoopbackServer(LoopbackConfig(responder=lambda m, b: "bad", logprobs_supported=False)) as srv2:
        result = asyncio.run(execute(_spec(data, tmp_path / "run", srv2, mode="pointwise")))
    assert result.summary["invocation"]["resumed_samples"] == 2
    assert result.summary["judges"][result.summary["primary_judge"]]["metrics"]["n_scored"] == 2


def test_pointwise_judge_reads_the_written_verdict(tmp_path: Path, server: LoopbackServer) -> None:
    data = write_jsonl(tmp_path / "eval.jsonl", eval_rows()[:3])
    verdicts = iter(["Verdict: good", "bad", "I cannot tell"])

    def judge(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        return next(verdicts)

    with LoopbackServer(LoopbackConfig(responder=judge)) as jsrv:
        spec = _spec(data, tmp_path / "run", jsrv, mode="pointwise", lang="en")
        spec = spec.model_copy(update={"concurrency": 1})
        result = asyncio.run(execute(spec))
    judge_summary = result.summary["judges"][result.summary["primary_judge"]]
    m = judge_summary["metrics"]
    assert (m["n_cases"], m["n_scored"], m["n_good"]) == (3, 2, 1)
    assert judge_summary["n_unreadable"] == 1 and judge_summary["score_status"] == {"text": 3}


def test_task1_logprob_verdicts_are_partial_and_short(tmp_path: Path) -> None:
    """Regression (seen on llama.cpp): a reply whose first token is "You" with "good" far down the top list was
    judged good with p=1.000, and requests without max_tokens made the server write long answers."""
    rows = [{"cid": "j1", "lang": "en", "label": "bad", "history": [], "query": "q", "response": "r {LP:one}"},
            {"cid": "j2", "lang": "en", "label": "good", "history": [], "query": "q", "response": "r {LP:none}"}]
    data = write_jsonl(tmp_path / "judge.jsonl", rows)
    with LoopbackServer(LoopbackConfig(responder=_answer, logprobs_responder=_logprobs)) as srv:
        spec = RunSpec(task="judge", model="openai:judge", model_args={"base_url": srv.base_url}, data=str(data),
                       out=tmp_path / "t1", use_cache=False, task_options={"lang": "en", "verdict_from": "logprobs"})
        asyncio.run(execute(spec))
        body = srv.stats.last_body
    records = {json.loads(x)["case_id"]: json.loads(x)
               for x in (tmp_path / "t1" / "samples.jsonl").read_text(encoding="utf-8").splitlines()}
    one = records["j1"]
    assert one["score"] == pytest.approx(0.05) and one["prediction"] == "bad"
    assert one["extra"]["score_status"] == "partial" and "partial" in one["parse_note"]
    none = records["j2"]  # neither verdict word: read from the text ("The"), which is no verdict
    assert none["score"] is None and none["extra"]["score_status"] == "unscorable" and none["prediction"] is None
    assert body["max_tokens"] <= 4 and body["top_logprobs"] == 20

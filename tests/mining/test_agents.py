"""The agents end to end over real HTTP: a loopback OpenAI-compatible server runs a scripted agent.

Checks: the happy path (bad and good), one retry on an unusable answer then `failed`, the keep rule applied
by the code, QA verdicts (reject, downgrade, needs_context, unsafe, corrected dimension, failing closed),
skipped sessions, determinism and caching.
"""

from __future__ import annotations

from pathlib import Path

from agents_support import AgentScript, complaint_session, mined, served_agents

from uxbench.mining.agents import AgentConfig, AgentReport, Candidate, run_agents
from uxbench.runtime.cache import ResponseCache

NO_GOOD = AgentConfig(good_cases=False)


def by_kind(cands: list[Candidate], kind: str) -> list[Candidate]:
    return [c for c in cands if c.kind == kind]


async def test_happy_path_bad_and_good_cases() -> None:
    report = AgentReport()
    async with served_agents() as (model, script, server):
        cands = await run_agents([complaint_session("c1", "[[DIM:factual_error]]")], model, AgentConfig(),
                                 report=report)
    assert [(c.kind, c.turn_index, c.status) for c in cands] == [("bad", 1, "kept"), ("good", 3, "kept")]
    bad, good = cands
    assert bad.query_turn_index == 0 and bad.next_user_turn == 2
    assert bad.failure_dimension == "factual_error" and bad.scenario == "information_knowledge"
    assert bad.signal == "complaint" and bad.signal_evidence
    assert bad.scores == {"query_completeness": 5, "signal_credibility": 5, "representativeness": 5,
                          "severity": 4, "annotation_clarity": 4}
    assert bad.mean_score == 4.6 and bad.kept and bad.quality == "high" and bad.stage == "done"
    assert bad.recovery_eligible and bad.lang == "en"
    assert bad.qa is not None and bad.qa["verdict"] == "keep"
    assert good.success_dimension == "accurate_answer" and good.signal == "praise" and good.kept
    assert not good.recovery_eligible
    assert script.calls == [("miner_bad", 1), ("judge", 1), ("qa", 1), ("miner_good", 1), ("judge", 1),
                            ("qa", 1)]
    assert server.stats.requests == 6
    assert report.calls == {"miner_bad": 1, "judge_bad": 1, "qa_bad": 1, "miner_good": 1, "judge_good": 1,
                            "qa_good": 1}
    assert report.retries == {} and report.failures == {}


async def test_invalid_miner_output_is_retried_once_then_failed() -> None:
    report = AgentReport()
    async with served_agents() as (model, script, _):
        cands = await run_agents([complaint_session("c1", "[[MINER:garbage]]")], model, NO_GOOD,
                                 report=report)
    assert script.calls == [("miner_bad", 1), ("miner_bad", 2)]
    (c,) = cands
    assert c.status == "failed" and c.stage == "miner" and not c.kept
    assert c.error is not None and "invalid output after a retry" in c.error and "cases" in c.error
    assert c.turn_index == 1 and c.query_turn_index == 0 and c.miner_raw
    assert report.retries == {"miner_bad": 1} and report.failures == {"miner_bad": 1}


async def test_retry_with_correction_recovers() -> None:
    report = AgentReport()
    async with served_agents() as (model, script, _):
        cands = await run_agents([complaint_session("c1", "[[MINER:garbage_once]]")], model, NO_GOOD,
                                 report=report)
    assert [c.status for c in cands] == ["kept"]
    assert script.calls == [("miner_bad", 1), ("miner_bad", 2), ("judge", 1), ("qa", 1)]
    assert report.retries == {"miner_bad": 1} and report.failures == {}


async def test_retry_request_quotes_the_answer_and_the_problems() -> None:
    seen: list[list[dict[str, str]]] = []
    script = AgentScript()

    def spy(messages: list[dict[str, str]], body: dict[str, object]) -> str:
        seen.append(messages)
        return script(messages, body)

    async with served_agents(spy) as (model, _, _):
        await run_agents([complaint_session("c1", "[[MINER:badturn]]")], model, NO_GOOD)
    assert len(seen) == 2
    retry = seen[1]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert '"turn_index": 99' in retry[2]["content"]  # the unusable answer, quoted back
    assert "turn_index 99 is not an assistant turn" in retry[3]["content"]


async def test_model_errors_are_recorded_not_guessed() -> None:
    report = AgentReport()
    async with served_agents() as (model, _script, server):
        cands = await run_agents([complaint_session("c1", "[[FAULT:400]]"), complaint_session("c2")], model,
                                 NO_GOOD, report=report)
    assert [(c.conversation_id, c.status, c.stage) for c in cands] == [("c1", "failed", "miner"),
                                                                      ("c2", "kept", "done")]
    assert "model error" in (cands[0].error or "") and server.stats.statuses[400] == 1
    assert report.failures == {"miner_bad": 1} and report.retries == {}


async def test_turn_ids_are_validated() -> None:
    async with served_agents() as (model, script, _):
        cands = await run_agents([complaint_session("c1", "[[MINER:badturn]]")], model, NO_GOOD)
    assert [(c.status, c.stage) for c in cands] == [("failed", "miner")]
    assert "not an assistant turn" in (cands[0].error or "")
    assert script.calls == [("miner_bad", 1), ("miner_bad", 2)]


async def test_answers_wrapped_in_reasoning_fences_and_prose_are_read() -> None:
    async with served_agents() as (model, script, _):
        cands = await run_agents([complaint_session("c1", "[[WRAP:1]]")], model, NO_GOOD)
    assert [c.status for c in cands] == ["kept"]
    assert script.calls[0] == ("miner_bad", 1) and ("miner_bad", 2) not in script.calls


async def test_keep_rule_is_applied_by_the_code() -> None:
    sessions = [
        complaint_session("low_but_model_says_keep", "[[SCORES:2,2,2,2,2]] [[JUDGE:should_keep]]"),
        complaint_session("mean4_min3", "[[SCORES:5,4,4,4,3]]"),
        complaint_session("mean4.2_with_a_2", "[[SCORES:5,5,5,4,2]]"),
        complaint_session("mean3.8", "[[SCORES:4,4,4,4,3]]"),
    ]
    async with served_agents() as (model, _, _):
        cands = await run_agents(sessions, model, NO_GOOD)
    result = {c.conversation_id: c for c in cands}
    assert [c.conversation_id for c in cands] == [s.conversation_id for s in sessions]  # input order
    low = result["low_but_model_says_keep"]
    assert low.status == "rejected" and low.stage == "judge" and not low.kept and low.qa is None
    assert low.reject_reason is not None and "below 3" in low.reject_reason
    assert result["mean4_min3"].status == "kept" and result["mean4_min3"].mean_score == 4.0
    two = result["mean4.2_with_a_2"]
    assert two.status == "rejected" and two.mean_score == 4.2 and "annotation_clarity" in (two.reject_reason or "")
    mean = result["mean3.8"]
    assert mean.status == "rejected" and "mean 3.80 below 4" in (mean.reject_reason or "")
    strict = AgentConfig(good_cases=False, keep_mean=4.5, keep_min=4)
    async with served_agents() as (model, _, _):
        (c,) = await run_agents([complaint_session("x", "[[SCORES:5,5,5,4,4]]")], model, strict)
    assert c.status == "kept" and c.mean_score == 4.6


async def test_judge_missing_candidate_is_retried_then_failed() -> None:
    async with served_agents() as (model, script, _):
        once = await run_agents([complaint_session("c1", "[[JUDGE:missing_once]]")], model, NO_GOOD)
    assert [c.status for c in once] == ["kept"]
    assert ("judge", 2) in script.calls
    async with served_agents() as (model, script, _):
        never = await run_agents([complaint_session("c1", "[[JUDGE:missing]]")], model, NO_GOOD)
    assert [(c.status, c.stage) for c in never] == [("failed", "judge")]
    assert "no entry for index 0" in (never[0].error or "")
    assert ("qa", 1) not in script.calls
    async with served_agents() as (model, _, _):
        broken = await run_agents([complaint_session("c1", "[[JUDGE:garbage]]")], model, NO_GOOD)
    assert [(c.status, c.stage) for c in broken] == [("failed", "judge")]


async def test_qa_verdicts() -> None:
    sessions = [
        complaint_session("reject", "[[QA:reject]]"),
        complaint_session("downgrade", "[[QA:downgrade]]"),
        complaint_session("context", "[[QA:needs_context]]"),
        complaint_session("unsafe", "[[QA:unsafe]]"),
        complaint_session("correct", "[[QA:correct=task_incomplete]]"),
        complaint_session("qa_broken", "[[QAMODE:garbage]]"),
        complaint_session("qa_silent", "[[QAMODE:missing]]"),
    ]
    async with served_agents() as (model, _, _):
        got = {c.conversation_id: c for c in await run_agents(sessions, model, NO_GOOD)}
    assert got["reject"].status == "rejected" and got["reject"].reject_reason == "qa: reject"
    assert got["downgrade"].status == "kept" and got["downgrade"].quality == "medium"
    ctx = got["context"]
    assert ctx.status == "kept" and ctx.needs_context and ctx.qa is not None and ctx.qa["needs_context"]
    assert got["unsafe"].status == "rejected" and "unsafe" in (got["unsafe"].reject_reason or "")
    fixed = got["correct"]
    assert fixed.failure_dimension == "task_incomplete" and fixed.dimension_original == "intent_misunderstanding"
    for cid in ("qa_broken", "qa_silent"):  # fail closed
        assert got[cid].status == "failed" and got[cid].stage == "qa" and not got[cid].kept


async def test_skipped_sessions_make_no_calls() -> None:
    dup = complaint_session("dup")
    dup.duplicate_of = "c0"
    calm = mined(("user", "What is 2+2?"), ("assistant", "4."), cid="calm")  # one weak signal only
    report = AgentReport()
    async with served_agents() as (model, script, _):
        assert await run_agents([dup, calm], model, AgentConfig(), report=report) == []
    assert script.calls == []
    assert report.sessions == 2 and report.skipped_duplicate == 1 and report.no_candidates_turns == 1


async def test_switches_and_chinese_prompts() -> None:
    zh = mined(
        ("user", "怎么在电脑上设置静态IP地址？[[DIM:task_incomplete]]"), ("assistant", "你可以使用自动获取。" * 5),
        ("user", "不对，答非所问"), ("assistant", "打开设置，选择网络，手动填写IP地址。"), ("user", "谢谢，解决了！"),
        cid="zh",
    )
    seen: list[str] = []
    script = AgentScript()

    def spy(messages: list[dict[str, str]], body: dict[str, object]) -> str:
        seen.append(messages[0]["content"])
        return script(messages, body)

    async with served_agents(spy) as (model, _, _):
        cands = await run_agents([zh], model, AgentConfig(qa=False))
    assert [(c.kind, c.status, c.quality, c.lang) for c in cands] == [
        ("bad", "kept", None, "zh"), ("good", "kept", None, "zh")]
    assert cands[0].failure_dimension == "task_incomplete"
    assert len(seen) == 4 and all("JSON" in s for s in seen) and "失败维度" in seen[0]


async def test_deterministic_and_cached(tmp_path: Path) -> None:
    sessions = [complaint_session(f"c{i}", f"[[SCORES:5,5,{2 + i % 3},4,4]]") for i in range(6)]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    try:
        async with served_agents(cache=cache) as (model, _, server):
            first = await run_agents(sessions, model, AgentConfig())
            calls = server.stats.requests
            second = await run_agents(sessions, model, AgentConfig())
            assert server.stats.requests == calls  # every answer came from the cache
    finally:
        cache.close()
    assert [c.model_dump() for c in first] == [c.model_dump() for c in second]
    assert [c.status for c in first if c.kind == "bad"] == ["rejected", "kept", "kept"] * 2

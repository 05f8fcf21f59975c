"""Export: the rows load through the harness loader for every task, with the right history cut, query,
reply, complaint and labels; ids are stable for a seed; writes are atomic; the data card adds up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents_support import complaint_session, mined, served_agents

from uxbench.data.loaders import load_cases
from uxbench.data.schema import EvalCase, JudgeCase, RecoveryCase
from uxbench.errors import DataError
from uxbench.mining.agents import AgentConfig, AgentReport, Candidate, run_agents
from uxbench.mining.datacard import write_data_card
from uxbench.mining.export import FILES, export_cases
from uxbench.mining.records import MinedSession
from uxbench.mining.sample import SampleConfig, sample_cases


def repeat_session(cid: str) -> MinedSession:
    """The user repeats the question verbatim (turn 2) after a wrong reply (turn 1), then thanks."""
    q = "What is the capital of Australia?"
    return mined(("user", q), ("assistant", "Sydney is the capital of Australia, a large city."), ("user", q),
                 ("assistant", "Canberra."), ("user", "thanks!"), cid=cid)


def zh_session(cid: str) -> MinedSession:
    return mined(
        ("user", "帮我写一首关于秋天的诗"), ("assistant", "秋天来了，叶子黄了。"), ("user", "写长一点，要七言律诗"),
        ("assistant", "这是一首七言律诗……" * 3), ("user", "太啰嗦了，重写"), cid=cid,
    )


def kept(item: MinedSession, turn: int, task: str | None, kind: str = "bad", **kw: object) -> Candidate:
    ts = next(t for t in item.signals if t.turn_index == turn)
    dim_field = "failure_dimension" if kind == "bad" else "success_dimension"
    fields: dict[str, object] = {
        "conversation_id": item.conversation_id, "kind": kind, "turn_index": turn,
        "query_turn_index": turn - 1, "next_user_turn": ts.next_user_turn, "scenario": "creative_content",
        dim_field: "verbosity" if kind == "bad" else "creative_generation", "signal": "complaint",
        "explanation": "why", "scores": dict.fromkeys(("query_completeness", "signal_credibility",
                                                         "representativeness", "severity", "annotation_clarity"), 4),
        "mean_score": 4.0, "status": "kept", "kept": True, "quality": "high", "stage": "done",
        "qa": {"verdict": "keep", "issues": [], "needs_context": False, "corrected_dimension": None,
               "notes": "ok"},
        "task": task,
    }
    fields.update(kw)
    return Candidate.model_validate(fields)


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_rows_load_through_the_harness_for_every_task(tmp_path: Path) -> None:
    zh, rep = zh_session("zh"), repeat_session("rep")
    sessions = {"zh": zh, "rep": rep}
    selected = [
        kept(zh, 3, "judge_bad", lang="zh"),
        kept(rep, 3, "judge_good", kind="good", signal="praise"),
        kept(zh, 3, "eval"),
        kept(rep, 1, "recovery", signal="repeat", failure_dimension="factual_error"),
    ]
    paths = export_cases(selected, sessions, tmp_path)
    assert {k: p.name for k, p in paths.items()} == FILES
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES.values())  # no temp files left

    (bad,) = list(load_cases(paths["judge_bad"], task="judge"))
    assert isinstance(bad, JudgeCase) and bad.label == "bad" and bad.id == "mined_judge_bad_0001"
    assert [m.content for m in bad.history] == ["帮我写一首关于秋天的诗", "秋天来了，叶子黄了。"]
    assert [m.turn_index for m in bad.history] == [0, 1] and bad.history[0].created_at is not None
    assert bad.query == "写长一点，要七言律诗" and bad.response == "这是一首七言律诗……" * 3
    assert bad.labels.failure_dimension == "冗余啰嗦" and bad.labels.failure_dimension_key == "verbosity"
    assert bad.labels.scenario_key == "creative_content" and bad.labels.signal_type == "explicit_complaint"
    assert bad.lang == "zh"
    raw = rows(paths["judge_bad"])[0]
    assert raw["ground_truth"] == -1 and raw["dislike_turn_id"] == 3 and raw["judge_average"] == 4.0
    assert raw["source_query"] == {"turn_index": 2, "message": "写长一点，要七言律诗"}
    assert raw["qa_verdict"] == "keep" and raw["needs_context"] is False and raw["selected_turn_indices"] == [0, 1]

    (good,) = list(load_cases(paths["judge_good"], task="judge"))
    assert good.label == "good" and good.response == "Canberra."  # type: ignore[union-attr]
    assert good.labels.success_dimension_key == "creative_generation"
    assert good.labels.signal_type == "explicit_praise"

    (ev,) = list(load_cases(paths["eval"], task="eval"))
    assert isinstance(ev, EvalCase) and ev.id == "mined_eval_0001"
    assert [m.role for m in ev.history] == ["user", "assistant"] and ev.query == "写长一点，要七言律诗"
    assert ev.labels.failure_dimension_key == "verbosity" and ev.reference_response == "这是一首七言律诗……" * 3

    (rec,) = list(load_cases(paths["recovery"], task="recovery"))
    assert isinstance(rec, RecoveryCase) and rec.id == "mined_recovery_0001"
    # The complaint repeats the query word for word; the query must still end the history.
    assert [m.content for m in rec.history] == ["What is the capital of Australia?"]
    assert rec.failed_response.startswith("Sydney") and rec.complaint == "What is the capital of Australia?"
    assert rec.labels.failure_dimension_key == "factual_error" and rec.labels.signal_type == "repeat_query"


def test_export_rejects_candidates_it_cannot_place(tmp_path: Path) -> None:
    zh = zh_session("zh")
    with pytest.raises(DataError, match="no task"):
        export_cases([kept(zh, 3, None)], {"zh": zh}, tmp_path)
    with pytest.raises(DataError, match="session"):
        export_cases([kept(zh, 3, "judge_bad")], {}, tmp_path)
    with pytest.raises(DataError, match="cannot go to judge_good"):
        export_cases([kept(zh, 3, "judge_good")], {"zh": zh}, tmp_path)
    with pytest.raises(DataError, match="not a Task 2 case"):
        export_cases([kept(zh, 3, "eval", needs_context=True)], {"zh": zh}, tmp_path)
    with pytest.raises(DataError, match="user turn after"):
        end = mined(("user", "hi there, a question"), ("assistant", "an answer"), cid="end")
        export_cases([kept(end, 1, "recovery")], {"end": end}, tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing half-written


async def test_mined_sessions_to_benchmark_files(tmp_path: Path) -> None:
    items = [complaint_session(f"c{i}", f"[[SCEN:{s}]]") for i, s in enumerate(
        ["information_knowledge", "work_productivity", "creative_content"] * 4)]
    items += [repeat_session("rep"), zh_session("zh")]
    items.append(complaint_session("ctx", "[[QA:needs_context]]"))
    items.append(complaint_session("low", "[[SCORES:3,3,3,3,3]]"))
    items.append(complaint_session("broken", "[[MINER:garbage]]"))
    report = AgentReport()
    async with served_agents() as (model, _, _):
        cands = await run_agents(items, model, AgentConfig(), report=report)
    cfg = SampleConfig(seed=11, target_recovery=4, target_bad=4, target_good=4, target_eval=None, cap_share=1.0)
    selected = sample_cases(cands, cfg)
    assert len({c.conversation_id for c in selected}) == len(selected)
    assert all(c.conversation_id != "ctx" for c in selected if c.task == "eval")
    sessions = {i.conversation_id: i for i in items}
    paths = export_cases(selected, sessions, tmp_path / "out")
    loaded = {task: list(load_cases(paths[task], task=t)) for task, t in (
        ("judge_bad", "judge"), ("judge_good", "judge"), ("eval", "eval"), ("recovery", "recovery"))}
    for task in FILES:
        want = [c for c in selected if c.task == task]
        assert [case.id for case in loaded[task]] == [f"mined_{task}_{i + 1:04d}" for i in range(len(want))]
    assert {c.label for c in loaded["judge_bad"]} <= {"bad"} and {c.label for c in loaded["judge_good"]} == {"good"}  # type: ignore[union-attr]
    assert len(loaded["recovery"]) == 4 and len(loaded["judge_good"]) == 4
    # Same seed, same files; a directory of them loads as a whole too.
    again = export_cases(sample_cases(cands, cfg), sessions, tmp_path / "again")
    for task in FILES:
        assert paths[task].read_bytes() == again[task].read_bytes()
    assert sum(1 for _ in load_cases(tmp_path / "out")) == len(selected)

    stage_counts = {"sessions": len(items), "agent_candidates": len(cands), "selected": len(selected)}
    signal_counts = {"complaint": 17, "praise": 15, "repeat": 1}
    md = write_data_card(tmp_path / "out", stage_counts, signal_counts, selected,
                         {"agent_calls": report.calls}, candidates=cands, model="openai:loopback", seed=11)
    card = json.loads((tmp_path / "out" / "data_card.json").read_text("utf-8"))
    assert card["model"] == "openai:loopback" and card["seed"] == 11
    assert card["tasks"] == {t: len([c for c in selected if c.task == t]) for t in FILES}
    agents = card["agents"]
    assert agents["kept"] + agents["rejected"] + agents["failed"] == len(cands)
    assert agents["failed"] == 1 and agents["failure_reasons"] == {"miner: invalid output after a retry": 1}
    assert agents["reject_reasons"] == {"judge: mean below 4": 1}  # the bad case of "low"
    assert agents["kept_needs_context"] == 1  # the bad case of "ctx"
    cov = card["coverage"]["judge_bad"]
    assert sum(n for row in cov.values() for n in row.values()) == card["tasks"]["judge_bad"]
    assert card["stage_counts"] == stage_counts and card["extra"] == {"agent_calls": report.calls}
    text = md.read_text("utf-8")
    assert "Agent model: `openai:loopback`" in text and "Sampling seed: 11" in text
    assert "| complaint | 17 | 51.5% |" in text and "Task 3 (UX Recovery)" in text
    assert "miner: invalid output after a retry" in text

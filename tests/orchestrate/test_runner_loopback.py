"""Task 1 end to end against a real OpenAI-compatible server on 127.0.0.1, with injected faults."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from run_support import judge_row, write_jsonl

from uxbench.errors import ConfigError
from uxbench.orchestrate.runner import RunSpec, execute
from uxbench.tasks.base import SummaryOptions
from uxbench.testing.loopback import LoopbackServer


def _spec(data: Path, out: Path, srv: LoopbackServer, **kw: object) -> RunSpec:
    args = {"base_url": srv.base_url, "timeout": "1.0"}
    return RunSpec(
        task="judge", model="openai:loopback", model_args=args, data=str(data), out=out,
        concurrency=4, max_attempts=4, task_options={"lang": "zh"}, **kw,  # type: ignore[arg-type]
    )


def test_metrics_equal_hand_computed_values_with_faults(tmp_path: Path, loopback: LoopbackServer) -> None:
    rows = [
        # good cases: 3 read as good (one after a 429, one after a 500), 1 as bad, 1 unparseable
        judge_row("g1", "good", "好"),
        judge_row("g2", "good", "好", "[[FAULT:429:2]]"),
        judge_row("g3", "good", "好", "[[FAULT:500:1]]"),
        judge_row("g4", "good", "差"),
        judge_row("g5", "good", "也许吧"),
        # bad cases: 2 read as bad (one after a malformed body, one after a timeout), 2 as good
        judge_row("b1", "bad", "差", "[[FAULT:malformed:1]]"),
        judge_row("b2", "bad", "差", "[[FAULT:timeout:1]]"),
        judge_row("b3", "bad", "好"),
        judge_row("b4", "bad", "不好"),
        # a final error: 400 is never retried, the sample is recorded as an error
        judge_row("b5", "bad", "差", "[[FAULT:400]]"),
    ]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    result = asyncio.run(execute(_spec(data, tmp_path / "run", loopback)))
    s = result.summary

    assert s["n_selected"] == 10
    assert s["n_errors"] == 1
    assert s["complete"] is False  # one sample failed for good
    m = s["metrics"]
    assert (m["n_good"], m["n_bad"]) == (5, 4)  # the errored sample is not scored
    allc, valid = m["all"], m["valid_only"]
    assert allc["good_acc"]["k"] == 3 and allc["good_acc"]["n"] == 5
    assert allc["bad_acc"]["k"] == 3 and allc["bad_acc"]["n"] == 4  # b1, b2 and b4 (不好 is bad)
    assert allc["avg_acc"]["value"] == pytest.approx((3 / 5 + 3 / 4) / 2)
    assert valid["good_acc"]["n"] == 4 and valid["good_acc"]["value"] == pytest.approx(3 / 4)
    assert valid["avg_acc"]["value"] == pytest.approx((3 / 4 + 3 / 4) / 2)
    assert allc["positive_bias"]["value"] == pytest.approx(3 / 5 - 3 / 4)
    assert m["unparseable"]["k"] == 1
    # bad-class F1: tp=3 (b1,b2,b4), fp=1 (g4), fn=1 (b3)
    assert allc["bad_f1"]["value"] == pytest.approx(2 * 3 / (2 * 3 + 1 + 1))

    # every sample is accounted for, once
    db = sqlite3.connect(result.run_dir / "samples.sqlite")
    statuses = dict(db.execute("SELECT status, COUNT(*) FROM records GROUP BY status").fetchall())
    assert statuses == {"ok": 9, "error": 1}
    lines = (result.run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["case_id"] for line in lines]
    assert sorted(ids) == sorted(r["cid"] for r in rows)
    err = next(json.loads(x) for x in lines if json.loads(x)["status"] == "error")
    assert err["case_id"] == "b5" and "400" in err["error"]
    usage = s["usage"]
    assert json.dumps(usage)  # serialisable
    manifest = json.loads((result.run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["template_hashes"] and manifest["data"]["fingerprint"]


def test_rerun_is_free_and_retries_only_failures(tmp_path: Path, loopback: LoopbackServer) -> None:
    rows = [judge_row(f"c{i}", "good" if i % 2 else "bad", "好" if i % 3 else "差") for i in range(12)]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    first = asyncio.run(execute(_spec(data, tmp_path / "run", loopback)))
    calls = loopback.stats.requests
    again = asyncio.run(execute(_spec(data, tmp_path / "run", loopback)))
    assert loopback.stats.requests == calls  # nothing left to do: no call at all
    assert again.summary["metrics"] == first.summary["metrics"]
    assert again.summary["invocation"]["resumed_samples"] == 12
    # A fresh run directory with the same config is served by the response cache
    other = asyncio.run(execute(_spec(data, tmp_path / "run2", loopback)))
    assert loopback.stats.requests == calls
    assert other.summary["metrics"] == first.summary["metrics"]


def test_changed_config_refuses_to_mix_records(tmp_path: Path, loopback: LoopbackServer) -> None:
    data = write_jsonl(tmp_path / "cases.jsonl", [judge_row("c1", "good", "好")])
    asyncio.run(execute(_spec(data, tmp_path / "run", loopback)))
    spec = _spec(data, tmp_path / "run", loopback)
    spec.task_options = {"lang": "en"}
    with pytest.raises(ConfigError, match="different configuration"):
        asyncio.run(execute(spec))
    spec.fresh = True
    assert asyncio.run(execute(spec)).summary["n_selected"] == 1


def test_limit_is_balanced_and_nested(tmp_path: Path, loopback: LoopbackServer) -> None:
    rows = [judge_row(f"b{i}", "bad", "差") for i in range(10)] + [judge_row(f"g{i}", "good", "好") for i in range(10)]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    small = asyncio.run(execute(_spec(data, tmp_path / "run", loopback, limit=4)))
    assert (small.summary["metrics"]["n_good"], small.summary["metrics"]["n_bad"]) == (2, 2)
    big = asyncio.run(execute(_spec(data, tmp_path / "run", loopback, limit=8)))
    assert big.summary["invocation"]["resumed_samples"] == 4  # the first 4 are a subset of the 8
    assert (big.summary["metrics"]["n_good"], big.summary["metrics"]["n_bad"]) == (4, 4)


def test_a_run_where_nothing_works_stops_early(tmp_path: Path, loopback: LoopbackServer) -> None:
    from uxbench.orchestrate.runner import ABORT_AFTER_ERRORS, RunAborted

    rows = [judge_row(f"c{i}", "good", "好", "[[FAULT:400]]") for i in range(40)]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    with pytest.raises(RunAborted, match="all failed") as info:
        asyncio.run(execute(_spec(data, tmp_path / "run", loopback)))
    assert "400" in str(info.value) and "nothing was kept" in str(info.value)
    # stopped well before trying every sample; the new directory held no finished sample, so it is gone
    assert ABORT_AFTER_ERRORS <= loopback.stats.requests < 40
    assert not (tmp_path / "run").exists()


def test_verdict_from_logprobs_reads_the_first_token_distribution(tmp_path: Path, loopback: LoopbackServer) -> None:
    # The server answers the SAY word with probability P and puts the other verdict word second with
    # 0.9 of the rest: p(good) = 0.8 / (0.8 + 0.18) when it says 好, and 0.18 / (0.18 + 0.8) when it says 差.
    rows = [judge_row("g1", "good", "好", "[[P:0.8]]"), judge_row("b1", "bad", "差", "[[P:0.8]]")]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    spec = _spec(data, tmp_path / "run", loopback)
    spec.task_options = {"lang": "zh", "verdict_from": "logprobs"}
    result = asyncio.run(execute(spec))
    recs = {json.loads(x)["case_id"]: json.loads(x)
            for x in (result.run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()}
    assert recs["g1"]["prediction"] == "good" and recs["g1"]["score"] == pytest.approx(0.8 / 0.98)
    assert recs["b1"]["prediction"] == "bad" and recs["b1"]["score"] == pytest.approx(0.18 / 0.98)
    assert loopback.stats.last_body["top_logprobs"] == 20 and loopback.stats.last_body["logprobs"] is True


def test_summary_settings_do_not_change_the_run(tmp_path: Path, loopback: LoopbackServer) -> None:
    """Bootstrap rounds and seed shape the summary only: another --n-boot finds the same run and calls nothing."""
    rows = [judge_row(f"c{i}", "good" if i % 2 else "bad", "好" if i % 3 else "差") for i in range(6)]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    first = asyncio.run(execute(_spec(data, tmp_path / "run", loopback)))
    calls = loopback.stats.requests
    other = _spec(data, tmp_path / "run", loopback).model_copy(update={"summary": SummaryOptions(n_boot=50, seed=7)})
    again = asyncio.run(execute(other))
    assert loopback.stats.requests == calls and again.summary["run_id"] == first.summary["run_id"]
    assert again.summary["summary_options"] == {"n_boot": 50, "seed": 7}
    assert again.summary["metrics"]["all"]["avg_acc"]["value"] == first.summary["metrics"]["all"]["avg_acc"]["value"]

"""Outcomes that used to pass in silence (issue 17, item 2): each is now an error that says what to do, or a
visible note, and each test fails on the old behaviour."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import assert_clean_error, invoke, judge_rows, write_jsonl

from extra_skip import require_extra

EVAL = ("--task", "eval", "--model", "scripted:echo", "--data", "demo", "--quiet")


def _summary(run_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def test_a_system_prompt_that_is_neither_a_preset_nor_a_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = invoke("run", *EVAL, "--system-prompt", "helpfull", "--out", out)
    assert_clean_error(result, "--system-prompt 'helpfull' is neither a preset", "Did you mean 'helpful'?",
                       "text:helpfull")
    assert not out.exists()
    assert_clean_error(invoke("run", *EVAL, "--system-prompt", "prompts/mine.txt", "--out", out), "no such file")
    # Marked as text, or written as several words, it is the prompt itself; a file is read.
    marked = invoke("run", *EVAL, "--system-prompt", "text:helpfull", "--out", tmp_path / "marked")
    assert marked.exit_code == 0, marked.output
    manifest = json.loads((tmp_path / "marked" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["task_config"]["system_prompt"] == "helpfull"
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Be brief and kind.", encoding="utf-8")
    from_file = invoke("run", *EVAL, "--system-prompt", str(prompt), "--out", tmp_path / "file")
    assert from_file.exit_code == 0, from_file.output
    manifest = json.loads((tmp_path / "file" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["task_config"]["system_prompt"] == "Be brief and kind."
    words = invoke("run", *EVAL, "--system-prompt", "You are terse.", "--out", tmp_path / "words")
    assert words.exit_code == 0, words.output


def test_a_second_judge_does_not_silently_become_primary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = invoke("run", *EVAL, "--judge", "scripted:always-good", "--out", out)
    assert first.exit_code == 0, first.output
    primary = _summary(out)["primary_judge"]
    assert "Note:" not in first.stderr
    second = invoke("run", *EVAL, "--judge", "scripted:always-bad", "--out", out)
    assert second.exit_code == 0, second.output
    assert _summary(out)["primary_judge"] == primary  # was: the new judge, silently
    text = " ".join(second.stderr.split())
    assert "scripted:always-bad scores this run beside its primary judge scripted:always-good, which stays" in text
    # --primary asks for it, and says so; `score` follows the same rule.
    third = invoke("run", *EVAL, "--judge", "scripted:always-bad", "--primary", "--out", out)
    assert third.exit_code == 0, third.output
    assert _summary(out)["primary_judge"] != primary
    assert "scripted:always-bad is now this run's primary judge, in place of scripted:always-good" in \
        " ".join(third.stderr.split())
    scored = invoke("score", out, "--judge", "scripted:always-good", "--quiet")
    assert scored.exit_code == 0, scored.output
    assert _summary(out)["primary_judge"] != primary
    assert "which stays primary" in " ".join(scored.stderr.split())
    assert "--primary" in invoke("run", "--help").output and "primary judge" in invoke("run", "--help").output


def _eval_row(cid: str, history_chars: list[int], query: str = "What now?") -> dict:  # type: ignore[type-arg]
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i} " + "x" * n}
               for i, n in enumerate(history_chars)]
    return {"cid": cid, "history": history, "query": query}


def test_a_conversation_longer_than_the_context_is_recorded_not_retried(tmp_path: Path) -> None:
    from uxbench.testing import LoopbackConfig, LoopbackServer

    rows = [_eval_row("short", [50, 50]), _eval_row("long", [400] * 8), _eval_row("huge-query", [], "q" * 2000)]
    data = write_jsonl(tmp_path / "eval.jsonl", rows)
    out = tmp_path / "run"
    with LoopbackServer(LoopbackConfig(max_prompt_chars=1500, default_answer="ok")) as server:
        args = ("run", "--task", "eval", "--model", "openai:loopback", "-M", f"base_url={server.base_url}",
                "--data", data, "--quiet", "--out", out)
        first = invoke(*args)
        assert first.exit_code == 0, first.output  # was: exit 1 and "Rerun the same command to retry them"
        text = " ".join(first.stderr.split())
        assert "2 of 3 conversations are longer than the model accepts" in text and "--fit-history" in text
        assert "Rerun the same command to retry them" not in text
        summary = _summary(out)
        assert summary["n_too_long"] == 2 and summary["n_errors"] == 0 and summary["n_generated"] == 1
        sent = server.stats.requests
        again = invoke(*args)  # a permanent outcome: nothing is asked again
        assert again.exit_code == 0 and server.stats.requests == sent
        fitted = invoke(*args[:-1], tmp_path / "fitted", "--fit-history")
        assert fitted.exit_code == 0, fitted.output
    summary = _summary(tmp_path / "fitted")
    assert summary["n_too_long"] == 1 and summary["n_history_cut"] == 1
    records = {json.loads(line)["case_id"]: json.loads(line)
               for line in (tmp_path / "fitted" / "samples.jsonl").read_text(encoding="utf-8").splitlines()}
    cut = records["long"]["extra"]["history_cut"]
    assert cut["history_messages"] == 8 and 0 < cut["kept_messages"] < 8
    assert cut["dropped_messages"] == 8 - cut["kept_messages"]
    assert records["huge-query"]["status"] == "too_long" and records["short"]["extra"].get("history_cut") is None
    assert "1 conversations were shortened to fit the model" in " ".join(fitted.stderr.split())


def test_skipped_rows_are_said_and_listed_and_not_in_the_count(tmp_path: Path) -> None:
    rows = judge_rows(4)
    rows[1:1] = [{"cid": "broken-1"}]
    rows.append({"cid": "broken-2", "ground_truth": 1})
    data = write_jsonl(tmp_path / "judge.jsonl", rows)
    out = tmp_path / "run"
    seen: list[str] = []
    from uxbench.cli.progress import RichProgress

    original = RichProgress.__call__

    def spy(self: RichProgress, event: object) -> None:
        original(self, event)  # type: ignore[arg-type]
        if getattr(event, "kind", "") == "start":
            seen.append(f"{event.done}/{event.total}")  # type: ignore[attr-defined]

    RichProgress.__call__ = spy  # type: ignore[method-assign]
    try:
        result = invoke("run", "--model", "scripted:always-good", "--data", data, "--skip-invalid", "--out", out)
    finally:
        RichProgress.__call__ = original  # type: ignore[method-assign]
    assert result.exit_code == 0, result.output
    assert seen == ["0/4"]  # was 0/6: the bar counted the invalid rows and ended at 4/6
    text = " ".join(result.stderr.split())
    assert text.count("2 invalid rows were skipped (--skip-invalid)") == 2  # when the run starts, and at its end
    assert "".join(result.stderr.split()).count(str(out / "skipped_rows.jsonl")) == 2
    listed = [json.loads(line) for line in (out / "skipped_rows.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [entry["line"] for entry in listed] == [2, 6] and all(entry["reason"] for entry in listed)
    summary = _summary(out)
    assert summary["skipped_rows"]["count"] == 2 and summary["n_samples"] == 4


def test_data_validate_on_a_chat_log_points_to_mining(tmp_path: Path) -> None:
    from cli_support import turn

    logs = tmp_path / "logs"
    logs.mkdir()
    write_jsonl(logs / "log.jsonl", [turn(f"c{c}", i, f"message {i}") for c in range(20) for i in range(4)])
    result = invoke("data", "validate", logs)
    assert result.exit_code == 1
    text = " ".join(result.stderr.split())
    assert "looks like a chat log (one turn per row: conversation_id, role, content)" in text
    assert f"uxbench mine run {logs} --out mined/" in text
    assert result.stdout.count("no user query") == 3 and "... and 77 more" in result.stdout  # was: 20 of 80 listed
    # Task 1 rows with a few bad ones are not taken for a log.
    rows = [*judge_rows(12), {"cid": "x"}]
    assert "chat log" not in invoke("data", "validate", write_jsonl(tmp_path / "t1.jsonl", rows)).output


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # nothing listens there once the socket is closed


def test_a_missing_key_an_unreachable_server_or_device_stop_before_the_run_starts(
        tmp_path: Path, monkeypatch: object) -> None:
    import pytest

    mp: pytest.MonkeyPatch = monkeypatch  # type: ignore[assignment]
    mp.delenv("OPENAI_API_KEY", raising=False)
    mp.delenv("OPENAI_BASE_URL", raising=False)
    data = write_jsonl(tmp_path / "judge.jsonl", judge_rows(4))
    out = tmp_path / "run"
    result = invoke("run", "--model", "openai:gpt-4o-mini", "--data", data, "--out", out)
    assert_clean_error(result, "--model openai:gpt-4o-mini", "needs an API key", "$OPENAI_API_KEY is not set")
    assert not out.exists()
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    result = invoke("run", "--model", "openai:m", "-M", f"base_url={dead}", "--data", data, "--out", out)
    assert_clean_error(result, f"Cannot reach {dead}", "is the server running there?")
    assert not out.exists()
    # The judge of Tasks 2/3 is checked before a single reply is generated.
    from uxbench.testing import LoopbackConfig, LoopbackServer

    with LoopbackServer(LoopbackConfig(default_answer="a reply")) as server:
        result = invoke("run", "--task", "eval", "--model", "openai:m", "-M", f"base_url={server.base_url}",
                        "--data", "demo", "--judge", "openai:grm", "-J", f"base_url={dead}", "--out", out)
        assert server.stats.requests == 0
    assert_clean_error(result, "--judge openai:grm", "Cannot reach")
    assert not out.exists()
    # An in-process model on a device that is not there: said before any weights load.
    require_extra("local")
    import torch
    if not torch.cuda.is_available():
        weights = tmp_path / "weights"
        weights.mkdir()
        result = invoke("run", "--model", f"hf:{weights}", "-M", "device=cuda", "--data", data, "--out", out)
        assert_clean_error(result, "-M device=cuda", "sees no CUDA GPU on this machine", "device=cpu")
        assert not out.exists()
    # mine run: before any stage runs.
    from cli_support import turn

    log = write_jsonl(tmp_path / "log.jsonl", [turn("c1", i, f"message {i}") for i in range(4)])
    result = invoke("mine", "run", log, "--out", tmp_path / "mined", "--model", "openai:gpt-4o-mini")
    assert_clean_error(result, "needs an API key")
    assert not (tmp_path / "mined").exists()


def test_a_run_stopped_before_any_sample_finished_leaves_no_directory(tmp_path: Path) -> None:
    from cli_support import judge_row

    from uxbench.testing import LoopbackConfig, LoopbackServer

    rows = [judge_row(f"c{i}", "good", "good") for i in range(10)]
    for row in rows:
        row["agent_response_full"] += " [[FAULT:401]]"
    data = write_jsonl(tmp_path / "judge.jsonl", rows)
    out = tmp_path / "runs" / "judge-run"
    with LoopbackServer(LoopbackConfig()) as server:
        result = invoke("run", "--model", "openai:loopback", "-M", f"base_url={server.base_url}", "--quiet",
                        "--data", data, "--out", out, "--max-attempts", "1", "--concurrency", "1")
    assert_clean_error(result, "all failed, so the run was stopped", "nothing was kept")
    assert not out.exists()  # was: a directory with a manifest and no summary, which `leaderboard runs/*` trips on


def _complaint_log(path: Path) -> Path:
    from cli_support import turn

    rows = []
    for c in range(3):
        rows += [turn(f"c{c}", 0, "How do I make my IP address static on a Mac?"),
                 turn(f"c{c}", 1, "Open the Control Panel and choose Network and Sharing Center."),
                 turn(f"c{c}", 2, "That's wrong, I said Mac, not Windows. Useless answer."),
                 turn(f"c{c}", 3, "Sorry: open System Settings, Network, Details, TCP/IP, Manually.")]
    return write_jsonl(path, rows)


def test_mine_run_where_every_agent_call_fails_is_an_error_with_the_cause(tmp_path: Path) -> None:
    from uxbench.testing import LoopbackConfig, LoopbackServer

    log = _complaint_log(tmp_path / "log.jsonl")
    out = tmp_path / "mined"
    with LoopbackServer(LoopbackConfig(echo_headers_status=401)) as server:
        result = invoke("mine", "run", log, "--out", out, "--model", "openai:loopback", "-M",
                        f"base_url={server.base_url}", "--quiet")
        assert server.stats.requests > 0
    # was: exit 0 and "0 cases selected", the failures only in stage_counts.json
    assert_clean_error(result, "of batch 0 failed", "FatalModelError HTTP 401",
                       "Check the model name, base_url and API key")
    assert (out / "work").is_dir()  # the deterministic stages' checkpoints are kept for the rerun


def test_mine_run_counts_failed_agent_calls_by_cause(tmp_path: Path) -> None:
    from uxbench.mining.pipeline.llm_stages import failure_causes
    from uxbench.testing import LoopbackConfig, LoopbackServer

    log = _complaint_log(tmp_path / "log.jsonl")
    out = tmp_path / "mined"
    with LoopbackServer(LoopbackConfig(default_answer="not JSON at all")) as server:
        result = invoke("mine", "run", log, "--out", out, "--model", "openai:loopback", "-M",
                        f"base_url={server.base_url}", "--quiet")
    assert_clean_error(result, "(1 invalid output)", "the first: invalid output")  # one session: the rest are copies
    counts = {"exchanges_miner_bad": 5, "exchanges_judge_bad": 2, "failed:invalid output": 2,
              "failed:FatalModelError HTTP 401": 1, "failed_calls_miner_bad": 3, "candidates": 0}
    assert failure_causes(counts) == (7, 3, {"invalid output": 2, "FatalModelError HTTP 401": 1})


def test_the_end_of_run_line_says_where_failed_samples_are_counted(tmp_path: Path) -> None:
    from uxbench.testing import LoopbackConfig, LoopbackServer

    rows = [_eval_row(f"ok{i}", [20, 20]) for i in range(3)] + [_eval_row("bad", [20, 20], "q [[FAULT:400]]")]
    data = write_jsonl(tmp_path / "eval.jsonl", rows)
    with LoopbackServer(LoopbackConfig(default_answer="a reply")) as server:
        result = invoke("run", "--task", "eval", "--model", "openai:loopback", "-M", f"base_url={server.base_url}",
                        "--judge", "scripted:always-good", "--data", data, "--quiet", "--out", tmp_path / "run")
    assert result.exit_code == 1, result.output
    text = " ".join(result.stderr.split())
    # was: "they are not in the figures", while the Good % of all cases counts them as not good
    assert "1 of 4 samples failed: each counts as not good in the Good % of all 4 cases and is left out of the " \
        "Good % of the scored replies" in text
    summary = _summary(tmp_path / "run")
    judge = summary["judges"][summary["primary_judge"]]["metrics"]
    assert "they are not in the figures" not in text and judge["n_cases"] == 4

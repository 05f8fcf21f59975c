"""`uxbench sim run` and `uxbench personas` as a user types them: a run directory, resume, the summary in every
format, mining on the output, and bad input refused with one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sim_support import REFUND, ZH_REFUND, helpful_rules, write_personas
from typer.testing import CliRunner, Result

from uxbench.cli.main import app


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def clean_error(result: Result, *needles: str, code: int = 2) -> None:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.output, (needle, result.output)


def test_sim_run_writes_a_run_directory_and_resumes(tmp_path: Path) -> None:
    personas = write_personas(tmp_path / "p.jsonl", REFUND, ZH_REFUND)
    rules = helpful_rules(tmp_path / "rules.json")
    out = tmp_path / "run"
    args = ["sim", "run", "--personas", personas, "--model", f"scripted:file:{rules}", "--simulator",
            "scripted:user", "--trials", "3", "--out", out, "--n-boot", "200", "--quiet"]
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    assert "Task success %" in first.stdout and "100.0" in first.stdout
    for name in ("manifest.json", "sim.sqlite", "sessions.jsonl", "acts.jsonl", "summary.json"):
        assert (out / name).is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "sim" and manifest["schema_version"] == 1
    assert set(manifest["personas"]["hashes"]) == {"refund-user", "zh-refund-user"}
    assert manifest["simulator_prompt_digests"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_sessions"] == 6 and summary["metrics"]["success_rate"]["value"] == 1.0
    rows = [json.loads(line) for line in (out / "sessions.jsonl").read_text().splitlines()]
    assert {r["role"] for r in rows} == {"user", "assistant"} and all("created_at" in r for r in rows)
    acts = [json.loads(line) for line in (out / "acts.jsonl").read_text().splitlines()]
    assert len(acts) == 6 and acts[0]["turns"][0]["act"] == "open"

    again = invoke(*args[:-1])
    assert again.exit_code == 0, again.output
    assert "resuming: 6 sessions already done" in " ".join(again.stderr.split())
    assert json.loads((out / "summary.json").read_text())["metrics"] == summary["metrics"]

    for fmt in ("md", "csv", "json"):
        shown = invoke("report", out, "--format", fmt)
        assert shown.exit_code == 0, shown.output
    assert "Task success" in invoke("report", out).stdout


def test_mine_run_reads_a_sim_run_unchanged(tmp_path: Path) -> None:
    personas = write_personas(tmp_path / "p.jsonl", REFUND, ZH_REFUND)
    out = tmp_path / "run"
    assert invoke("sim", "run", "--personas", personas, "--model", "scripted:always-bad", "--simulator",
                  "scripted:user", "--out", out, "--quiet", "--n-boot", "50").exit_code == 0
    for source in (out / "sessions.jsonl", out):
        mined = invoke("mine", "run", source, "--out", tmp_path / f"mined-{source.name}", "--no-llm", "--quiet",
                       "--workers", "1")
        assert mined.exit_code == 0, mined.output
        assert "2 conversations" in mined.stdout


def test_personas_validate_reports_every_error_with_its_place(tmp_path: Path) -> None:
    bad = dict(REFUND, id="bad", colour="blue")
    path = write_personas(tmp_path / "p.jsonl", REFUND, bad)
    result = invoke("personas", "validate", path)
    clean_error(result, "line 2", "field 'colour'", "unknown field", "1 valid personas", code=1)
    assert invoke("personas", "validate", "demo").exit_code == 0
    listed = invoke("personas", "list", "--format", "json")
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)) == 24


def test_personas_list_fits_80_columns_with_every_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    shown = invoke("personas", "list")
    assert shown.exit_code == 0, shown.output
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
    for pid in ("en-refund-impatient", "en-router-novice"):
        assert pid in shown.stdout  # names wrap; they are never squeezed out


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    clean_error(invoke("sim", "run", "--personas", empty, "--model", "scripted:always-bad", "--simulator",
                       "scripted:user", "--out", tmp_path / "x"), "holds no persona files")
    unknown = write_personas(tmp_path / "u.jsonl", dict(REFUND, colour="blue"))
    clean_error(invoke("sim", "run", "--personas", unknown, "--model", "scripted:always-bad", "--simulator",
                       "scripted:user", "--out", tmp_path / "y"), "u.jsonl", "line 1", "colour")
    good = write_personas(tmp_path / "g.jsonl", REFUND)
    clean_error(invoke("sim", "run", "--personas", good, "--mode", "freee", "--model", "scripted:always-bad"),
                "Did you mean 'free'")
    clean_error(invoke("sim", "run", "--personas", good, "--model", "scripted:always-bad", "--simulator",
                       "scripted:user", "--lang", "zh"), "none of the 1 personas")
    clean_error(invoke("sim", "run", "--personas", good, "--model", "scripted:always-bad", "--simulator",
                       "scripted:user", "--judge-arg", "a=b"), "--judge-arg needs --judge")
    clean_error(invoke("sim", "run", "--personas", good, "--model", "nosuch:x", "--simulator", "scripted:user"),
                "Unknown model provider")
    only_judge = dict(REFUND, goal=[{"id": "g", "request": "help me", "check": {"question": "Did it help?"}}],
                      facts=[])
    path = write_personas(tmp_path / "j.jsonl", only_judge)
    clean_error(invoke("sim", "run", "--personas", path, "--model", "scripted:always-bad", "--simulator",
                       "scripted:user"), "rules assessor cannot decide", "--assessor")


def test_a_simulator_that_returns_nothing_is_counted_or_stops_the_run(tmp_path: Path) -> None:
    from sim_support import rules_file

    personas = write_personas(tmp_path / "p.jsonl", REFUND, ZH_REFUND)
    silent = rules_file(tmp_path / "silent.json", [], "")
    few = invoke("sim", "run", "--personas", personas, "--model", "scripted:always-bad", "--simulator",
                 f"scripted:file:{silent}", "--out", tmp_path / "few", "--quiet", "--n-boot", "50")
    clean_error(few, "2 of 2 sessions ended with an error", "simulator 2", "empty", code=1)
    summary = json.loads((tmp_path / "few" / "summary.json").read_text())
    assert summary["n_errors"] == 2 and summary["metrics"]["termination"]["error"]["value"] == 1.0
    many = invoke("sim", "run", "--personas", "demo", "--model", "scripted:always-bad", "--simulator",
                  f"scripted:file:{silent}", "--out", tmp_path / "many", "--quiet", "--concurrency", "1")
    clean_error(many, "all failed, so the run was stopped", "empty")


def test_a_judge_rates_each_reply_and_can_be_added_to_a_finished_run(tmp_path: Path) -> None:
    from sim_support import rules_file

    personas = write_personas(tmp_path / "p.jsonl", REFUND, ZH_REFUND)
    judge = rules_file(tmp_path / "judge.json", [(r"\[REPLY\]: (Thanks\. Your refund|好的，退款已提交)", "5")], "2")
    rules = helpful_rules(tmp_path / "rules.json")
    base = ["sim", "run", "--personas", personas, "--model", f"scripted:file:{rules}", "--simulator",
            "scripted:user", "--out", tmp_path / "run", "--quiet", "--n-boot", "50"]
    assert invoke(*base).exit_code == 0
    judged = invoke(*base, "--judge", f"scripted:file:{judge}", "--format", "json")
    assert judged.exit_code == 0, judged.output
    assert "resuming: 2 sessions already done" in " ".join(judged.stderr.split())
    summary = json.loads(judged.stdout)
    curve = summary["metrics"]["judge_satisfaction"]
    assert curve["n"] == 2 and curve["final"]["value"] == 2.0  # the last reply (the timing) got a 2
    assert summary["satisfaction_judge"] == f"scripted:file:{judge}"
    acts = [json.loads(line) for line in (tmp_path / "run" / "acts.jsonl").read_text().splitlines()]
    turns = acts[0]["judgements"][f"satisfaction:scripted:file:{judge}"]["turns"]
    assert sorted(turns.values()) == [2, 2, 5]
    same = invoke(*base, "--judge", "scripted:user")
    clean_error(same, "Unknown scripted model")


def _scripted_run(tmp_path: Path, *, trials: int) -> Path:
    """A `sim run` of the two refund personas with scripted parties; its directory."""
    personas = write_personas(tmp_path / "p.jsonl", REFUND, ZH_REFUND)
    rules = helpful_rules(tmp_path / "rules.json")
    out = tmp_path / "run"
    result = invoke("sim", "run", "--personas", personas, "--model", f"scripted:file:{rules}", "--simulator",
                    "scripted:user", "--trials", str(trials), "--out", out, "--n-boot", "50", "--quiet")
    assert result.exit_code == 0, result.output
    return out


def test_the_session_log_written_in_the_summary_pass_is_the_store_export(tmp_path: Path) -> None:
    """sessions.jsonl is written as the summary reads the sessions (one pass): byte for byte what the store's own
    export of the run's sessions writes."""
    from uxbench.sim.store import SimStore

    out = _scripted_run(tmp_path, trials=2)
    written = (out / "sessions.jsonl").read_bytes()
    assert written.count(b"\n") > 8
    store = SimStore(out)
    try:
        store.export_log()
    finally:
        store.close()
    assert (out / "sessions.jsonl").read_bytes() == written


def test_a_summary_from_digests_made_as_sessions_ended_equals_one_read_from_the_store(tmp_path: Path) -> None:
    """`sim run` keeps each session's digest as it ends, and its summary reads none of those sessions again: the
    summary, acts.jsonl and sessions.jsonl are byte for byte what the store alone gives. A judge's judgements
    (which a digest does not hold) send the summary back to the store."""
    import pytest

    from uxbench.sim import run as sim_run
    from uxbench.sim.store import SimStore
    from uxbench.sim.summary import session_digest
    from uxbench.sim.types import SessionRecord

    out = _scripted_run(tmp_path, trials=3)
    store = SimStore(out)
    try:
        manifest = store.read_manifest() or {}
        stored = store.personas()
        digests = {r.session_id: session_digest(r, stored.get(r.persona_id)) for r in store.iter_sessions()}
        assert len(digests) == 6
        plain = sim_run.summarize(store, manifest, n_boot=50)
        acts = (out / "acts.jsonl").read_bytes()
        logged: list[bytes] = []
        with pytest.MonkeyPatch.context() as mp:
            def refuse(*_a: object, **_k: object) -> None:
                raise AssertionError("a session with a digest was read again")

            mp.setattr(SessionRecord, "model_validate_json", refuse)
            from_digests = sim_run.summarize(store, manifest, n_boot=50, digests=digests, each=logged.append)
        assert from_digests == plain and (out / "acts.jsonl").read_bytes() == acts
        assert b"".join(logged) == (out / "sessions.jsonl").read_bytes()
        ran = json.loads((out / "summary.json").read_text())
        assert {k: v for k, v in ran.items() if k != "invocation"} == plain
        some = next(iter(digests))
        store.put_judgement(some, "satisfaction:scripted:x", {"turns": {"1": 4.0}})
        judged = sim_run.summarize(store, manifest, n_boot=50, digests=digests)
        assert judged["satisfaction_judge"] == "scripted:x" and judged != plain
    finally:
        store.close()

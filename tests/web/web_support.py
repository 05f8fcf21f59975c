"""Run directories and a mining output for the web tests, written through the project's own writers
(`RunStore` + the real summary; `uxbench mine run --no-llm`), with XSS payloads in conversation text, model
output, case ids and file names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uxbench.data.schema import CaseLabels, EvalCase, JudgeCase, Message
from uxbench.orchestrate.summary import run_summary
from uxbench.runs.records import SampleRecord, ScoreRecord
from uxbench.runs.store import RunStore
from uxbench.tasks.base import SummaryOptions
from uxbench.tasks.registry import create_task

LOOPBACK = "http://127.0.0.1"
"""The base URL of the tests' TestClients: the app answers to loopback names only (never to `testserver`)."""
XSS_TEXT = '<script>alert("xss-text")</script><img src=x onerror=alert("xss-img")>'
XSS_MD = '[click me](javascript:alert("xss-link")) and <b onmouseover=alert("xss-b")>bold</b>'
XSS_OUTPUT = '</div><script>alert("xss-output")</script>good'
XSS_CASE = 'case-<img src=x onerror=alert("xss-id")>'
XSS_MARKERS = ("xss-text", "xss-img", "xss-link", "xss-b", "xss-output", "xss-id")
SCENARIOS = ("work_productivity", "information_knowledge", "emotional_support")
DIFFICULTIES = ("easy", "medium", "hard")


def judge_cases(n: int = 30) -> list[JudgeCase]:
    cases = []
    for i in range(n):
        gold = "good" if i % 2 == 0 else "bad"
        history = [Message(role="user", content=f"hello {i}"),
                   Message(role="assistant", content="**hi**, how can I help?")]
        query = f"question number {i} about zebrafish" if i == 7 else f"question number {i}"
        if i == 9:
            query += " 预算多少"
        if i == 3:
            query = XSS_TEXT + " " + XSS_MD
        cases.append(JudgeCase(id=XSS_CASE if i == 5 else f"c{i:02d}", query=query, response=f"answer {i}",
                               label=gold, history=history,  # type: ignore[arg-type]
                               labels=CaseLabels(scenario_key=SCENARIOS[i % 3], difficulty=DIFFICULTIES[i % 3])))
    return cases


def write_judge_run(path: Path, model: str, right: list[bool], *, scores: bool = False) -> Path:
    """A Task 1 run over `judge_cases()`; case i judged right when right[i] (case 1's answer unparseable)."""
    task = create_task("judge", {})
    store = RunStore(path)
    selected = []
    for i, case in enumerate(judge_cases(len(right))):
        other = "bad" if case.label == "good" else "good"
        pred: str | None = case.label if right[i] else other
        if i == 1:
            pred = None
        sid = f"{path.name}-{i:03d}"
        selected.append(sid)
        strata: dict[str, Any] = {"scenario": case.labels.scenario_key, "dimension": "verbosity" if i % 2 else
                                  "accurate_answer", "difficulty": case.labels.difficulty, "n_turns": case.n_turns}
        store.put(SampleRecord(sample_id=sid, case_id=case.id, index=i, status="ok", gold=case.label,
                               prediction=pred, raw_output=XSS_OUTPUT if i == 3 else f"verdict: {pred}",
                               parse_note="final line" if pred else "no verdict",
                               score=(0.8 if pred == "good" else 0.3) if scores and pred else None, strata=strata),
                  case.__pydantic_serializer__.to_json(case))
    store.write_selection(selected)
    manifest: dict[str, Any] = {"run_id": path.name, "task": "judge", "task_config": task.config(),
                                "model": {"spec": model, "args": {}},
                                "data": {"description": "web test cases", "fingerprint": "fp-web", "demo": False}}
    store.write_manifest(manifest)
    store.write_summary(run_summary(store, task, manifest, SummaryOptions(n_boot=200), selected=selected))
    store.close()
    return path


def write_eval_run(path: Path, model: str, labels: dict[str, list[str | None]], *, grm: str | None = None) -> Path:
    """A Task 2 run with one reply per case and each judge's labels (the `grm` judge also gets p(good))."""
    task = create_task("eval", {})
    store = RunStore(path)
    selected = []
    n = len(next(iter(labels.values())))
    keys = {spec: f"{'grm' if spec == grm else 'pointwise'}-{spec.replace(':', '-')}" for spec in labels}
    for i in range(n):
        cid = f"e{i:02d}"
        case = EvalCase(id=cid, query=f"eval question {i}", history=[Message(role="user", content="hi")],
                        labels=CaseLabels(scenario_key=SCENARIOS[i % 3]))
        sid = f"{path.name}-{cid}"
        selected.append(sid)
        store.put(SampleRecord(sample_id=sid, case_id=cid, index=i, status="ok",
                               raw_output=XSS_OUTPUT if i == 2 else f"reply {i} from {model}",
                               strata={"scenario": SCENARIOS[i % 3], "history_messages": 1}),
                  case.__pydantic_serializer__.to_json(case))
        for spec, values in labels.items():
            grm_score = (0.9 if values[i] == "good" else 0.2) if spec == grm else None
            store.put_score(ScoreRecord(sample_id=sid, judge=keys[spec], case_id=cid, index=i, status="ok",
                                        label=values[i], score=grm_score,
                                        score_status="full" if spec == grm else "text",
                                        raw_output=f"verdict {values[i]}"))
    store.write_selection(selected)
    infos = {keys[s]: {"spec": s, "args": {}, "mode": "grm" if s == grm else "pointwise", "settings": {},
                       "template_hashes": {}} for s in labels}
    manifest: dict[str, Any] = {"run_id": path.name, "task": "eval", "task_config": task.config(),
                                "model": {"spec": model, "args": {}}, "judges": infos,
                                "primary_judge": keys[next(iter(labels))],
                                "data": {"description": "web eval cases", "fingerprint": "fp-eval", "demo": False}}
    store.write_manifest(manifest)
    store.write_summary(run_summary(store, task, manifest, SummaryOptions(n_boot=200), selected=selected))
    store.close()
    return path


def write_log(path: Path) -> Path:
    """A small canonical chat log with complaints (one carrying XSS payloads), for `uxbench mine run`."""
    rows = []
    for k in range(4):
        cid = f"conv{k}"
        complaint = "That's wrong, it is not what I asked. " + (XSS_TEXT if k == 0 else "I need the Mac steps.")
        turns = [("user", f"How do I set a static IP on my computer? ({k})", "2024-05-01T09:00:00Z"),
                 ("assistant", "Open the settings and choose the network page, then the advanced options. " * 3,
                  "2024-05-01T09:00:10Z"),
                 ("user", complaint, "2024-05-01T09:01:00Z"),
                 ("assistant", "You're right, sorry. On a Mac open System Settings, Network, Details.",
                  "2024-05-01T09:01:10Z"),
                 ("user", "Thanks, that worked!", "2024-05-01T09:02:30Z")]
        for i, (role, content, at) in enumerate(turns):
            row: dict[str, Any] = {"conversation_id": cid, "turn_index": i, "role": role, "content": content,
                                   "created_at": at}
            if i == 1:
                row["feedback"] = "dislike"
            rows.append(row)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def mine(log_dir: Path, out: Path) -> Path:
    from typer.testing import CliRunner

    from uxbench.cli.main import app

    result = CliRunner().invoke(app, ["mine", "run", str(log_dir), "--out", str(out), "--no-llm", "--workers", "1"])
    assert result.exit_code == 0, result.output
    return out


def build_all(root: Path) -> dict[str, Path]:
    """Every directory the web tests serve, under `root`."""
    right = [i % 3 != 0 for i in range(30)]
    paths = {
        "judge": write_judge_run(root / "runs" / "t1-alpha", "openai:gpt-4o", right, scores=True),
        "judge2": write_judge_run(root / "runs" / "t1-beta", "openai:gpt-4o-mini", [True] * 30),
        "eval": write_eval_run(root / "runs" / "t2-alpha", "openai:gpt-4o",
                               {"openai:judge-x": ["good", "bad", "good", None, "good", "bad"] * 3,
                                "local:grm": ["good", "good", "bad", "bad", "good", "bad"] * 3}, grm="local:grm"),
    }
    logs = root / "logs"
    logs.mkdir()
    write_log(logs / 'log-<img src=x onerror=alert("xss-file")>.jsonl')
    paths["mine"] = mine(logs, root / "mined")
    return paths

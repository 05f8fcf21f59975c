"""A realistic review workspace for the browser tests of the daily review tool (issue 27): every directory is
written by the project's own commands with scripted providers, as a user would make it (`uxbench run`,
`uxbench mine run --no-llm`, `uxbench sim run`, `human new`), over Chinese conversations written for these tests:

- a Task 1 run whose verdicts come from logprobs (`scripted:oracle`: p(good) varies, some confident errors) and a
  second Task 1 model on the same cases (compare), with the long run ids `uxbench run` gives; a Task 1 run of
  the pointwise judge (its calibration) and one on the bundled demo data (a DEMO badge, a second data set);
- two Task 2 runs (two reply models on the same cases) with a pointwise primary judge (calibrated on one: a
  corrected Good%) and a GRM judge (p(good));
- a Task 3 run with Chinese complaints;
- a mining output of a Chinese log with exported cases; a simulated-user run of the demo personas;
- a pointwise study (3 annotators) of the Task 1 run and a pairwise study of the two Task 2 runs (one shared
  conversation, the longest of the data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from web_support import mine
from web_support_zh import COMPLAINTS, QUERIES, RECOVERIES, REPLIES, SCENARIOS, _exported, write_log_zh

from uxbench.human.study import Study

N_JUDGE = 120
N_EVAL = 12
LONG_HISTORY = 14
"""Messages of history of every Task 2 case: the pairwise study's shared conversation is long."""
P_GOOD = (0.97, 0.62, 0.88, 0.55, 0.93, 0.71, 0.99, 0.66)
DIFFICULTIES = ("easy", "medium", "hard")
DIMENSIONS = ("准确回答", "回复冗长", "语气生硬")
FORMULA = "=SUM(A1:A3) 在表格里怎么用？"
"""A query a spreadsheet would run as a formula: exported to CSV, it must stay text."""


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _history(i: int, pairs: int) -> list[dict[str, str]]:
    out = []
    for k in range(pairs):
        out.append({"role": "user", "content": f"第 {k + 1} 个问题：{QUERIES[(i + k) % len(QUERIES)]}"})
        out.append({"role": "assistant", "content": REPLIES[(i + k) % len(REPLIES)]})
    return out


def judge_rows() -> list[dict[str, Any]]:
    """Task 1 cases; the oracle's verdict and its probability ride in the first history message (markers of the
    scripted provider). Every seventh case's marker contradicts the label: a confident error to find."""
    rows = []
    for i in range(N_JUDGE):
        label = "good" if i % 2 == 0 else "bad"
        said = ("bad" if label == "good" else "good") if i % 7 == 3 else label
        history = _history(i, 1 + i % 4)
        history[0]["content"] += f" [[GOLD:{said}]][[P:{P_GOOD[i % len(P_GOOD)]}]]"
        query = FORMULA if i == 2 else QUERIES[i % len(QUERIES)] + ("（请详细说明）" if i % 5 == 0 else "")
        rows.append({"id": f"zh-{i:03d}", "task": "judge", "history": history, "query": query,
                     "response": REPLIES[i % len(REPLIES)], "label": label, "scenario": SCENARIOS[i % 5],
                     "difficulty": DIFFICULTIES[i % 3],
                     **({"failure_dimension": DIMENSIONS[i % 3]} if label == "bad" else {})})
    return rows


def eval_rows() -> list[dict[str, Any]]:
    return [{"id": f"ev-{i:02d}", "task": "eval", "history": _history(i, LONG_HISTORY // 2),
             "query": QUERIES[i % len(QUERIES)], "scenario": SCENARIOS[i % 5]} for i in range(N_EVAL)]


def recovery_rows() -> list[dict[str, Any]]:
    return [{"id": f"rc-{i:02d}", "task": "recovery", "history": [{"role": "user", "content": QUERIES[i % 6]}],
             "failed_response": REPLIES[i % len(REPLIES)], "complaint": COMPLAINTS[i % len(COMPLAINTS)],
             "scenario": SCENARIOS[i % 5]} for i in range(N_EVAL)]


def _rules(path: Path, rules: list[tuple[str, str]], default: str) -> str:
    path.write_text(json.dumps({"rules": [{"pattern": p, "response": r} for p, r in rules], "default": default},
                               ensure_ascii=False), encoding="utf-8")
    return f"scripted:file:{path}"


def _invoke(*args: object) -> None:
    from typer.testing import CliRunner

    from uxbench.cli.main import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def _run(root: Path, name: str, *args: object) -> Path:
    out = root / "runs" / name
    _invoke("run", "--quiet", "--no-cache", "--n-boot", "200", "--out", out, *args)
    return out


def build_review(root: Path) -> dict[str, Path]:
    """Every directory of the review workspace under `root` (see the module's docstring)."""
    data = root / "data"
    judge = _write(data / "任务一" / "judge_zh.jsonl", judge_rows())
    evals = _write(data / "eval_zh.jsonl", eval_rows())
    recov = _write(data / "recovery_zh.jsonl", recovery_rows())
    letter = "好的，下面是一封正式的请假邮件：\n\n尊敬的王经理：\n因家中有事，特申请请假三天，望批准。\n\n此致\n敬礼"
    weather = "明天北京晴，最高气温 18 度，适合早上跑步。"
    model_a = _rules(root / "model_a.json", [(r"天气", weather), (r"请假", letter)],
                     "**建议**：\n1. 早点休息\n2. 少喝咖啡\n3. 写日记")
    model_b = _rules(root / "model_b.json", [(r"天气", "不知道。")], "好的。")
    bad, good = "理由：回复没有回答问题。\n判断：差", "理由：回复切题，信息完整。\n判断：好"
    judge_text = _rules(root / "judge.json", [(r"GOLD:bad", bad), (r"GOLD:good", good), (r"不知道|好的。\s*$", bad)],
                        good)
    grm = _rules(root / "grm.json", [(r"不知道", "差")], "好")
    recovery_model = _rules(root / "recovery.json", [(r"上海", RECOVERIES[0]), (r"代码", RECOVERIES[1])],
                            RECOVERIES[2])
    paths: dict[str, Path] = {}
    # The pointwise judge's own Task 1 run on labelled replies: it corrects the Task 2 run's Good% (--calibration).
    paths["t1cal"] = _run(root, "t1-judge-calibration", "--task", "judge", "--data", judge, "--model", judge_text,
                          "--lang", "zh")
    paths |= {
        "t1demo": _run(root, "t1-demo", "--task", "judge", "--data", "demo", "--model", "scripted:always-bad",
                       "--limit", "40"),
        "t1": _run(root, "t1-oracle", "--task", "judge", "--data", judge, "--model", "scripted:oracle",
                   "--verdict-from", "logprobs", "--lang", "zh"),
        "t1b": _run(root, "t1-always-good", "--task", "judge", "--data", judge, "--model", "scripted:always-good",
                    "--lang", "zh"),
        "t2a": _run(root, "t2-model-a", "--task", "eval", "--data", evals, "--model", model_a, "--judge",
                    judge_text, "--judge-mode", "pointwise", "--calibration", paths["t1cal"]),
        "t2b": _run(root, "t2-model-b", "--task", "eval", "--data", evals, "--model", model_b, "--judge",
                    judge_text, "--judge-mode", "pointwise"),
        "t3": _run(root, "t3-recovery", "--task", "recovery", "--data", recov, "--model", recovery_model,
                   "--judge", judge_text, "--judge-mode", "pointwise"),
    }
    for key in ("t2a", "t2b"):  # a second, GRM judge beside the primary one: p(good) per reply
        _invoke("run", "--quiet", "--no-cache", "--n-boot", "200", "--out", paths[key], "--task", "eval",
                "--data", evals, "--model", model_a if key == "t2a" else model_b, "--judge", grm,
                "--judge-mode", "grm", "--judge-lang", "zh")
    _invoke("sim", "run", "--personas", "demo", "--model", "scripted:always-good", "--simulator", "scripted:user",
            "--out", root / "runs" / "sim-demo", "--quiet", "--n-boot", "50", "--no-cache")
    paths["sim"] = root / "runs" / "sim-demo"
    logs = root / "logs"
    logs.mkdir()
    write_log_zh(logs / "日志.jsonl")
    paths["mine"] = mine(logs, root / "mined")
    _exported(paths["mine"])
    paths["pointwise"] = Study.create(root / "study-pointwise", str(paths["t1"]), n=8, annotators=3).dir
    paths["pairwise"] = Study.create(root / "study-pairwise", [str(paths["t2a"]), str(paths["t2b"])], n=6,
                                     annotators=2, mode="pairwise").dir
    return paths

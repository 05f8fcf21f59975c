"""Chinese run directories and a Chinese mining output for the web tests (the browser tests' layout, sort,
verbatim-text and screenshot checks), written through the project's own writers: a 200-sample Task 1 run and a
second model on the same cases (compare), a Task 3 run with Chinese complaints and recoveries (its summary's
recovery strategies), a `mine run --no-llm` output of a Chinese log with exported cases of Tasks 1 and 3, and
a study. Every text was written for these tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from web_support import mine

from uxbench.data.schema import CaseLabels, JudgeCase, Message, RecoveryCase
from uxbench.orchestrate.summary import run_summary
from uxbench.runs.records import SampleRecord, ScoreRecord
from uxbench.runs.store import RunStore
from uxbench.tasks.base import SummaryOptions
from uxbench.tasks.registry import create_task

N_JUDGE = 200
LONGEST = 150
"""The case with the longest conversation (on page 4 of 50 in data order)."""
SCENARIOS = ("工作效率", "信息与知识查询", "情感支持", "编程与技术", "创意写作")
DIMENSIONS = ("准确回答", "回复冗长", "语气生硬")
DIFFICULTIES = ("easy", "medium", "hard")
CODE_QUERY = ("帮我看看这段代码为什么报错：\nimport os\n# 读取配置文件\npath = os.path.join('conf', 'app.ini')\n"
              "    print(open(path).read())\n\n报错是 IndentationError。")
"""A user turn with single newlines, indentation and a `# comment` line (shown verbatim, never as a heading)."""
QUERIES = ("明天北京的天气怎么样？适合出门跑步吗？", "帮我写一封请假邮件，语气正式一点，请三天假。",
           "我最近压力很大，晚上总是睡不着，有什么办法吗？", "Python 里怎么把列表去重并且保持原来的顺序？",
           "给我推荐三本关于时间管理的书，并说明理由。", "用一句话解释什么是通货膨胀。")
REPLIES = ("**建议**：\n1. 早点休息，睡前一小时不看手机\n2. 下午以后少喝咖啡\n3. 可以试试写日记，把烦恼写下来",
           "可以用 `dict.fromkeys`：\n\n```python\nlist(dict.fromkeys(items))\n```\n它会保留第一次出现的顺序。",
           "明天北京晴，最高气温 18 度，适合早上跑步，注意补水。", "好的。")
COMPLAINTS = ("不对，我问的是上海，不是北京。", "你根本没看我的代码，报错还在。", "太长了，我只要一句话的答案！",
              "这不是我要的格式，我要的是表格。")
RECOVERIES = ("抱歉，刚才理解错了。上海明天多云，最高 21 度。",
              "您说得对，问题在第四行的缩进：把 print 前面的空格删掉即可。",
              "通货膨胀就是物价普遍持续上涨、钱变得不值钱。",
              "好的，下面用表格重新整理：\n\n| 书名 | 理由 |\n|---|---|\n| 《搞定》 | 流程清晰 |")


def _history(i: int) -> list[Message]:
    pairs = 12 if i == LONGEST else 1 + i % 5
    out: list[Message] = []
    for k in range(pairs - 1):
        out.append(Message(role="user", content=f"第 {k + 1} 个问题：{QUERIES[(i + k) % len(QUERIES)]}"))
        out.append(Message(role="assistant", content=REPLIES[(i + k) % len(REPLIES)]))
    return out


def judge_cases_zh(n: int = N_JUDGE) -> list[JudgeCase]:
    cases = []
    for i in range(n):
        query = CODE_QUERY if i == 4 else QUERIES[i % len(QUERIES)] + (f"（第 {i} 号）" if i % 7 == 0 else "")
        cases.append(JudgeCase(id=f"zh{i:03d}", query=query, response=REPLIES[i % len(REPLIES)],
                               label="good" if i % 2 == 0 else "bad", history=_history(i),  # type: ignore[arg-type]
                               labels=CaseLabels(scenario=SCENARIOS[i % 5], difficulty=DIFFICULTIES[i % 3])))
    return cases


def write_judge_run_zh(path: Path, model: str, wrong_every: int) -> Path:
    """A Task 1 run over `judge_cases_zh()` whose model (the judge) writes Chinese verdicts: 判断：好 / 判断：差."""
    task = create_task("judge", {})
    store = RunStore(path)
    selected = []
    for i, case in enumerate(judge_cases_zh()):
        wrong = i % wrong_every == 0
        pred = ("bad" if case.label == "good" else "good") if wrong else case.label
        sid = f"{path.name}-{i:03d}"
        selected.append(sid)
        verdict = ("理由：回复切题。\n判断：好" if pred == "good" else "理由：回复没有回答问题。\n判断：差")
        store.put(SampleRecord(sample_id=sid, case_id=case.id, index=i, status="ok", gold=case.label,
                               prediction=pred, raw_output=verdict,
                               parse_note="final line", score=0.8 if pred == "good" else 0.2,
                               strata={"scenario": case.labels.scenario, "dimension": DIMENSIONS[i % 3],
                                       "difficulty": case.labels.difficulty, "n_turns": case.n_turns}),
                  case.__pydantic_serializer__.to_json(case))
    store.write_selection(selected)
    manifest: dict[str, Any] = {"run_id": path.name, "task": "judge", "task_config": task.config(),
                                "model": {"spec": model, "args": {}},
                                "data": {"description": "中文测试用例", "fingerprint": "fp-zh", "demo": False}}
    store.write_manifest(manifest)
    store.write_summary(run_summary(store, task, manifest, SummaryOptions(n_boot=200), selected=selected))
    store.close()
    return path


def write_recovery_run_zh(path: Path, model: str, n: int = 24) -> Path:
    """A Task 3 run: Chinese complaints, the model's recoveries, one judge's verdicts."""
    task = create_task("recovery", {})
    store = RunStore(path)
    selected = []
    judge_key = "pointwise-openai-judge-zh-0000"
    for i in range(n):
        case = RecoveryCase(id=f"r{i:02d}", history=[Message(role="user", content=QUERIES[i % len(QUERIES)])],
                            failed_response=REPLIES[i % len(REPLIES)], complaint=COMPLAINTS[i % len(COMPLAINTS)],
                            labels=CaseLabels(scenario=SCENARIOS[i % 5]))
        sid = f"{path.name}-{i:02d}"
        selected.append(sid)
        store.put(SampleRecord(sample_id=sid, case_id=case.id, index=i, status="ok",
                               raw_output=RECOVERIES[i % len(RECOVERIES)],
                               strata={"scenario": case.labels.scenario, "history_messages": 1}),
                  case.__pydantic_serializer__.to_json(case))
        store.put_score(ScoreRecord(sample_id=sid, judge=judge_key, case_id=case.id, index=i, status="ok",
                                    label="good" if i % 3 else "bad", score_status="text", raw_output="判断：好"))
    store.write_selection(selected)
    manifest: dict[str, Any] = {
        "run_id": path.name, "task": "recovery", "task_config": task.config(), "model": {"spec": model, "args": {}},
        "judges": {judge_key: {"spec": "openai:judge-zh", "args": {}, "mode": "pointwise", "settings": {},
                               "template_hashes": {}}},
        "primary_judge": judge_key,
        "data": {"description": "中文投诉用例", "fingerprint": "fp-zh-recovery", "demo": False}}
    store.write_manifest(manifest)
    store.write_summary(run_summary(store, task, manifest, SummaryOptions(n_boot=200), selected=selected))
    store.close()
    return path


def write_log_zh(path: Path) -> Path:
    rows = []
    for k in range(6):
        turns = [("user", f"帮我查一下从北京到上海的高铁时刻表（{k}）", "2024-05-01T09:00:00Z"),
                 ("assistant", "北京南站每天有很多班次，建议您在 12306 上查询最新时刻。" * 2, "2024-05-01T09:00:10Z"),
                 ("user", "不对，我要的是具体的车次和时间，你根本没回答我的问题。", "2024-05-01T09:01:00Z"),
                 ("assistant", "抱歉。G1 次 9:00 发车，13:28 到达上海虹桥；G3 次 10:00 发车。", "2024-05-01T09:01:10Z"),
                 ("user", "好的，谢谢！", f"2024-05-0{1 + k % 3}T09:02:30Z")]
        for i, (role, content, at) in enumerate(turns):
            row: dict[str, Any] = {"conversation_id": f"会话{k}", "turn_index": i, "role": role, "content": content,
                                   "created_at": at}
            if i == 1:
                row["feedback"] = "dislike"
            rows.append(row)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _exported(mined: Path) -> None:
    cases = mined / "cases"
    cases.mkdir()
    judge = [{"id": f"mined_judge_{i:04d}", "task": "judge", "history": [{"role": "user", "content": "你好"},
                                                                          {"role": "assistant", "content": "你好！"}],
              "query": QUERIES[i % len(QUERIES)], "response": REPLIES[i % len(REPLIES)],
              "label": "bad" if i % 2 else "good", "scenario": SCENARIOS[i % 5]} for i in range(1, 9)]
    recovery = [{"id": f"mined_recovery_{i:04d}", "task": "recovery",
                 "history": [{"role": "user", "content": QUERIES[i % len(QUERIES)]}],
                 "failed_response": REPLIES[i % len(REPLIES)], "complaint": COMPLAINTS[i % len(COMPLAINTS)],
                 "scenario": SCENARIOS[i % 5]} for i in range(1, 5)]
    for name, rows in (("task1_judge.jsonl", judge), ("task3_recovery.jsonl", recovery)):
        (cases / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def build_zh(root: Path) -> dict[str, Path]:
    """Every Chinese directory the web tests serve, under `root`."""
    paths = {"judge": write_judge_run_zh(root / "runs" / "t1-中文-a", "openai:gpt-4o", wrong_every=4),
             "judge2": write_judge_run_zh(root / "runs" / "t1-中文-b", "openai:gpt-4o-mini", wrong_every=3),
             "recovery": write_recovery_run_zh(root / "runs" / "t3-中文", "openai:gpt-4o")}
    logs = root / "logs"
    logs.mkdir()
    write_log_zh(logs / "日志.jsonl")
    paths["mine"] = mine(logs, root / "mined")
    _exported(paths["mine"])
    return paths

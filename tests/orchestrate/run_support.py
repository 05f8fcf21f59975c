"""Helpers for run-level tests: a judge data file whose verdicts the loopback server scripts.

(Not in conftest.py: several test folders have a conftest, and `from conftest import ...` would find whichever
was imported first.)"""

from __future__ import annotations

import json
from pathlib import Path


def judge_row(cid: str, gold: str, say: str, extra: str = "", scenario: str = "信息与知识查询") -> dict[str, object]:
    """A Task-1 row in the official field layout; the reply carries the marker that scripts the verdict."""
    return {
        "cid": cid,
        "ground_truth": 1 if gold == "good" else -1,
        "source_query": {"turn_index": 2, "message": f"question {cid}"},
        "selected_history": [
            {"turn_index": 0, "role": "user", "message": "hello"},
            {"turn_index": 1, "role": "assistant", "message": "hi, how can I help?"},
        ],
        "agent_response_full": f"answer for {cid} [[SAY:{say}]] {extra}".strip(),
        "scenario": scenario,
        "failure_dimension" if gold == "bad" else "success_dimension": "事实性错误" if gold == "bad" else "准确回答",
    }


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path

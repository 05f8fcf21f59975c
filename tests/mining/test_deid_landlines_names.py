"""Regression: landlines and personal names that real logs hold are removed before anything is written: each
seeded value is gone from every output of `mine run`, and only the value is replaced (the cue stays)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uxbench.mining.deid import SALT_ENV, redact_text, scan_for_values
from uxbench.mining.pipeline import MineConfig, run_pipeline

SEEDED = [  # (text a user wrote, the value that must go, what must stay)
    ("座机020-8765-4321，工作日都在", "020-8765-4321", "座机"),
    ("办公室电话 0755 2345 6789 或者", "0755 2345 6789", "办公室电话"),
    ("打02087654321找前台", "02087654321", "找前台"),
    ("联系电话(010)62345678转分机", "(010)62345678", "联系电话"),
    ("总部 +86 21 6234 5678 上班时间", "+86 21 6234 5678", "总部"),
    ("或者 0086-10-62345678", "0086-10-62345678", "或者"),
    ("Call our London office on 020 7946 0958 today.", "020 7946 0958", "London office"),
    ("Berlin: (030) 2345678, Munich 089/2345678", "2345678", "Berlin"),
    ("Paris 01 42 68 53 00 ou Tokyo 03-3456-7890", "01 42 68 53 00", "Paris"),
    ("Sydney (02) 9876 5432.", "9876 5432", "Sydney"),
    ("你好，我叫张伟，今年二十八岁", "张伟", "我叫"),
    ("我的名字是欧阳娜娜。", "欧阳娜娜", "我的名字是"),
    ("王女士您好，关于您的订单", "王", "女士您好"),
    ("请转告李建国先生", "李建国", "先生"),
    ("谢谢！\n——陈晓明", "陈晓明", "谢谢"),
    ("收货人：赵丽颖 电话随后给", "赵丽颖", "收货人"),
    ("Hi, my name is Bartholomew Whitcombe and I need help.", "Bartholomew Whitcombe", "my name is"),
    ("Dear Ms. Pemberton, thank you for the reply.", "Pemberton", "Dear Ms."),
    ("Please forward this to Dr. Fairweather.", "Fairweather", "Dr."),
    ("Dear Rosalind,\nI hope this helps.", "Rosalind", "Dear"),
    ("That is all.\n\nBest regards,\nClementine Ashdown", "Clementine Ashdown", "Best regards"),
    ("Name: Percival Thistlewood\nAge: 40", "Percival Thistlewood", "Name:"),
]


@pytest.mark.parametrize(("text", "value", "kept"), SEEDED)
def test_the_rules_replace_the_value_and_keep_the_cue(text: str, value: str, kept: str) -> None:
    cleaned = redact_text(text)
    assert value not in cleaned and kept in cleaned, cleaned


@pytest.mark.parametrize("text", [
    "我是学生，想问一个问题", "我和老师讨论过了", "version 2.0.1 released 2023-10-15", "Dear Sir, I am writing",
    "Best regards,\n[Your Name]", "the array [0, 1, 2, 3]", "call 10 times a day", "我叫外卖了",
    "stage:\n  - name: Build and Deploy\n    type: Git", "class Person {\n  var name: String\n}",
    "Don't Miss Out on Cryptocurrency",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text) == text


def test_mining_removes_every_seeded_value_from_every_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "landline-names-salt-0123")
    rows = []
    for i, (text, _, _) in enumerate(SEEDED):
        rows += [{"conversation_id": f"c{i}", "turn_index": 0, "role": "user", "content": text},
                 {"conversation_id": f"c{i}", "turn_index": 1, "role": "assistant", "content": "Sure, noted."},
                 {"conversation_id": f"c{i}", "turn_index": 2, "role": "user", "content": f"again: {text}"}]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    run_pipeline(MineConfig(inputs=(str(log),), out=str(out), llm=False, workers=1))
    values = [value for _, value, _ in SEEDED]
    assert scan_for_values([out], values) == []
    changes = (out / "deid_changes.jsonl").read_text("utf-8")
    assert '"NAME"' in changes and '"PHONE"' in changes

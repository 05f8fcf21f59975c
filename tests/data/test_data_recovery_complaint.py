"""A Task 3 row without a complaint (absent, empty, only whitespace) stops with file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uxbench.data.loaders import load_cases
from uxbench.errors import DataError

GOOD = {"cid": "ok", "history": [{"role": "user", "content": "hi"}], "failed_response": "no", "user_complaint": "wrong"}


@pytest.mark.parametrize("complaint", [None, "", "   \n\t", "\u3000"])
def test_a_recovery_row_without_a_complaint_names_file_line_and_field(tmp_path: Path, complaint: str | None) -> None:
    bad = {k: v for k, v in GOOD.items() if k != "user_complaint"} | {"cid": "bad"}
    if complaint is not None:
        bad["user_complaint"] = complaint
    path = tmp_path / "task3.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (GOOD, bad)) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        list(load_cases(path, task="recovery"))
    err = info.value
    assert (err.source, err.line, err.field) == (str(path), 2, "user_complaint")
    # Regression: whitespace used to be reported as "has no reply text", empty as merely "is missing".
    assert "complaint" in err.reason and "reply text" not in err.reason
    assert f"{path}, line 2, field 'user_complaint'" in str(err)


def test_the_complaint_alias_is_named_when_it_is_the_empty_one(tmp_path: Path) -> None:
    row = {k: v for k, v in GOOD.items() if k != "user_complaint"} | {"complaint": "  "}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        list(load_cases(path, task="recovery"))
    assert (info.value.line, info.value.field) == (1, "complaint")

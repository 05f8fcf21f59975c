"""A mining output's exported cases in the viewer: listed with their conversation, curated by case id, and the
exclusion honoured by `uxbench run --data OUT/cases/...` (end to end, through the real app and the real run)."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

from extra_skip import require_extra

require_extra("web")

from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402
from web_support import LOOPBACK  # noqa: E402

from uxbench.cli.main import app as cli  # noqa: E402
from uxbench.runs.store import RunStore  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import build_catalog  # noqa: E402


def _row(i: int, gold: str, text: str) -> dict[str, object]:
    return {"cid": f"mined_judge_{i:04d}", "ground_truth": 1 if gold == "good" else -1,
            "source_query": {"turn_index": 2, "message": text},
            "selected_history": [{"turn_index": 0, "role": "user", "message": "hello"},
                                 {"turn_index": 1, "role": "assistant", "message": "hi"}],
            "agent_response_full": f"answer {i}", "scenario": "信息与知识查询"}


class _Attrs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.bad: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if any(name.startswith("on") for name, _ in attrs) or (tag == "script" and dict(attrs).get("src") !=
                                                               "/static/app.js"):
            self.bad.append(tag)


def test_exported_cases_are_listed_curated_and_left_out_of_later_runs(served: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    mined = tmp_path / "mined"
    shutil.copytree(served["mine"], mined)
    (mined / "cases").mkdir()
    rows = [_row(i, "bad" if i % 2 else "good", f"question {i}") for i in range(1, 25)]
    rows[2] = _row(3, "bad", '<script>alert("xss-case")</script> question 3')
    data = mined / "cases" / "task1_judge.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    catalog = build_catalog([str(mined)])
    (mine_id,) = catalog.mines
    client = TestClient(create_app(catalog, index_dir=tmp_path / "idx"), base_url=LOOPBACK)
    assert f'href="/mines/{mine_id}/cases"' in client.get(f"/mines/{mine_id}").text
    first = client.get(f"/mines/{mine_id}/cases").text
    ids = re.findall(r'<div class="card" data-case="([^"]+)">', first)
    assert ids == [f"mined_judge_{i:04d}" for i in range(1, 21)] and "next ›" in first
    assert re.findall(r'data-case="([^"]+)"', client.get(f"/mines/{mine_id}/cases?page=2").text) == [
        f"mined_judge_{i:04d}" for i in range(21, 25)]
    parser = _Attrs()
    parser.feed(first)
    assert not parser.bad and "&lt;script&gt;alert(" in first
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', first)
    assert csrf
    done = client.post("/curate", data={"csrf": csrf.group(1), "target": "mine", "target_id": mine_id,
                                        "case_id": "mined_judge_0003", "action": "exclude",
                                        "reason": "the label is doubtful", "who": "pm",
                                        "back": f"/mines/{mine_id}/cases"}, follow_redirects=False)
    assert done.status_code == 303
    assert "exclude: the label is doubtful" in client.get(f"/mines/{mine_id}/cases").text
    result = CliRunner().invoke(cli, ["run", "--model", "scripted:always-good", "--quiet", "--data", str(data),
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    with RunStore(tmp_path / "run") as store:
        ids_run = {r.case_id for r in store.iter_records()}
    assert len(ids_run) == 23 and "mined_judge_0003" not in ids_run
    assert client.get(f"/mines/{mine_id}/cases?page=x").status_code == 400
    shutil.rmtree(mined / "cases")
    assert client.get(f"/mines/{mine_id}/cases").status_code == 404


def test_exported_cases_show_their_total_filter_by_task_and_label_and_end(served: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    mined = tmp_path / "mined"
    shutil.copytree(served["mine"], mined)
    (mined / "cases").mkdir()
    judge = [_row(i, "bad" if i % 3 else "good", f"question {i}") for i in range(1, 23)]
    recovery = [{"id": f"mined_recovery_{i:04d}", "task": "recovery", "history": [{"role": "user", "content": "hi"}],
                 "failed_response": f"the failed reply {i}", "complaint": f"that is wrong {i}"} for i in range(1, 4)]
    for name, rows in (("task1_judge.jsonl", judge), ("task3_recovery.jsonl", recovery)):
        (mined / "cases" / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    catalog = build_catalog([str(mined)])
    (mine_id,) = catalog.mines
    client = TestClient(create_app(catalog, index_dir=tmp_path / "idx"), base_url=LOOPBACK)
    base = f"/mines/{mine_id}/cases"
    first = client.get(base).text
    assert "<b>25</b> cases match of 25 exported (judge 22, recovery 3) · page 1 of 2" in first
    task3 = client.get(base, params={"task": "recovery"}).text
    assert re.findall(r'data-case="([^"]+)"', task3) == [f"mined_recovery_{i:04d}" for i in range(1, 4)]
    assert "the failed reply 1" in task3 and "that is wrong 1" in task3  # where they belong: reply, complaint
    assert "failed reply" in task3 and "complaint" in task3 and "generated" not in task3 and "(no text)" not in task3
    bad = client.get(base, params={"task": "judge", "label": "bad"}).text
    assert len(re.findall(r'data-case="', bad)) == sum(1 for i in range(1, 23) if i % 3)
    assert client.get(base, params={"page": 3}).status_code == 404  # past the end
    assert client.get(base, params={"page": 0}).status_code == 404
    assert client.get(base, params={"task": "nope"}).status_code == 400

"""Training data: splits by conversation and by date, near-duplicates of named test sets left out, the
conversation of a case, and labels read from a real `uxbench mine run` output."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import judge_data
import pytest

from uxbench.data.schema import JudgeCase, Message
from uxbench.errors import DataError
from uxbench.judge_train.data import class_weights, conversation_of, load_rows
from uxbench.judge_train.split import exclude_near_duplicates, split_rows


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return judge_data.write(tmp_path / "d.jsonl", judge_data.rows(60, seed=2))


def test_no_conversation_is_on_both_sides(data: Path) -> None:
    rows, _ = load_rows([str(data)])
    assert len({r.conversation for r in rows}) == 60 < len(rows)  # several cases per conversation
    for seed in range(5):
        split = split_rows(rows, test_fraction=0.25, seed=seed)
        train, test = {r.conversation for r in split.train}, {r.conversation for r in split.test}
        assert train and test and not train & test
        assert len(split.train) + len(split.test) == len(rows)
        assert 0.2 <= len(split.test) / len(rows) <= 0.35


def test_temporal_split_honours_the_date(data: Path) -> None:
    rows, _ = load_rows([str(data)])
    date = judge_data.START + timedelta(hours=40, minutes=3)  # inside conversation 40's second turn
    split = split_rows(rows, split_date=date)
    assert split.train and split.test
    assert all(r.timestamp is not None and r.timestamp < date for r in split.train)
    assert all(r.timestamp is not None and r.timestamp >= date for r in split.test)
    assert not {r.conversation for r in split.train} & {r.conversation for r in split.test}
    assert split.info["left_out_straddling_rows"] == 1  # conversation 40's turn before the date
    assert "conv40" in {r.conversation for r in split.test}


def test_temporal_split_needs_a_time_on_every_row(tmp_path: Path) -> None:
    rows = judge_data.rows(30)
    for r in rows[:3]:
        del r["create_time"]
        r["selected_history"] = []
    loaded, _ = load_rows([str(judge_data.write(tmp_path / "d.jsonl", rows))])
    with pytest.raises(DataError, match=r"3 of \d+ rows have none"):
        split_rows(loaded, split_date=datetime(2024, 5, 2, tzinfo=timezone.utc))


def test_exclude_removes_near_duplicates_of_a_named_test_set(data: Path, tmp_path: Path) -> None:
    rows, _ = load_rows([str(data)])
    target = rows[7]
    near = json.loads(data.read_text(encoding="utf-8").splitlines()[7])
    near["cid"] = "other#0"
    near["agent_response_full"] = near["agent_response_full"] + "！"  # one character more
    unrelated = {"cid": "x#0", "ground_truth": 1, "source_query": {"message": "完全无关的问题，关于天文望远镜的选购"},
                 "agent_response_full": "建议先确定预算和观测目标，再比较口径与支架。"}
    test_set, _ = load_rows([str(judge_data.write(tmp_path / "test.jsonl", [near, unrelated]))])
    kept, n = exclude_near_duplicates(rows, test_set)
    assert n >= 1 and len(kept) == len(rows) - n
    assert all((r.query, r.response) != (target.query, target.response) for r in kept)
    assert all(r in kept for r in rows if r.query != target.query)  # other questions are no duplicates


def test_conversation_of_a_case() -> None:
    base = {"query": "q", "response": "r", "label": "good"}
    assert conversation_of(JudgeCase(id="a", meta={"conversation_id": "c9"}, **base)) == "c9"  # type: ignore[arg-type]
    assert conversation_of(JudgeCase(id="conv3#2", **base)) == "conv3"  # type: ignore[arg-type]
    one = JudgeCase(id="x1", history=[Message(role="user", content="你好，帮我看看")], **base)  # type: ignore[arg-type]
    two = JudgeCase(id="x2", history=[Message(role="user", content="你好，帮我看看"),  # type: ignore[arg-type]
                                      Message(role="assistant", content="好")], **base)
    assert conversation_of(one) == conversation_of(two) != conversation_of(JudgeCase(id="x3", **base))  # type: ignore[arg-type]


def test_class_weights_balance_the_classes(data: Path) -> None:
    rows, _ = load_rows([str(data)])
    w = class_weights(rows)
    n_good = sum(1 for r in rows if r.label == "good")
    assert w["good"] * n_good == pytest.approx(w["bad"] * (len(rows) - n_good)) == pytest.approx(len(rows) / 2)


def _turn(cid: str, i: int, role: str, content: str, t: datetime, **extra: object) -> dict[str, object]:
    return {"conversation_id": cid, "turn_index": i, "role": role, "content": content,
            "created_at": (t + timedelta(seconds=30 * i)).isoformat(), **extra}


def test_labels_from_a_mining_output_keep_their_source(tmp_path: Path) -> None:
    from uxbench.mining.pipeline import MineConfig, run_pipeline

    t = datetime(2024, 5, 1, 9, tzinfo=timezone.utc)
    log = [
        _turn("c1", 0, "user", "怎么把IP改成静态的？", t),
        _turn("c1", 1, "assistant", "打开设置，进入网络页面，把IP设置改为手动，再填写地址和网关。", t,
              feedback="dislike"),
        _turn("c2", 0, "user", "How do I sort a list in Python?", t),
        _turn("c2", 1, "assistant", "Use sorted(my_list) for a new list, or my_list.sort() in place.", t,
              feedback="like"),
        _turn("c3", 0, "user", "红烧肉要炖多久？", t),
        _turn("c3", 1, "assistant", "红烧肉历史悠久，相传与苏东坡有渊源，各地做法不同，选材也很讲究。", t),
        _turn("c3", 2, "user", "不对，你没回答我的问题，我问的是要炖多久", t),
        _turn("c3", 3, "assistant", "小火炖大约一个小时。", t),
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in log), encoding="utf-8")
    out = tmp_path / "mined"
    run_pipeline(MineConfig(inputs=(str(path),), out=str(out), llm=False))
    rows, report = load_rows([str(out)])
    by_id = {r.id: r for r in rows}
    assert by_id["c1#1"].label == "bad" and by_id["c1#1"].label_source == "thumbs_down"
    assert by_id["c2#1"].label == "good" and by_id["c2#1"].label_source == "thumbs_up"
    assert by_id["c2#1"].query.startswith("How do I sort") and by_id["c2#1"].response.startswith("Use sorted")
    complained = by_id["c3#1"]
    assert complained.label == "bad" and complained.label_source.startswith("signals:")
    assert "complaint" in complained.label_source
    assert complained.conversation == "c3" and complained.timestamp is not None
    assert sum(report.rows_by_source.values()) == len(rows)

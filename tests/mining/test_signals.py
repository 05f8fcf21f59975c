"""The signal stage on hand-written sessions: every signal, the verdicts, recovery chains and the table."""

from __future__ import annotations

import csv
import pickle
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from uxbench.errors import ConfigError
from uxbench.mining.signals import (
    SIGNAL_NAMES,
    SignalConfig,
    TurnSignals,
    compute_signals,
    recovery_chains,
    signals_batch,
    signals_table,
)
from uxbench.mining.types import Session, Turn

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
LONG_ZH = (
    "首先打开系统设置，进入网络页面，找到当前连接的无线网络，点击齿轮图标，把IP设置改为静态，再填写地址、网关和DNS。"
    * 4
)
LONG_EN = (
    "Open the settings, go to the network page, choose your wireless network, open the advanced options and "
    "switch the IP setting from automatic to static, then fill in the address, gateway and DNS servers. "
) * 3


def session(
    *msgs: tuple[Any, ...], cid: str = "c1", times: bool = True, regenerated: list[Turn] | None = None
) -> Session:
    """msgs: (role, content, seconds_after_start, extra turn fields...)."""
    turns = []
    for i, (role, content, sec, *extra) in enumerate(msgs):
        kw = extra[0] if extra else {}
        turns.append(
            Turn(
                conversation_id=cid,
                turn_index=i,
                role=role,
                content=content,
                created_at=T0 + timedelta(seconds=sec) if times else None,
                **kw,
            )
        )
    return Session(conversation_id=cid, turns=turns, regenerated=regenerated or [], has_timestamps=times)


def only(result: list[TurnSignals], turn_index: int) -> TurnSignals:
    return next(ts for ts in result if ts.turn_index == turn_index)


def test_skim_fires_on_a_fast_answer_to_a_long_reply_and_not_on_a_slow_one() -> None:
    fast = compute_signals(
        session(("user", "怎么设置静态IP", 0), ("assistant", LONG_ZH, 5), ("user", "好", 12))
    )[0]
    slow = compute_signals(
        session(("user", "怎么设置静态IP", 0), ("assistant", LONG_ZH, 5), ("user", "好", 200))
    )[0]
    assert fast.skim.fired is True and fast.gap_s == 7
    assert fast.seconds_per_unit is not None and fast.seconds_per_unit < 0.15
    assert "reading units" in (fast.skim.evidence or "")
    assert slow.skim.fired is False


def test_skim_counts_english_words_not_letters() -> None:
    # ~100 English words read in 25 s is about 240 words a minute: a normal read, not a skim.
    ts = compute_signals(
        session(("user", "how do I set a static IP", 0), ("assistant", LONG_EN, 5), ("user", "ok", 30))
    )[0]
    assert ts.skim.fired is False
    quick = compute_signals(
        session(("user", "how do I set a static IP", 0), ("assistant", LONG_EN, 5), ("user", "ok", 9))
    )[0]
    assert quick.skim.fired is True


def test_skim_is_not_computed_without_timestamps_and_short_replies_cannot_be_skimmed() -> None:
    no_time = compute_signals(
        session(("user", "q", 0), ("assistant", LONG_ZH, 0), ("user", "好", 0), times=False)
    )[0]
    assert no_time.skim.fired is None and "no timestamps" in (no_time.skim.evidence or "")
    short = compute_signals(
        session(("user", "几点了", 0), ("assistant", "现在是上午九点。", 1), ("user", "好", 2))
    )[0]
    assert short.skim.fired is False


def test_regeneration_is_its_own_signal_and_never_a_repeat() -> None:
    old = Turn(
        conversation_id="c1", turn_index=1, role="assistant", content="第一次的回答", regeneration_index=0
    )
    s = session(
        ("user", "北京到上海的高铁要多久", 0),
        ("assistant", "最快约4小时18分钟。", 30, {"regeneration_index": 1}),
        ("user", "好的谢谢", 60),
        regenerated=[old],
    )
    ts = compute_signals(s)[0]
    assert ts.regenerate.fired is True and "1 earlier reply replaced" in (ts.regenerate.evidence or "")
    assert ts.repeat.fired is False and ts.rephrase.fired is False
    assert ts.dissatisfied and ts.dissatisfied_by == ["regenerate"]


def test_repeat_rephrase_and_the_continuation_guard() -> None:
    reply = "JSON是一种轻量级的数据交换格式，广泛用于Web开发。"
    rep = compute_signals(
        session(
            ("user", "python里怎么读取json文件", 0),
            ("assistant", reply, 3),
            ("user", "python怎么读取json文件？？", 20),
        )
    )[0]
    assert rep.repeat.fired is True and rep.similarity is not None and rep.similarity >= 0.85
    reph = compute_signals(
        session(
            ("user", "how do I reverse a list in python", 0),
            ("assistant", "Lists in Python are ordered collections.", 3),
            ("user", "I mean what's the code to reverse a python list", 20),
        )
    )[0]
    assert reph.rephrase.fired is True and reph.repeat.fired is False
    for prev, nxt in [
        ("帮我解释一下第一章的内容", "帮我解释一下第二章的内容"),
        ("convert this row to JSON: name=Ann, age=31", "convert this row to JSON: name=Bob, age=45"),
        ("write a function to parse dates in Python", "now the same for JavaScript"),
        ("写一个关于小猫的故事", "继续"),
        ("给我出一道数学题", "再来一个"),
    ]:
        ts = compute_signals(
            session(("user", prev, 0), ("assistant", "一段回复 some reply text", 3), ("user", nxt, 60))
        )[0]
        assert ts.continuation.fired is True, nxt
        assert not ts.repeat.fired and not ts.rephrase.fired and not ts.dissatisfied, nxt


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("不对，应该是2.2磅", True),
        ("答非所问", True),
        ("你没理解我的意思", True),
        ("that's wrong", True),
        ("this doesn't work", True),
        ("useless", True),
        ("不错，谢谢", False),
        ("没错", False),
        ("错误码404是什么意思", False),
        ("not bad", False),
        ("no problem", False),
        ("nothing wrong with it", False),
        ("you're right", False),
    ],
)
def test_complaint_fires_on_complaints_only(text: str, complaint: bool) -> None:
    ts = compute_signals(
        session(("user", "问题 question", 0), ("assistant", "回复 reply", 2), ("user", text, 30))
    )[0]
    assert ts.complaint.fired is complaint
    assert ts.dissatisfied is complaint


def test_dismiss_is_a_give_up_and_thanks_is_positive() -> None:
    gave_up = compute_signals(
        session(
            ("user", "帮我写一份年终总结", 0), ("assistant", "请问您做什么工作？", 2), ("user", "算了", 20)
        )
    )[0]
    assert gave_up.dismiss.fired is True and gave_up.dissatisfied
    for thanks in ("好的谢谢", "ok thanks", "谢谢", "got it, thanks"):
        ts = compute_signals(
            session(("user", "怎么查IP", 0), ("assistant", "输入 ipconfig 即可。", 2), ("user", thanks, 20))
        )[0]
        assert ts.dismiss.fired is False and ts.praise.fired is True
        assert ts.satisfied and not ts.dissatisfied


def test_topic_change_and_conversation_end_are_separate_weak_signals() -> None:
    s = session(
        ("user", "怎么做番茄炒蛋", 0),
        ("assistant", "先炒蛋盛出，再炒番茄，倒回鸡蛋翻炒。", 5),
        ("user", "帮我写一封辞职信", 300),
        ("assistant", "尊敬的领导：……", 305),
    )
    first, last = compute_signals(s)
    assert first.topic_change.fired is True and first.conversation_end.fired is False
    assert not first.dissatisfied  # weak alone
    assert last.conversation_end.fired is True and last.complaint.fired is None  # nothing to compute
    assert not last.dissatisfied


def test_two_weak_signals_make_a_dissatisfied_turn() -> None:
    s = session(("user", "怎么设置静态IP", 0), ("assistant", LONG_ZH, 5), ("user", "推荐一部好看的韩剧", 8))
    ts = compute_signals(s)[0]
    assert ts.skim.fired and ts.topic_change.fired
    assert ts.dissatisfied and set(ts.dissatisfied_by) == {"skim", "topic_change"}
    lenient = compute_signals(s, SignalConfig(weak_needed=3))[0]
    assert not lenient.dissatisfied


def test_explicit_feedback_copy_and_builds_on() -> None:
    s = session(
        ("user", "Python怎么读取CSV文件", 0),
        ("assistant", "用 pandas.read_csv 即可。", 3, {"feedback": "like", "counters": {"copy": 2}}),
        ("user", "那如果文件是GBK编码的呢", 40),
        ("assistant", "加 encoding='gbk' 参数。", 43, {"feedback": "dislike"}),
    )
    first, second = compute_signals(s)
    assert first.thumbs_up.fired and first.copied.fired and first.copied.evidence == "copy=2"
    assert first.builds_on.fired and first.satisfied
    assert set(first.satisfied_by) == {"thumbs_up", "builds_on", "copied"}
    assert second.thumbs_down.fired and second.dissatisfied


def test_recovery_chains() -> None:
    recovered = session(
        ("user", "1公斤等于多少磅", 0),
        ("assistant", "约1.5磅。", 2),
        ("user", "不对吧", 10),
        ("assistant", "抱歉，约2.2磅。", 12),
        ("user", "好的谢谢", 30),
    )
    chain = compute_signals(recovered)[0].recovery
    assert chain is not None and chain.outcome == "recovered" and chain.recovered_at == 3
    assert chain.turns == [1, 2, 3, 4] and chain.actions == ["failure", "complain", "retry", "satisfied"]

    failed = session(
        ("user", "23乘以47", 0),
        ("assistant", "1071", 2),
        ("user", "错了", 9),
        ("assistant", "1071", 11),
        ("user", "还是不对", 20),
        ("assistant", "1071", 22),
        ("user", "答非所问", 30),
        ("assistant", "1081", 32, {"feedback": "dislike"}),
    )
    result = compute_signals(failed)
    assert result[0].recovery is not None and result[0].recovery.outcome == "failed"
    # the last reply is disliked and nothing follows: that failure ends with the user leaving
    assert [c.outcome for c in recovery_chains(result)] == ["failed", "failed", "failed", "user_gave_up"]

    gave_up = session(
        ("user", "帮我改简历", 0),
        ("assistant", "简历很重要。", 2),
        ("user", "没用", 5),
        ("assistant", "请提供简历内容。", 7),
        ("user", "算了", 9),
    )
    assert compute_signals(gave_up)[0].recovery.outcome == "user_gave_up"

    ended = session(("user", "q", 0), ("assistant", "answer", 2, {"feedback": "dislike"}))
    assert compute_signals(ended)[0].recovery.outcome == "user_gave_up"

    unknown = session(
        ("user", "how many legs does a spider have", 0),
        ("assistant", "six", 2),
        ("user", "wrong", 5),
        ("assistant", "eight, sorry", 7),
    )
    assert compute_signals(unknown)[0].recovery.outcome == "unknown"


def test_table_has_one_row_per_assistant_turn_and_writes_to_parquet_and_csv(tmp_path: Path) -> None:
    sessions = [
        session(
            ("user", "怎么设置静态IP", 0),
            ("assistant", LONG_ZH, 5),
            ("user", "不对", 8),
            ("assistant", "好的", 9),
            cid="a",
        ),
        session(("user", "hi", 0), ("assistant", "hello, how can I help?", 1), cid="b", times=False),
    ]
    rows = signals_table(sessions)
    assert [(r["conversation_id"], r["turn_index"]) for r in rows] == [("a", 1), ("a", 3), ("b", 1)]
    for name in SIGNAL_NAMES:
        assert name in rows[0] and f"{name}_evidence" in rows[0]
    assert rows[0]["complaint"] is True and rows[0]["dissatisfied"] is True
    assert rows[2]["skim"] is None
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, tmp_path / "signals.parquet")
    back = pq.read_table(tmp_path / "signals.parquet").to_pylist()
    assert back == rows
    with open(tmp_path / "signals.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with open(tmp_path / "signals.csv", encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == 3


def test_stage_is_pure_deterministic_and_picklable() -> None:
    s = session(("user", "怎么设置静态IP", 0), ("assistant", LONG_ZH, 5), ("user", "不对", 8))
    cfg = SignalConfig(repeat_threshold=0.9)
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    before = s.model_dump()
    a = signals_batch([s], cfg)
    b = pickle.loads(pickle.dumps(compute_signals))(s, cfg)
    assert [x.model_dump() for x in a] == [x.model_dump() for x in b]
    assert s.model_dump() == before


def test_config_is_validated() -> None:
    with pytest.raises(ConfigError, match="rephrase_threshold"):
        SignalConfig(repeat_threshold=0.5, rephrase_threshold=0.6)
    with pytest.raises(ConfigError, match="both as strong and as weak"):
        SignalConfig(weak_signals=("skim", "complaint"))
    with pytest.raises(ConfigError, match="skim_max_gap_s"):
        SignalConfig.load({"skim_max_gap_s": -1})
    assert SignalConfig.load({"weak_needed": 3}).weak_needed == 3


def test_json_dict_equals_pydantic_dump() -> None:
    """The signal stage writes `json_dict`, not pydantic's dump: they must agree on every field and value."""
    import orjson

    from uxbench.mining.signals.results import RecoveryChain, SignalValue

    chat = session(
        ("user", "23乘以47", 0),
        ("assistant", "1071", 2, {"feedback": "dislike"}),
        ("user", "错了", 9),
        ("assistant", "1081", 11),
        ("user", "thanks, that fixed it. what about 24 x 47?", 20),
        ("assistant", LONG_EN, 22),
        ("user", "Open the settings, go to the network page, choose your wireless network", 23),
        ("assistant", "ok", 25),
    )
    results = compute_signals(chat)
    assert any(ts.recovery is not None for ts in results) and any(ts.dissatisfied_by for ts in results)
    results.append(TurnSignals(
        conversation_id="x", turn_index=3, gap_s=float("inf"), similarity=float("nan"), seconds_per_unit=-0.0,
        praise=SignalValue(fired=None, evidence="é \"quoted\"", score=None), satisfied_by=["praise"],
        recovery=RecoveryChain(outcome="unknown", turns=[3], actions=["failure"], recovered_at=None),
    ))
    for ts in results:
        fast, slow = ts.json_dict(), ts.model_dump(mode="json")
        assert fast.keys() == slow.keys()
        assert orjson.dumps(fast, option=orjson.OPT_SORT_KEYS) == orjson.dumps(slow, option=orjson.OPT_SORT_KEYS)
        assert TurnSignals.model_validate(fast) == ts or ts.similarity != ts.similarity  # nan != nan


def test_json_dict_copies_each_signal_value() -> None:
    """`json_dict` copies each `SignalValue`'s own dict (shared between replies): the three fields, made any way,
    and changing the output changes no model."""
    from uxbench.mining.signals.results import SignalValue

    made_ways = (SignalValue(), SignalValue(fired=True, evidence="x", score=0.9),
                 SignalValue.model_construct(fired=None), SignalValue.model_validate({"evidence": "é"}))
    for value in made_ways:
        ts = TurnSignals(conversation_id="c", turn_index=1, praise=value, complaint=value)
        out = ts.json_dict()
        assert out["praise"] == out["complaint"] == value.model_dump(mode="json")
        assert list(out["praise"]) == ["fired", "evidence", "score"]
        out["praise"]["fired"] = "changed"
        assert value.fired != "changed" and ts.json_dict()["complaint"] == value.model_dump(mode="json")


def test_made_equals_model_construct() -> None:
    """`made` skips `model_construct`'s per-field lookups: the same values, field order, set fields and dumps."""
    from uxbench.mining.signals.results import made

    chat = session(
        ("user", "23乘以47", 0),
        ("assistant", "1071", 2, {"feedback": "dislike"}),
        ("user", "错了", 9),
        ("assistant", "1081", 11),
    )
    for ts in compute_signals(chat):
        fields = {k: v for k, v in ts.__dict__.items() if k != "recovery"}
        fast, slow = made(dict(reversed(fields.items()))), TurnSignals.model_construct(**fields)
        assert list(fast.__dict__.items()) == list(slow.__dict__.items())
        assert fast.model_fields_set == slow.model_fields_set
        assert fast.model_dump_json() == slow.model_dump_json() and fast == slow
        assert fast.__pydantic_extra__ is None and fast.__pydantic_private__ is None


def test_turn_without_feedback_or_times_shares_values() -> None:
    """The shortcut for a reply with no feedback, counters, regeneration or timestamps gives what the full
    rules give: nothing fires, skim not computed."""
    from uxbench.mining.signals.detect import _explicit, _skim
    from uxbench.mining.signals.results import SignalValue

    plain = Turn(conversation_id="c", turn_index=1, role="assistant", content="hello")
    nxt = Turn(conversation_id="c", turn_index=2, role="user", content="thanks")
    counted = plain.model_copy(update={"counters": {"share": 0}})  # a counter at zero: the full rules, same values
    for turn in (plain, counted):
        assert _explicit(turn, 0, SignalConfig()) == {
            name: SignalValue(fired=False, evidence=None, score=0.0)
            for name in ("thumbs_down", "thumbs_up", "regenerate", "copied")}
    assert _explicit(plain.model_copy(update={"feedback": "dislike"}), 0, SignalConfig())["thumbs_down"].fired
    skim = _skim(plain, nxt, SignalConfig())
    assert (skim.fired, skim.evidence, skim.gap_s, skim.seconds_per_unit) == (None, "not computed: no timestamps",
                                                                              None, None)

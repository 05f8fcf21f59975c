"""De-identification returns what it does not change: a session with nothing found is the session itself, the
turns list of a session whose turns are all clean is shared, and `_inert` (the test that skips the walk of a
meta value) holds only of values that `scrub_value` gives back unchanged, with no change recorded."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from uxbench.mining.deid import _inert, _Pseudonyms, deidentify_session
from uxbench.mining.deid_types import PiiSpan
from uxbench.mining.types import Session, Turn

SALT = b"k" * 32


def _session(*texts: str, meta: dict[str, Any] | None = None, turn_meta: dict[str, Any] | None = None) -> Session:
    turns = [Turn(conversation_id="c", turn_index=i, role="user" if i % 2 == 0 else "assistant", content=text,
                  meta=dict(turn_meta or {})) for i, text in enumerate(texts)]
    return Session(conversation_id="c", turns=turns, meta=meta or {"duplicates_dropped": 0, "issues": []})


def test_a_clean_session_is_returned_itself() -> None:
    session = _session("hello there", "nothing personal, 42 apples", meta={"n": 999_999, "k": [1.5, None, True]})
    cleaned, record = deidentify_session(session, SALT)
    assert cleaned is session and record.changes == []


def test_a_changed_session_is_a_copy_and_the_original_is_kept() -> None:
    session = _session("hello", "call me at 13812345678", "bye")
    before = session.model_dump_json()
    cleaned, record = deidentify_session(session, SALT)
    assert cleaned is not session and session.model_dump_json() == before
    assert cleaned.turns[1].content == "call me at [PHONE_1]" and len(record.changes) == 1
    assert cleaned.turns[0] is session.turns[0] and cleaned.turns[2] is session.turns[2]
    assert cleaned.turns is not session.turns


def test_meta_with_a_value_is_scrubbed_and_turns_stay_shared() -> None:
    session = _session("hello", meta={"n": 1, "who": "mail jane.roe@fastmail.co.uk", "big": 13812345678})
    cleaned, record = deidentify_session(session, SALT)
    assert cleaned.meta == {"n": 1, "who": "mail [EMAIL_1]", "big": "[PHONE_1]"}
    assert cleaned.turns == session.turns and cleaned.turns is not session.turns
    assert [c.field for c in record.changes] == ["session.meta.who", "session.meta.big"]


def test_turn_meta_is_still_read() -> None:
    session = _session("hello", turn_meta={"phone": "13812345678", "n": 3})
    cleaned, record = deidentify_session(session, SALT)
    assert cleaned.turns[0].meta == {"phone": "[PHONE_1]", "n": 3} and record.changes[0].field == "meta.phone"


def test_inert_at_the_integer_limit() -> None:
    assert _inert(999_999) and _inert(-999_999) and _inert({"a": [0, 1.0e300, None, False]})
    assert not _inert(1_000_000) and not _inert(-1_000_000) and not _inert("") and not _inert((1,))
    assert not _inert({"a": {"b": ["x"]}})


class _Dict(dict[str, Any]):
    pass


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=12),
              st.integers(min_value=-10**8, max_value=10**8), st.sampled_from([999_999, 1_000_000, -1_000_000])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=4),
                            st.tuples(inner), st.builds(_Dict, st.dictionaries(st.text(max_size=3), inner,
                                                                                max_size=2))),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_inert_values_come_back_unchanged(value: Any) -> None:
    seen: list[str] = []

    def finder(text: str) -> list[PiiSpan]:
        seen.append(text)
        return []

    table = _Pseudonyms("c", SALT, finder=finder)
    out = table.scrub_value(value, None, "m", False)
    if _inert(value):
        assert out is value and seen == [] and table.record.changes == []

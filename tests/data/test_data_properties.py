"""Property tests: whatever the input, the data layer fails only with `DataError` (never a crash)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uxbench.data.loaders import load_cases
from uxbench.data.normalize import normalize_row
from uxbench.data.schema import EvalCase, JudgeCase, RecoveryCase
from uxbench.errors import DataError

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30))
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = [
    "cid",
    "id",
    "task",
    "ground_truth",
    "label",
    "source_query",
    "query",
    "selected_history",
    "history",
    "messages",
    "agent_response_full",
    "response",
    "agent_response_reasoning",
    "failed_response",
    "user_complaint",
    "failure_dimension",
    "dimension",
    "success_dimension",
    "scenario",
    "difficulty",
    "signal_type",
    "lang",
]
roles = st.sampled_from(["user", "assistant", "system", "bot", "robot", "", None, 3])
messages = st.fixed_dictionaries(
    {"role": roles},
    optional={
        "message": json_values,
        "content": json_values,
        "create_time": json_values,
        "turn_index": json_values,
        "reasoning": json_values,
    },
)
histories = st.one_of(
    json_values, st.lists(messages, max_size=4), st.lists(messages, max_size=3).map(json.dumps)
)
payloads = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "think", "deepSearch", "searchGuid", "image", "x"])},
        optional={"msg": json_values, "steps": json_values},
    ),
    max_size=4,
).map(lambda blocks: json.dumps({"content": blocks}))
field_values = {
    "selected_history": histories,
    "history": histories,
    "messages": histories,
    "agent_response_full": st.one_of(json_values, payloads),
    "source_query": json_values,
}
chaotic_rows = st.fixed_dictionaries(
    {}, optional={k: field_values.get(k, json_values) for k in FIELDS}
) | st.dictionaries(st.text(max_size=10), json_values, max_size=6)

# Mostly well-typed rows with random content, so the deeper paths (history, payloads, labels) run too.
texts = st.text(max_size=40)
good_messages = st.one_of(
    *(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant"]), key: st.one_of(texts, payloads)},
            optional={
                "create_time": st.one_of(texts, st.integers(), st.floats()),
                "turn_index": st.integers(),
            },
        )
        for key in ("message", "content")
    )
)
labels = st.one_of(
    st.none(), texts, st.sampled_from(["冗余啰嗦", "其他", "私密与生活决策辅助", "easy", "repeat", ""])
)
plausible_rows = st.fixed_dictionaries(
    {"cid": st.text(min_size=1, max_size=10)},
    optional={
        "ground_truth": st.sampled_from([1, -1, "good", "bad", 0, None]),
        "source_query": st.one_of(
            texts, st.fixed_dictionaries({"turn_index": st.integers(), "message": texts})
        ),
        "query": texts,
        "selected_history": st.one_of(
            st.lists(good_messages, max_size=4), st.lists(good_messages, max_size=3).map(json.dumps)
        ),
        "history": st.lists(good_messages, max_size=4).map(str),
        "messages": st.lists(good_messages, max_size=4),
        "agent_response_full": st.one_of(texts, payloads),
        "failed_response": texts,
        "user_complaint": texts,
        **{
            k: labels
            for k in ("failure_dimension", "success_dimension", "scenario", "difficulty", "signal_type")
        },
        "lang": st.sampled_from(["zh", "en", "fr", None]),
        "extra": json_values,
    },
)
rows = st.one_of(chaotic_rows, plausible_rows)


@SETTINGS
@given(
    row=rows,
    task=st.sampled_from([None, "judge", "eval", "recovery"]),
    default=st.sampled_from([None, "good", "bad"]),
)
def test_normalize_row_raises_only_data_error(row: dict[str, Any], task: Any, default: Any) -> None:
    try:
        case = normalize_row(row, task=task, default_label=default, fallback_id="f:1")
    except DataError as err:
        assert str(err)
        return
    assert isinstance(case, (JudgeCase, EvalCase, RecoveryCase))
    if task is not None:
        assert case.task == task
    case.model_dump_json()  # the case is serialisable, meta included


@SETTINGS
@given(row=json_values)
def test_non_object_rows(row: object) -> None:
    try:
        normalize_row(row)
    except DataError:
        pass


def _write(data: bytes, suffix: str) -> Path:
    fh = tempfile.NamedTemporaryFile(suffix=suffix, delete=False)
    fh.write(data)
    fh.close()
    return Path(fh.name)


lines = st.one_of(
    st.binary(max_size=60),
    rows.map(lambda r: json.dumps(r, default=str).encode()),
    st.just(b"\xef\xbb\xbf{}"),
    st.just(b"   "),
)


@SETTINGS
@given(chunks=st.lists(lines, max_size=6), task=st.sampled_from([None, "judge", "eval", "recovery"]))
def test_arbitrary_jsonl_bytes(chunks: list[bytes], task: Any) -> None:
    path = _write(b"\n".join(chunks), ".jsonl")
    try:
        try:
            for _ in load_cases(path, task=task):
                pass
        except DataError as err:
            assert str(path) in str(err)
        skipping = load_cases(path, task=task, skip_invalid=True)
        try:
            n = sum(1 for _ in skipping)
        except DataError as err:  # only when nothing was read, and it says so
            n = 0
            assert skipping.read_report.cases == 0 and "no cases were read" in str(err)
        left_out = skipping.skipped.count + skipping.read_report.exact_duplicates
        if task is None:
            assert n + left_out == skipping.count()
        else:
            assert n + left_out + skipping.read_report.other_task_rows <= skipping.count()
    finally:
        path.unlink()


@SETTINGS
@given(data=st.binary(max_size=200), suffix=st.sampled_from([".json", ".parquet", ".jsonl.gz"]))
def test_arbitrary_bytes_in_other_formats(data: bytes, suffix: str) -> None:
    path = _write(data, suffix)
    try:
        for skip in (False, True):
            try:
                source = load_cases(path, skip_invalid=skip)
                source.count()
                for _ in source:
                    pass
            except DataError:
                pass
    finally:
        path.unlink()

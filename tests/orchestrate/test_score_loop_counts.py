"""The post-generation loop counts what it has to do from the store's status column when every successful record
is wanted (a judge scoring): the same counts as the record-by-record filter, with no record parsed before the
first call, and only the selected, successful, not yet scored records are asked about."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from uxbench.data.schema import AnyCase
from uxbench.orchestrate.score_loop import StepInfo, run_score_loop
from uxbench.runs.records import SampleRecord, ScoreRecord
from uxbench.runs.store import RunStore

INFO = StepInfo(key="grm", phase="score", what="judge calls", hint="check the judge")


def _case(i: int) -> bytes:
    return json.dumps({"task": "eval", "id": f"c{i}", "lang": "en", "history": [],
                       "query": f"question {i}"}).encode()


def _store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "run")
    statuses = ["ok", "ok", "error", "ok", "too_long", "ok"]
    for i, status in enumerate(statuses):
        store.put(SampleRecord(sample_id=f"s{i}", case_id=f"c{i}", index=i, status=status,  # type: ignore[arg-type]
                               raw_output=f"reply {i}" if status == "ok" else None), _case(i))
    store.put_score(ScoreRecord(sample_id="s1", judge="grm", case_id="c1", index=1, status="ok", label="good"))
    store.put_score(ScoreRecord(sample_id="s3", judge="grm", case_id="c3", index=3, status="error", error="x"))
    return store


def test_ok_ids_reads_the_status_column(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.ok_ids() == {"s0", "s1", "s3", "s5"}
    assert store.ok_ids(["s0", "s2", "s5", "nope"]) == {"s0", "s5"}


@pytest.mark.parametrize("wanted", [None, lambda _r: True], ids=["from the status column", "record by record"])
@pytest.mark.parametrize("selected", [None, ["s0", "s1", "s2", "s3"]], ids=["all", "a selection"])
def test_both_ways_of_counting_agree(tmp_path: Path, wanted: Any, selected: list[str] | None) -> None:
    store = _store(tmp_path)
    asked: list[str] = []

    async def ask(case: AnyCase, record: SampleRecord) -> dict[str, Any]:
        assert case.id == record.case_id  # the stored case, rebuilt
        asked.append(record.sample_id)
        return {"label": "bad"}

    out = asyncio.run(run_score_loop(store, INFO, wanted=wanted, ask=ask, selected=selected, concurrency=2))
    expected = ["s0", "s3", "s5"] if selected is None else ["s0", "s3"]  # s1 is scored; s3's score failed
    assert sorted(asked) == expected
    assert (out.already, out.done_now, out.failed_now) == (1, len(expected), 0)
    store.close()

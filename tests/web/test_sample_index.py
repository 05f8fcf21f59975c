"""The sample index of the browser: built once and kept while the run is unchanged (a reader's empty
write-ahead log is no change), rebuilt after a write; search by trigram phrase and by scan agree with a plain
substring test over the stored texts, LIKE wildcards and quotes included (the conversation and reply for the
search, the judge's output for its own filter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from web_support import write_judge_run

from uxbench.runs.records import SampleRecord
from uxbench.runs.store import RunStore
from uxbench.web.sample_index import Query, SampleIndex, case_texts


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_judge_run(tmp_path / "t1", "openai:m", [True] * 30)


def test_kept_while_unchanged_and_rebuilt_after_a_write(run: Path, tmp_path: Path) -> None:
    index = SampleIndex(run, tmp_path / "idx", check_every_s=0)
    index.ensure()
    built = index.path.stat().st_mtime_ns
    for _ in range(3):
        index.ensure()
        assert index.path.stat().st_mtime_ns == built  # no rebuild: reading the run is no change
    with RunStore(run) as store:
        store.put(SampleRecord(sample_id="new", case_id="c-new", index=99, status="ok"))
        store.write_selection([*[f"t1-{i:03d}" for i in range(30)], "new"])
    index.ensure()
    assert index.path.stat().st_mtime_ns != built and index.search(Query()).total == 31
    assert oct(index.path.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("q", ["zebrafish", "ZEBRA", "number 1", "1", "%", "_", "r 1_", 'xss-text")', "hi**",
                               "no such", "预算", "预算多少", "算多", "verdict: good", "od"])
def test_search_equals_a_substring_test_over_the_texts(run: Path, tmp_path: Path, q: str) -> None:
    import orjson

    with RunStore(run) as store:
        expected, judged = set(), set()
        for rec, case_json in store.iter_with_cases():
            text = "\n".join([rec.case_id, *case_texts(orjson.loads(case_json or b"{}"))])
            if q.lower() in text.lower():
                expected.add(rec.case_id)
            if q.lower() in (rec.raw_output or "").lower():  # Task 1: the model's output is the judge's
                judged.add(rec.case_id)
    index = SampleIndex(run, tmp_path / "idx")
    found = index.search(Query(q=q, per_page=200))
    assert {r["case_id"] for r in found.rows} == expected and found.total == len(expected)
    by_judge = index.search(Query(judge_q=q, per_page=200))
    assert {r["case_id"] for r in by_judge.rows} == judged and by_judge.total == len(judged)


def test_a_search_counts_up_to_the_cap_and_says_so(run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uxbench.web.sample_query as sample_query

    monkeypatch.setattr(sample_query, "COUNT_CAP", 5)
    index = SampleIndex(run, tmp_path / "idx")
    found = index.search(Query(q="question number", per_page=2, page=9))
    assert found.capped and found.total == 5 and found.pages == 3 and found.page == 3 and len(found.rows) == 1
    assert not index.search(Query(q="zebrafish")).capped
    assert index.search(Query()).total == 30  # the cap is for searches only


def test_concurrent_first_requests_build_one_good_index(run: Path, tmp_path: Path) -> None:
    import threading

    indexes = [SampleIndex(run, tmp_path / "idx") for _ in range(4)]  # as two server processes would
    totals: list[int] = []
    errors: list[BaseException] = []

    def work(index: SampleIndex) -> None:
        try:
            totals.append(index.search(Query(q="number")).total)
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in indexes + indexes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and totals == [29] * 8  # every case but the one whose query is the XSS payload
    assert not list((tmp_path / "idx").glob("*.tmp"))


@pytest.mark.parametrize("descending", [False, True])
def test_neighbours_follow_the_sorted_filtered_order(tmp_path: Path, descending: bool) -> None:
    from uxbench.web.sample_query import SORTS

    run = write_judge_run(tmp_path / "t1", "openai:m", [i % 3 != 0 for i in range(30)], scores=True)
    index = SampleIndex(run, tmp_path / "idx")
    for sort in SORTS:
        for filters in ({}, {"gold": "bad"}, {"q": "number 1"}, {"judge_q": "verdict: good"}):
            query = Query(sort=sort, descending=descending, per_page=200, **filters)  # type: ignore[arg-type]
            rows = [r["rid"] for r in index.search(query).rows]
            assert rows, (sort, filters)
            for i, rid in enumerate(rows):
                found = index.neighbours(query, rid)
                assert found == {"position": i + 1, "total": len(rows), "prev": rows[i - 1] if i else None,
                                 "next": rows[i + 1] if i + 1 < len(rows) else None}, (sort, filters, i)
    assert index.neighbours(Query(gold="bad"), 1) is None  # sample 1 is a good case: not in that list
    scores = [r["score"] for r in index.search(Query(sort="score", per_page=200)).rows]
    assert scores[0] is None and scores[-1] == max(s for s in scores if s is not None)  # empty first, ascending

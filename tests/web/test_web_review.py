"""The view as a daily review tool (issue 27), over runs `uxbench run` wrote with scripted providers: the sample
browser's p(good) column, confidence sort, marked matches and exports (CSV, JSON Lines) equal to what the index
lists; compare never defaults to one run twice and gives a cross-task pair its form back; runs written after the
server started appear, a run in progress shows what it wrote; the p(good) histogram carries its counts; the
annotator pages show a pair's conversation once, in the study's language, with every choice and its key."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from extra_skip import require_extra

require_extra("web")

from fastapi.testclient import TestClient  # noqa: E402
from web_support import LOOPBACK  # noqa: E402
from web_support_review import FORMULA  # noqa: E402

from uxbench.dirlock import hold_dir_lock  # noqa: E402
from uxbench.human.study import Study  # noqa: E402
from uxbench.runs.store import RunStore  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import REFRESH_S, Catalog, build_catalog  # noqa: E402
from uxbench.web.render import cell_text  # noqa: E402
from uxbench.web.sample_query import Query  # noqa: E402


@pytest.fixture(scope="module")
def catalog(review: dict[str, Path]) -> Catalog:
    return build_catalog([str(review["t1"].parent), str(review["mine"])])


@pytest.fixture(scope="module")
def client(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    return TestClient(create_app(catalog, index_dir=tmp_path_factory.mktemp("ridx")), base_url=LOOPBACK)


def _id(catalog: Catalog, path: Path) -> str:
    return next(rid for rid, e in catalog.runs.items() if e.path == path)


def _summary(path: Path) -> dict[str, Any]:
    with RunStore(path) as store:
        return store.read_summary() or {}


def _page(client: TestClient, url: str) -> str:
    for _ in range(60):  # the first visit of a run may answer while its index is built
        response = client.get(url)
        if response.status_code != 202:
            assert response.status_code == 200, (url, response.status_code)
            return response.text
        time.sleep(0.5)
    raise AssertionError(f"{url} never finished indexing")


def test_a_logprob_run_has_a_p_good_column_and_sorts_confident_errors_first(
        client: TestClient, catalog: Catalog, review: dict[str, Path]) -> None:
    run = _id(catalog, review["t1"])
    html = _page(client, f"/runs/{run}/samples")
    assert ">p(good)" in html and '<label>correct <select name="correct">' in html and ">judged <" not in html
    with RunStore(review["t1"]) as store:
        records = {r.case_id: r for r in store.iter_records()}
    errors = [r for r in records.values() if r.prediction != r.gold]
    assert errors and all(r.score is not None for r in records.values())
    link = re.search(r'href="([^"]+)" id="confident-errors"', html)
    assert link and "sort=confidence" in link.group(1) and "correct=no" in link.group(1)
    shown = _page(client, f"/runs/{run}/samples" + link.group(1).replace("&amp;", "&"))
    cases = re.findall(r'<tr data-case="([^"]+)"', shown)
    expected = sorted(errors, key=lambda r: -abs((r.score or 0) - 0.5))
    assert [abs(records[c].score - 0.5) for c in cases] == [abs(r.score - 0.5) for r in expected]  # type: ignore[operator]
    assert set(cases) == {r.case_id for r in errors}
    first = records[cases[0]]
    assert f"{first.score:.3f}</td>" in shown  # rounded, in its column


def test_search_matches_are_marked_and_the_list_exports_as_csv_and_jsonl(
        client: TestClient, catalog: Catalog, review: dict[str, Path]) -> None:
    run = _id(catalog, review["t1"])
    html = _page(client, f"/runs/{run}/samples?q=天气&jq=差")
    assert "<mark>天气</mark>" in html and "<mark>差</mark>" in html
    index = client.app.state.view.index(catalog.runs[run])  # type: ignore[attr-defined]
    query = Query(q="天气", judge_q="差", sort="confidence", descending=True)
    listed = [r["case_id"] for r in index.iterate(query)]
    assert listed and len(listed) == index.search(query).total
    response = client.get(f"/runs/{run}/samples.csv", params={"q": "天气", "jq": "差", "sort": "confidence",
                                                               "dir": "desc"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(response.text.lstrip("\ufeff"))))
    assert [r["case_id"] for r in rows] == listed
    assert set(rows[0]) >= {"rid", "case_id", "gold", "verdict", "correct", "p_good", "scenario", "text"}
    lines = client.get(f"/runs/{run}/samples.jsonl", params={"q": "天气", "jq": "差", "sort": "confidence",
                                                              "dir": "desc"}).text.splitlines()
    exported = [json.loads(line) for line in lines]
    assert [e["case_id"] for e in exported] == listed
    with RunStore(review["t1"]) as store:
        records = {r.case_id: r for r in store.iter_records()}
    for e in exported:
        assert e["output"] == records[e["case_id"]].raw_output and e["p_good"] == records[e["case_id"]].score
        assert "天气" in json.dumps(e["case"], ensure_ascii=False) and "差" in e["output"]
    everything = list(csv.DictReader(io.StringIO(client.get(f"/runs/{run}/samples.csv").text.lstrip("\ufeff"))))
    assert len(everything) == len(records)  # no filter: every sample, not a page of 50
    formula = next(r for r in everything if r["case_id"] == "zh-002")
    assert formula["text"] == "'" + FORMULA  # a spreadsheet reads it as text, not a formula


def test_a_task2_export_carries_the_chosen_judge(client: TestClient, catalog: Catalog,
                                                 review: dict[str, Path]) -> None:
    run = _id(catalog, review["t2b"])
    summary = _summary(review["t2b"])
    grm = next(k for k, info in summary["judges"].items() if info["mode"] == "grm")
    html = _page(client, f"/runs/{run}/samples?judge={grm}")
    assert ">p(good)" in html
    rows = [json.loads(line) for line in client.get(f"/runs/{run}/samples.jsonl",
                                                    params={"judge": grm}).text.splitlines()]
    assert len(rows) == summary["n_samples"] and {r["judge"] for r in rows} == {summary["judges"][grm]["spec"]}
    assert all(r["p_good"] is not None and r["judge_output"] in ("好", "差") for r in rows)
    assert {r["verdict"] for r in rows} == {"good", "bad"}
    assert client.get(f"/runs/{run}/samples.xlsx").status_code == 404


def test_compare_chooses_no_run_and_a_cross_task_pair_gets_the_form_back(
        client: TestClient, catalog: Catalog, review: dict[str, Path]) -> None:
    form = client.get("/compare").text
    assert form.count(" selected") == 0 and form.count('<option value="">choose a run…</option>') == 2
    assert '<optgroup label="Task 1, UX Judge">' in form and '<optgroup label="Task 2, UX Eval">' in form
    t1, t2 = _id(catalog, review["t1"]), _id(catalog, review["t2a"])
    from_run = client.get("/compare", params={"a": t1})  # the run page's link: B is left to choose
    assert from_run.status_code == 200 and from_run.text.count(" selected") == 1
    crossed = client.get("/compare", params={"a": t1, "b": t2})
    assert crossed.status_code == 400 and 'id="compare-form"' in crossed.text
    assert "is a Task 1, UX Judge run" in crossed.text and "a Task 2, UX Eval run" in crossed.text
    assert 'id="compare-problem"' in crossed.text and crossed.text.count(" selected") == 2  # the choice is kept
    same = client.get("/compare", params={"a": t1, "b": t1})
    assert same.status_code == 400 and "the same run" in same.text


def test_compare_shows_each_runs_own_figure_beside_the_difference(
        client: TestClient, catalog: Catalog, review: dict[str, Path]) -> None:
    a, b = _id(catalog, review["t2a"]), _id(catalog, review["t2b"])
    html = _page(client, f"/compare?a={a}&b={b}")
    figures = re.search(r'<table id="compare-figures">.*?</table>', html, re.S)
    assert figures
    for side, path in (("A", review["t2a"]), ("B", review["t2b"])):
        summary = _summary(path)
        cell = summary["judges"][summary["primary_judge"]]["metrics"]["good_rate_scored_only"]
        row = re.search(rf'<tr data-side="{side}">.*?</tr>', figures.group(0), re.S)
        assert row and cell_text(cell) in row.group(0) and f"(n={cell['n']})" in row.group(0)
    assert 'id="rate-diff"' in html
    t1, t1b = _id(catalog, review["t1"]), _id(catalog, review["t1b"])
    judged = _page(client, f"/compare?a={t1}&b={t1b}")
    for path in (review["t1"], review["t1b"]):
        assert cell_text(_summary(path)["metrics"]["all"]["avg_acc"]) in judged
    # the headline difference is Avg-Acc's; McNemar's p says it tests plain accuracy (they can disagree)
    said = " ".join(re.sub(r"<[^>]+>", " ", judged).split())
    assert said.index("Avg-Acc(B) − Avg-Acc(A)") < said.index("McNemar p") and "tests plain accuracy" in said


def test_the_p_good_histogram_has_axes_counts_and_its_threshold(client: TestClient, catalog: Catalog,
                                                                review: dict[str, Path]) -> None:
    run = _id(catalog, review["t2b"])
    _page(client, f"/runs/{run}/samples")  # the histograms need the index
    html = _page(client, f"/runs/{run}")
    summary = _summary(review["t2b"])
    grm = next(k for k, info in summary["judges"].items() if info["mode"] == "grm")
    figure = re.search(rf'<figure class="chart histogram" data-judge="{re.escape(grm)}">.*?</figure>', html, re.S)
    assert figure
    with RunStore(review["t2b"]) as store:
        scores = [s.score for s in store.iter_scores(grm) if s.status == "ok"]
    counts = [0] * 10
    for value in scores:
        counts[min(int(value * 10), 9)] += 1  # type: ignore[operator]
    shown = [int(n) for n in re.findall(r'class="count">(\d+)<', figure.group(0))]
    assert shown == [n for n in counts if n]
    assert "threshold 0.5" in figure.group(0) and ">p(good)</text>" in figure.group(0) and ">replies</text>" in \
        figure.group(0)
    assert f"p(good) of the {len(scores)} replies" in figure.group(0)
    assert "0.30000000000000004" not in html


def test_the_start_page_names_each_boards_data_set_and_keeps_the_demo_badge_whole(
        client: TestClient, review: dict[str, Path]) -> None:
    html = client.get("/").text
    boards = re.findall(r'<h2 class="board">(.*?)</h2>', html, re.S)
    judge_boards = [b for b in boards if b.startswith("Task 1, UX Judge")]
    assert len(judge_boards) == 2  # the Chinese cases and the bundled demo set
    assert any("judge_zh.jsonl" in b for b in judge_boards) and any("demo" in b for b in judge_boards)
    assert 'class="badge demo">DEMO DATA</span>' in html
    assert "<wbr>" in html  # ids and specs break at their parts


def test_runs_written_after_the_start_appear_and_a_run_in_progress_shows_its_progress(
        review: dict[str, Path], tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(review["t1b"], runs / "first")
    catalog = build_catalog([str(runs)])
    client = TestClient(create_app(catalog, index_dir=tmp_path / "idx"), base_url=LOOPBACK)
    assert list(catalog.runs) == [_id(catalog, runs / "first")]
    with RunStore(review["t1"]) as source:
        manifest = source.read_manifest() or {}
        written = list(source.iter_with_cases())[:17]
    live = runs / "second"
    with hold_dir_lock(live, command="uxbench run"):  # what `uxbench run` holds while it writes
        store = RunStore(live)
        store.write_manifest(manifest)
        for record, case in written:
            store.put(record, case)
        time.sleep(REFRESH_S + 0.1)
        start = client.get("/").text
        assert 'id="in-progress"' in start and "<b>17</b> samples written" in start
        assert 'class="badge running">running</span>' in start
        page = client.get(f"/runs/{manifest['run_id']}")
        assert page.status_code == 202 and '<meta http-equiv="refresh" content="5">' in page.text
        assert "<b>17</b> samples written" in page.text and "by pid" in page.text
        assert client.get(f"/runs/{manifest['run_id']}/samples").status_code == 202
        store.close()
    stopped = client.get(f"/runs/{manifest['run_id']}").text
    assert "stopped" in stopped and "rerun the same" in stopped and 'http-equiv="refresh"' not in stopped
    shutil.copy(review["t1"] / "summary.json", live / "summary.json")  # it finished
    shutil.copytree(review["t2a"], runs / "third")  # and another run was written
    time.sleep(REFRESH_S + 0.1)
    start = client.get("/").text
    assert 'id="in-progress"' not in start and manifest["run_id"] in start
    assert client.get(f"/runs/{manifest['run_id']}").status_code == 200
    assert len(catalog.runs) == 3 and _summary(review["t2a"])["run_id"] in start
    assert catalog.runs[manifest["run_id"]].path == live  # the id it had in progress


def test_the_pairwise_page_shows_the_shared_conversation_once_in_chinese(
        client: TestClient, review: dict[str, Path], tmp_path: Path) -> None:
    study = Study.open(review["pairwise"])
    assert study.lang == "zh"
    app = TestClient(create_app(Catalog(), index_dir=tmp_path / "idx", study=study, annotator_only=True),
                     base_url=LOOPBACK)
    annotator = study.annotators()[0]
    first = study.order(annotator)[0]
    html = app.get(f"/h/{annotator.token}").text
    shown = study.shown(first) or {}
    assert len(shown["a"]) > 10 and shown["a"][:-1] == shown["b"][:-1]
    context = re.search(r'<section class="context".*?</section>', html, re.S)
    assert context and context.group(0).count('class="turn ') == len(shown["a"]) - 1
    assert html.count('class="turn ') == len(shown["a"]) + 1  # the context once, then two replies
    assert '<html lang="zh">' in html and "用户会更喜欢哪一条回复？" in html and "标注说明" in html
    for choice, key, words in (("A", "a", "A 更好"), ("B", "b", "B 更好"), ("tie", "t", "平局"),
                               ("both_bad", "x", "都不好"), ("skip", "s", "跳过")):
        button = re.search(rf'<button type="submit" name="choice" value="{choice}"[^>]*data-key="{key}"[^>]*>'
                           rf'<kbd>{key}</kbd> {words}', html)
        assert button, choice
    assert 'id="keys"' in html and "<kbd>←</kbd>" in html
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert csrf
    for choice in ("tie", "both_bad", "skip"):
        done = app.post(f"/h/{annotator.token}", data={"item_id": first, "choice": choice, "csrf": csrf.group(1)},
                        follow_redirects=False)
        assert done.status_code == 303 and study.judgments(annotator.token)[(annotator.token, first)] == choice
    refused = app.post(f"/h/{annotator.token}", data={"item_id": first, "choice": "good", "csrf": csrf.group(1)})
    assert refused.status_code == 400 and "tie" in refused.text


def test_an_english_study_speaks_english(review: dict[str, Path], tmp_path: Path) -> None:
    study = Study.create(tmp_path / "s", str(review["t1demo"]), n=4, annotators=1)
    assert study.lang == "en"
    forced = Study.create(tmp_path / "zh", str(review["t1demo"]), n=4, annotators=1, lang="zh")
    assert forced.lang == "zh"
    app = TestClient(create_app(Catalog(), index_dir=tmp_path / "idx", study=study), base_url=LOOPBACK)
    html = app.get(f"/h/{study.annotators()[0].token}").text
    assert '<html lang="en">' in html and "Would the user be satisfied with the last reply?" in html
    assert "<kbd>g</kbd> Good" in html and "<kbd>s</kbd> Skip / unsure" in html and "How to judge" in html


def test_a_pair_of_two_conversations_shows_each_above_its_reply(review: dict[str, Path], tmp_path: Path) -> None:
    study = Study.create(tmp_path / "p", str(review["t1"]), n=4, annotators=1, mode="pairwise")
    app = TestClient(create_app(Catalog(), index_dir=tmp_path / "idx", study=study), base_url=LOOPBACK)
    annotator = study.annotators()[0]
    for item in study.order(annotator):
        shown = study.shown(item) or {}
        html = app.get(f"/h/{annotator.token}", params={"item": item}).text
        assert 'class="annotate pairwise separate"' in html
        a_part = html[html.index('id="reply-A"'):html.index('id="reply-B"')]
        b_part = html[html.index('id="reply-B"'):html.index('id="choices"')]
        for side, part in (("A", a_part), ("B", b_part)):  # its own conversation, then its reply
            assert part.count('<section class="context"') == 1, side
            assert part.count('class="turn ') == len(shown[side.lower()]), side

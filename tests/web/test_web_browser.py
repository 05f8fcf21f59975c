"""`uxbench view` and the static site in a real browser: Playwright driving Debian's Chromium (never a browser
Playwright downloads), against a server these tests start. Skipped when playwright or chromium is missing.

Every main page loads without console errors or dialogs; filters and search in the page return what the
records say; the figures equal summary.json; XSS payloads (conversation text, model output, case ids, file
names) never execute and show as text; the static site opens from file://; blind judgments persist across
reloads and stay apart per annotator. Screenshots of the main pages go to a temporary directory (or to
$UXBENCH_SCREENSHOTS when set)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extra_skip import require_extra

require_extra("web")

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)

from browser_support import ARGS, Watch, serving  # noqa: E402

from uxbench.human.study import Study  # noqa: E402
from uxbench.runs.store import RunStore  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import build_catalog  # noqa: E402
from uxbench.web.render import cell_text  # noqa: E402
from uxbench.web.site import build_site  # noqa: E402


@pytest.fixture(scope="module")
def study(served: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Study:
    return Study.create(tmp_path_factory.mktemp("bstudy") / "s", str(served["judge"]), n=4, annotators=2)


@pytest.fixture(scope="module")
def base_url(served: dict[str, Path], study: Study, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    catalog = build_catalog([str(served["judge"].parent), str(served["mine"])])
    with serving(create_app(catalog, index_dir=tmp_path_factory.mktemp("bidx"), study=study)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wanted = os.environ.get("UXBENCH_SCREENSHOTS")
    if wanted:
        Path(wanted).mkdir(parents=True, exist_ok=True)
        return Path(wanted)
    return tmp_path_factory.mktemp("screenshots")


def _summary(path: Path) -> dict[str, Any]:
    with RunStore(path) as store:
        return store.read_summary() or {}


def test_every_main_page_loads_without_errors_and_is_screenshotted(browser: Any, base_url: str,
                                                                   served: dict[str, Path], shots: Path) -> None:
    run, run2, ev = served["judge"].name, served["judge2"].name, served["eval"].name
    pages = {"index": "/", "run": f"/runs/{run}", "run_eval": f"/runs/{ev}", "samples": f"/runs/{run}/samples",
             "sample": f"/runs/{run}/samples/4", "sample_eval": f"/runs/{ev}/samples/3",
             "compare": f"/compare?a={run}&b={run2}", "mining": "/mines/mine-mined",
             "mining_turns": "/mines/mine-mined/turns", "curation": f"/curation/run/{run}"}
    watch = Watch(browser)
    try:
        for name, path in pages.items():
            response = watch.goto(base_url + path)
            assert response.status == 200, path
            watch.page.screenshot(path=str(shots / f"{name}.png"), full_page=name not in ("samples", "compare"))
        watch.clean()
    finally:
        watch.close()
    assert all((shots / f"{n}.png").stat().st_size > 5000 for n in pages)


def test_figures_on_the_run_page_equal_the_summary(browser: Any, base_url: str, served: dict[str, Path]) -> None:
    metrics = _summary(served["judge"])["metrics"]
    watch = Watch(browser)
    try:
        watch.goto(f"{base_url}/runs/{served['judge'].name}")
        for key in ("avg_acc", "good_acc", "bad_acc", "bad_f1", "positive_bias"):
            cells = watch.page.locator(f'tr[data-metric="{key}"] td').all_inner_texts()
            assert cells == [cell_text(metrics["all"][key]), cell_text(metrics["valid_only"][key])], key
        watch.clean()
    finally:
        watch.close()


def test_filters_and_search_in_the_page_return_what_the_records_say(browser: Any, base_url: str,
                                                                     served: dict[str, Path]) -> None:
    with RunStore(served["judge"]) as store:
        records = list(store.iter_records())
    watch = Watch(browser)
    try:
        watch.goto(f"{base_url}/runs/{served['judge'].name}/samples")
        watch.page.select_option('select[name="gold"]', "bad")
        watch.page.select_option('select[name="correct"]', "no")
        watch.page.click('form#filters button[type="submit"]')
        watch.page.wait_for_load_state("load")
        expected = sorted(r.case_id for r in records if r.gold == "bad" and r.prediction != "bad")
        shown = sorted(watch.page.locator("#samples tbody tr").evaluate_all(
            "rows => rows.map(r => r.getAttribute('data-case'))"))
        assert shown == expected
        watch.page.fill('input[name="q"]', "zebrafish")
        watch.page.select_option('select[name="gold"]', "")
        watch.page.select_option('select[name="correct"]', "")
        watch.page.click('form#filters button[type="submit"]')
        watch.page.wait_for_load_state("load")
        assert watch.page.locator("#samples tbody tr").count() == 1
        assert watch.page.locator("#samples tbody tr td a").inner_text() == "c07"
        watch.goto(f"{base_url}/")  # sorting a table by a column
        watch.page.locator("#runs th", has_text="samples").click()
        watch.clean()
    finally:
        watch.close()


def test_xss_payloads_never_execute_and_show_as_text(browser: Any, base_url: str, served: dict[str, Path]) -> None:
    run, run2, ev = served["judge"].name, served["judge2"].name, served["eval"].name
    watch = Watch(browser)
    try:
        watch.goto(f"{base_url}/runs/{run}/samples/4")
        text = watch.page.inner_text("main")
        assert '<script>alert("xss-text")</script>' in text and 'onerror=alert("xss-img")' in text
        assert '</div><script>alert("xss-output")</script>good' in text
        assert watch.page.locator('a[href^="javascript"]').count() == 0
        watch.goto(f"{base_url}/runs/{run}/samples/6")
        assert 'case-<img src=x onerror=alert("xss-id")>' in watch.page.inner_text("h1")
        for path in (f"/runs/{run}/samples", f"/runs/{run}/samples?q=xss", f"/compare?a={run}&b={run2}",
                     f"/runs/{ev}/samples/3", "/mines/mine-mined/turns", "/mines/mine-mined"):
            watch.goto(base_url + path)
            for link in watch.page.locator("main a").all()[:50]:
                href = link.get_attribute("href") or ""
                assert not href.lower().startswith("javascript"), href
        watch.goto(f"{base_url}/mines/mine-mined/turns")
        assert '<script>alert("xss-text")</script>' in watch.page.inner_text("main")
        watch.page.mouse.move(300, 300)
        watch.clean()
    finally:
        watch.close()


def test_the_static_site_opens_from_the_file_system(browser: Any, served: dict[str, Path], tmp_path: Path,
                                                    shots: Path) -> None:
    index = build_site([served["judge"].parent], tmp_path / "site", n_boot=200)
    summary = _summary(served["judge"])
    watch = Watch(browser)
    try:
        watch.goto(index.as_uri())
        assert watch.page.title() == "UXBench leaderboard"
        assert cell_text(summary["metrics"]["all"]["avg_acc"]) in watch.page.inner_text("table.leaderboard")
        rows = watch.page.locator("#runs tbody tr")
        first = rows.first.inner_text()
        watch.page.locator("#runs th", has_text="model").click()  # the script loaded from the file system sorts
        watch.page.locator("#runs th", has_text="model").click()
        assert rows.count() == 3 and watch.page.evaluate("document.querySelector('#runs th:nth-child(3)')"
                                                         ".getAttribute('data-dir')") == "desc"
        assert first  # the table rendered
        watch.page.screenshot(path=str(shots / "site.png"), full_page=True)
        watch.clean()
    finally:
        watch.close()


def test_blind_judgments_persist_across_reloads_per_annotator(browser: Any, base_url: str, study: Study,
                                                              shots: Path) -> None:
    a, b = study.annotators()
    one, two = Watch(browser), Watch(browser)
    try:
        one.goto(f"{base_url}/h/{a.token}")
        assert "0 of 4 judged" in one.page.inner_text("#progress")
        one.page.screenshot(path=str(shots / "annotator.png"), full_page=True)
        first = one.page.locator('input[name="item_id"]').get_attribute("value")
        one.page.click("#choice-bad")
        one.page.wait_for_load_state("load")
        one.page.reload()
        assert "1 of 4 judged" in one.page.inner_text("#progress")
        one.page.click("#choice-good")
        one.page.wait_for_load_state("load")
        two.goto(f"{base_url}/h/{b.token}")
        assert "0 of 4 judged" in two.page.inner_text("#progress")
        one.goto(f"{base_url}/h/{a.token}?item={first}")
        assert one.page.get_attribute("#current", "data-choice") == "bad"
        text = one.page.inner_text("body")
        assert "gpt-4o" not in text and "gold" not in text
        assert study.judgments(b.token) == {} and len(study.judgments(a.token)) == 2
        one.clean()
        two.clean()
    finally:
        one.close()
        two.close()


def test_directory_and_file_names_with_markup_never_execute(browser: Any, served: dict[str, Path],
                                                            tmp_path: Path) -> None:
    run = tmp_path / 'run-<img src=x onerror=alert("xss-dir")>'
    shutil.copytree(served["judge"], run)
    mined = tmp_path / 'mined-<svg onload=alert("xss-mine")>'
    shutil.copytree(served["mine"], mined)  # its log file's name carried a payload too
    (mined / "cases").mkdir()
    row = {"cid": 'mined_judge_0001<img src=x onerror=alert("xss-cid")>', "ground_truth": -1,
           "source_query": {"turn_index": 2, "message": '<script>alert("xss-query")</script>'},
           "selected_history": [{"turn_index": 0, "role": "user", "message": "hello"},
                                {"turn_index": 1, "role": "assistant", "message": "hi"}],
           "agent_response_full": "[x](javascript:alert('xss-md'))", "scenario": "信息与知识查询"}
    (mined / "cases" / "task1_judge_bad.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    catalog = build_catalog([str(run), str(mined)])
    (run_id,), (mine_id,) = catalog.runs, catalog.mines
    watch = Watch(browser)
    try:
        with serving(create_app(catalog, index_dir=tmp_path / "idx")) as url:
            for path in ("/", f"/runs/{run_id}", f"/runs/{run_id}/samples", f"/runs/{run_id}/samples/4",
                         f"/mines/{mine_id}", f"/mines/{mine_id}/turns", f"/mines/{mine_id}/cases"):
                assert watch.goto(url + path).status == 200, path
            assert watch.page.locator("details[open] .turn").count() > 0  # the conversation shows open
            assert '<script>alert("xss-query")</script>' in watch.page.inner_text("main")
            watch.goto(url + "/")
            assert 'mined-<svg onload=alert("xss-mine")>' in watch.page.inner_text("main")
            watch.clean()
    finally:
        watch.close()

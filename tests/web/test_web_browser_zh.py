"""`uxbench view` with Chinese content in Debian's Chromium (Playwright), at 1280 px: a foreign Host is refused
for GET and POST (a DNS-rebinding page that the browser resolves to 127.0.0.1); a user message keeps its single
newlines, indentation and `# comment` line; sorting a 200-sample run by turns puts its longest conversation
first; no page is wider than 1280 px; and screenshots of the main pages with Chinese content go to
$UXBENCH_SCREENSHOTS (or a temporary directory)."""

from __future__ import annotations

import os
import re
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

from browser_support import ARGS, WIDTH, Watch, serving  # noqa: E402
from web_support_zh import CODE_QUERY, LONGEST, N_JUDGE, build_zh  # noqa: E402

from uxbench.human.study import Study  # noqa: E402
from uxbench.runs.curation import CURATION_DB  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import Catalog, build_catalog  # noqa: E402
from uxbench.web.site import build_site  # noqa: E402

REBIND = "rebind.attacker.example"
LOCAL_ACCESS = ("--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,"
                "PrivateNetworkAccessRespectPreflightResults,PrivateNetworkAccessSendPreflights")
"""Chromium's own guard against public pages reaching loopback is switched off: the test is of the server's
guard, which must hold in browsers that have none."""


@pytest.fixture(scope="module")
def zh(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_zh(tmp_path_factory.mktemp("zh"))


@pytest.fixture(scope="module")
def study(zh: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Study:
    return Study.create(tmp_path_factory.mktemp("zhstudy") / "s", str(zh["judge"]), n=6, annotators=2)


@pytest.fixture(scope="module")
def catalog(zh: dict[str, Path]) -> Catalog:
    return build_catalog([str(zh["judge"].parent), str(zh["mine"])])


@pytest.fixture(scope="module")
def base_url(catalog: Catalog, study: Study, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving(create_app(catalog, index_dir=tmp_path_factory.mktemp("zhidx"), study=study)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # The attacker's name resolves to this machine, as it would after a DNS rebinding.
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM,
                                     args=[*ARGS, f"--host-resolver-rules=MAP {REBIND} 127.0.0.1", LOCAL_ACCESS])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wanted = os.environ.get("UXBENCH_SCREENSHOTS")
    if wanted:
        Path(wanted).mkdir(parents=True, exist_ok=True)
        return Path(wanted)
    return tmp_path_factory.mktemp("screenshots")


def _ids(catalog: Catalog, zh: dict[str, Path]) -> dict[str, str]:
    by_path = {e.path: rid for rid, e in catalog.runs.items()}
    return {key: by_path[zh[key]] for key in ("judge", "judge2", "recovery")}


def _pages(catalog: Catalog, zh: dict[str, Path], study: Study) -> dict[str, str]:
    ids = _ids(catalog, zh)
    (mine,) = catalog.mines
    return {"start": "/", "run": f"/runs/{ids['judge']}", "run_recovery": f"/runs/{ids['recovery']}",
            "samples": f"/runs/{ids['judge']}/samples", "sample": f"/runs/{ids['judge']}/samples/5",
            "sample_recovery": f"/runs/{ids['recovery']}/samples/2",
            "compare": f"/compare?a={ids['judge']}&b={ids['judge2']}", "mining": f"/mines/{mine}",
            "mining_turns": f"/mines/{mine}/turns", "mined_cases": f"/mines/{mine}/cases?task=recovery",
            "curation": f"/curation/run/{ids['judge']}", "annotator": f"/h/{study.annotators()[0].token}"}


def _overflow(page: Any) -> dict[str, Any]:
    """How far the page, and any table, reaches past the 1280 px viewport."""
    found: dict[str, Any] = page.evaluate("""() => {
      const doc = document.documentElement;
      const wide = [...document.querySelectorAll('table, pre, img, .cols, form')]
        .filter(e => e.getBoundingClientRect().right > doc.clientWidth + 1)
        .map(e => e.tagName + (e.id ? '#' + e.id : '') + ' ' + Math.round(e.getBoundingClientRect().right));
      return {scroll: doc.scrollWidth, client: doc.clientWidth, wide: wide};
    }""")
    return found


def test_no_page_is_wider_than_1280_px_and_screenshots(browser: Any, base_url: str, catalog: Catalog,
                                                       zh: dict[str, Path], study: Study, shots: Path) -> None:
    watch = Watch(browser)
    try:
        for name, path in _pages(catalog, zh, study).items():
            response = watch.goto(base_url + path)
            assert response.status == 200, (path, response.status)
            found = _overflow(watch.page)
            assert found["client"] <= WIDTH and found["scroll"] <= found["client"], (name, found)
            assert not found["wide"], (name, found["wide"])
            watch.page.screenshot(path=str(shots / f"zh-{name}.png"), full_page=True)
        watch.clean()
    finally:
        watch.close()


def test_the_static_site_with_chinese_content_fits_1280_px(browser: Any, zh: dict[str, Path], tmp_path: Path,
                                                           shots: Path) -> None:
    index = build_site([zh["judge"].parent], tmp_path / "site", n_boot=200)
    watch = Watch(browser)
    try:
        watch.goto(index.as_uri())
        found = _overflow(watch.page)
        assert found["scroll"] <= found["client"] and not found["wide"], found
        watch.page.screenshot(path=str(shots / "zh-site.png"), full_page=True)
        watch.clean()
    finally:
        watch.close()


def test_a_user_message_keeps_its_lines_and_comment(browser: Any, base_url: str, catalog: Catalog,
                                                    zh: dict[str, Path]) -> None:
    run = _ids(catalog, zh)["judge"]
    watch = Watch(browser)
    try:
        watch.goto(f"{base_url}/runs/{run}/samples/5")  # case zh004 asks about pasted code
        turn = watch.page.locator("#under-test .text")
        assert turn.inner_text() == CODE_QUERY  # every newline, the indentation, the # comment line
        assert watch.page.locator(".turn.user h1, .turn.user h2, .turn.user a").count() == 0
        reply = watch.page.locator(".turn.assistant").last
        assert reply.locator(".md").is_visible() and not reply.locator(".raw").is_visible()
        reply.locator(".raw-switch input").check()  # the switch shows the reply as written
        assert reply.locator(".raw").is_visible() and not reply.locator(".md").is_visible()
        assert "**" in reply.locator(".raw").inner_text() or "`" in reply.locator(".raw").inner_text()
        watch.page.click("#jump")
        assert watch.page.evaluate("location.hash") == "#under-test"
        watch.clean()
    finally:
        watch.close()


def test_sorting_by_turns_sorts_the_whole_run(browser: Any, base_url: str, catalog: Catalog,
                                               zh: dict[str, Path]) -> None:
    run = _ids(catalog, zh)["judge"]
    watch = Watch(browser)
    try:
        watch.goto(f"{base_url}/runs/{run}/samples")
        assert f"<b>{N_JUDGE}</b>" in watch.page.inner_html("#total")
        assert f"zh{LONGEST:03d}" not in watch.page.inner_text("#samples")  # page 1 of 4 in data order
        watch.page.click("#samples th >> text=turns")  # ascending
        watch.page.wait_for_load_state("load")
        watch.page.click("#samples th >> text=turns")  # descending
        watch.page.wait_for_load_state("load")
        assert "sort=turns" in watch.page.url and "dir=desc" in watch.page.url  # the URL keeps the sort
        first = watch.page.locator("#samples tbody tr").first
        assert first.get_attribute("data-case") == f"zh{LONGEST:03d}"
        turns = [int(t) for t in watch.page.locator("#samples tbody tr").evaluate_all(
            "rows => rows.map(r => r.getAttribute('data-turns'))")]
        assert turns == sorted(turns, reverse=True)
        first.locator("td.case a").click()  # its sample page: next/previous follow the sorted order
        watch.page.wait_for_load_state("load")
        assert "sample 1 of 200" in watch.page.inner_text("#sample-nav")
        watch.page.click("#next-sample")
        watch.page.wait_for_load_state("load")
        assert "sample 2 of 200" in watch.page.inner_text("#sample-nav") and "sort=turns" in watch.page.url
        watch.clean()
    finally:
        watch.close()


def test_a_foreign_host_is_refused_for_get_and_post(browser: Any, base_url: str, catalog: Catalog,
                                                    zh: dict[str, Path]) -> None:
    run = _ids(catalog, zh)["judge2"]
    port = base_url.rsplit(":", 1)[1]
    attacker = f"http://{REBIND}:{port}"
    watch = Watch(browser)
    try:
        own = watch.goto(f"{base_url}/runs/{run}/samples/3")  # the real page holds a valid CSRF token
        token = watch.page.locator('input[name="csrf"]').first.get_attribute("value")
        assert own.status == 200 and token
        refused = watch.page.goto(f"{attacker}/runs/{run}/samples/3")
        assert refused.status == 421 and "csrf" not in watch.page.content()
        # The attacker's own page, now served from the rebound name: its same-origin requests reach the server.
        watch.page.route(f"{attacker}/attack.html", lambda route: route.fulfill(
            status=200, content_type="text/html", body="<!doctype html><title>attack</title>"))
        watch.page.goto(f"{attacker}/attack.html")
        results = watch.page.evaluate("""async ([run, token]) => {
          const get = await fetch('/runs/' + run + '/samples/3');
          const body = new URLSearchParams({csrf: token, target: 'run', target_id: run, case_id: 'zh002',
                                            action: 'exclude', reason: 'rebinding', who: 'attacker', back: '/'});
          const post = await fetch('/curate', {method: 'POST', body: body, redirect: 'manual'});
          return [get.status, (await get.text()).includes('csrf'), post.status];
        }""", [run, token])
        assert results == [421, False, 421]
        assert not (zh["judge2"] / CURATION_DB).exists()  # nothing was written
    finally:
        watch.close()


def test_indexing_page_then_the_browser(base_url: str, catalog: Catalog, zh: dict[str, Path]) -> None:
    """A run seen for the first time answers at once (the index is built in the background)."""
    import httpx

    run = _ids(catalog, zh)["recovery"]
    page = httpx.get(f"{base_url}/runs/{run}/samples", timeout=30)
    assert page.status_code in (200, 202)
    assert re.search(r"Indexing|samples match", page.text)

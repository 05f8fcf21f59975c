"""The review tool in Debian's Chromium (Playwright; never a browser Playwright downloads) at a laptop's 1280x900
and a phone's 390x844, over the review workspace (`web_support_review`: runs `uxbench run` wrote with scripted
providers, Chinese conversations, long run ids, a mining output, a simulated-user run, two studies):

- no main page's document is wider than the viewport (nothing scrolls sideways);
- the pairwise and pointwise annotator pages show the reply (both replies) and every choice without scrolling on
  the laptop, and keep the choices on the phone's screen;
- each keyboard shortcut records its choice (a, b, t, x, s; g, b, s), and the arrows move between items;
- a screenshot of every main page at both sizes goes to $UXBENCH_SCREENSHOTS (or a temporary directory).

Skipped without the web extra, without playwright (the CI's second stage installs it) or without chromium."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extra_skip import require_extra

require_extra("web")
try:
    import playwright.sync_api  # noqa: F401
except ImportError:
    pytest.skip("needs playwright (pip install playwright; it drives Debian's chromium, no browser download)",
                allow_module_level=True)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("needs Debian's chromium (apt-get install chromium)", allow_module_level=True)

from browser_support import chromium, screenshot_dir, serving  # noqa: E402

from uxbench.human.study import Study  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import Catalog, build_catalog  # noqa: E402
from uxbench.web.site import build_site  # noqa: E402

SIZES = {"laptop": (1280, 900), "phone": (390, 844)}


@pytest.fixture(scope="module")
def catalog(review: dict[str, Path]) -> Catalog:
    return build_catalog([str(review["t1"].parent), str(review["mine"])])


@pytest.fixture(scope="module")
def base_url(catalog: Catalog, review: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    study = Study.open(review["pointwise"])
    with serving(create_app(catalog, index_dir=tmp_path_factory.mktemp("bridx"), study=study)) as url:
        yield url


@pytest.fixture(scope="module")
def pairwise_url(review: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`uxbench human serve` of the pairwise study: the annotator pages only."""
    app = create_app(Catalog(), index_dir=tmp_path_factory.mktemp("bpidx"), study=Study.open(review["pairwise"]),
                     annotator_only=True)
    with serving(app) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium(str(CHROMIUM)) as launched:
        yield launched


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return screenshot_dir(tmp_path_factory.mktemp("screenshots"))


class Page:
    """A page of the given size that records console errors, page errors and dialogs."""

    def __init__(self, browser: Any, size: tuple[int, int]) -> None:
        self.context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"{m.type}: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("dialog", lambda d: (self.errors.append(f"dialog: {d.message}"), d.dismiss()))

    def goto(self, url: str) -> Any:
        for _ in range(60):  # a run's first visit may show its index being built (202, reloading itself)
            response = self.page.goto(url)
            self.page.wait_for_load_state("load")
            if response.status != 202:
                return response
            self.page.wait_for_timeout(500)
        raise AssertionError(f"{url} kept indexing")

    def overflow(self) -> dict[str, Any]:
        """The document's width against the viewport's, and the elements reaching past its right edge."""
        found: dict[str, Any] = self.page.evaluate("""() => {
          const doc = document.documentElement;
          const wide = [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > doc.clientWidth + 1 && !e.closest('table, .context'))
            .slice(0, 5).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + (e.getAttribute('class') || '')
                                  + ' ' + Math.round(e.getBoundingClientRect().right));
          return {scroll: doc.scrollWidth, client: doc.clientWidth, wide: wide};
        }""")
        return found

    def box(self, selector: str) -> dict[str, float]:
        found: dict[str, float] = self.page.locator(selector).first.bounding_box()
        assert found, selector
        return found

    def close(self) -> None:
        self.context.close()


def _pages(catalog: Catalog, review: dict[str, Path]) -> dict[str, str]:
    ids = {e.path: rid for rid, e in catalog.runs.items()}
    t1, t2, t3, t1b = ids[review["t1"]], ids[review["t2a"]], ids[review["t3"]], ids[review["t1b"]]
    (mine,) = catalog.mines
    (sim,) = catalog.sims
    session = next(iter(catalog.sims[sim].store().iter_sessions())).session_id
    study = Study.open(review["pointwise"])
    return {"start": "/", "run-task1": f"/runs/{t1}", "run-task2": f"/runs/{t2}", "run-task3": f"/runs/{t3}",
            "samples": f"/runs/{t1}/samples?q=天气&sort=confidence&dir=desc", "sample-task1": f"/runs/{t1}/samples/5",
            "sample-task2": f"/runs/{t2}/samples/2", "compare": f"/compare?a={t1}&b={t1b}",
            "compare-task2": f"/compare?a={t2}&b={ids[review['t2b']]}", "compare-form": "/compare",
            "mining": f"/mines/{mine}", "mining-turns": f"/mines/{mine}/turns",
            "mined-cases": f"/mines/{mine}/cases?task=recovery", "curation": f"/curation/run/{t1}",
            "sim-run": f"/sims/{sim}", "sim-session": f"/sims/{sim}/sessions/{session}",
            "annotator-pointwise": f"/h/{study.annotators()[0].token}"}


@pytest.mark.parametrize("size", list(SIZES))
def test_no_main_page_is_wider_than_the_viewport(browser: Any, base_url: str, pairwise_url: str, catalog: Catalog,
                                                 review: dict[str, Path], shots: Path, size: str) -> None:
    page = Page(browser, SIZES[size])
    pages = {name: base_url + path for name, path in _pages(catalog, review).items()}
    pairwise = Study.open(review["pairwise"])
    pages["annotator-pairwise"] = f"{pairwise_url}/h/{pairwise.annotators()[1].token}"
    try:
        for name, url in pages.items():
            response = page.goto(url)
            assert response.status == 200, (name, response.status)
            found = page.overflow()
            assert found["scroll"] <= found["client"] == SIZES[size][0], (name, size, found)
            assert not found["wide"], (name, size, found["wide"])
            if name == "start":
                lines = page.page.evaluate("""() => [...document.querySelectorAll('#runs td:first-child a')].map(
                  a => Math.round(a.getBoundingClientRect().height / parseFloat(getComputedStyle(a).lineHeight)))""")
                assert lines and max(lines) <= 3, (size, lines)  # a run id takes three lines at most
                badges = page.page.evaluate("""() => [...document.querySelectorAll('.badge.demo')].map(
                  b => [b.textContent, b.getClientRects().length, b.scrollWidth <= b.clientWidth])""")
                assert badges and all(rects == 1 and whole for _, rects, whole in badges), badges  # DEMO whole
            page.page.screenshot(path=str(shots / f"review-{name}-{size}.png"), full_page=True)
        assert not page.errors, page.errors
    finally:
        page.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_the_static_site_fits(browser: Any, review: dict[str, Path], tmp_path: Path, shots: Path, size: str) -> None:
    index = build_site([review["t1"].parent], tmp_path / "site", n_boot=200)
    page = Page(browser, SIZES[size])
    try:
        page.goto(index.as_uri())
        found = page.overflow()
        assert found["scroll"] <= found["client"] and not found["wide"], found
        page.page.screenshot(path=str(shots / f"review-site-{size}.png"), full_page=True)
        assert not page.errors, page.errors
    finally:
        page.close()


def _in_view(page: Page, selector: str, height: int, min_visible: float = 40) -> None:
    box = page.box(selector)
    visible = min(box["y"] + box["height"], height) - max(box["y"], 0)
    assert visible >= min(min_visible, box["height"]), (selector, box, height)


def test_the_pairwise_page_needs_no_scrolling_on_a_laptop(browser: Any, pairwise_url: str,
                                                          review: dict[str, Path]) -> None:
    study = Study.open(review["pairwise"])
    annotator = study.annotators()[0]
    width, height = SIZES["laptop"]
    page = Page(browser, SIZES["laptop"])
    try:
        for item in study.order(annotator)[:3]:
            page.goto(f"{pairwise_url}/h/{annotator.token}?item={item}")
            assert page.page.evaluate("window.scrollY") == 0
            shown = study.shown(item) or {}
            assert page.page.locator(".context .turn").count() == len(shown["a"]) - 1  # the conversation once
            assert page.page.locator(".turn").count() == len(shown["a"]) + 1
            for side in ("A", "B"):
                _in_view(page, f"#reply-{side} .reply", height)
                assert page.box(f"#reply-{side}")["x"] + page.box(f"#reply-{side}")["width"] <= width
            choices = page.box("#choices")
            assert choices["y"] >= 0 and choices["y"] + choices["height"] <= height, choices
            for choice in ("A", "B", "tie", "both_bad", "skip"):
                _in_view(page, f"#choice-{choice}", height)
            last = page.box(".context .turn:last-child")  # the latest turn of the conversation is in view
            assert last["y"] + last["height"] <= page.box(".context")["y"] + page.box(".context")["height"] + 1
        assert not page.errors, page.errors
    finally:
        page.close()


def test_the_pointwise_page_needs_no_scrolling_on_a_laptop_and_keeps_the_choices_on_a_phone(
        browser: Any, base_url: str, review: dict[str, Path]) -> None:
    study = Study.open(review["pointwise"])
    annotator = study.annotators()[2]
    for size, (_, height) in SIZES.items():
        page = Page(browser, SIZES[size])
        try:
            page.goto(f"{base_url}/h/{annotator.token}")
            if size == "laptop":
                _in_view(page, "#reply .reply", height)
            for choice in ("good", "bad", "skip"):
                _in_view(page, f"#choice-{choice}", height)  # on the phone too: the bar stays at the bottom
            assert not page.errors, page.errors
        finally:
            page.close()


def test_every_keyboard_shortcut_records_its_choice(browser: Any, base_url: str, pairwise_url: str,
                                                    review: dict[str, Path], tmp_path: Path) -> None:
    pairwise = Study.open(review["pairwise"])
    annotator = pairwise.annotators()[1]
    order = pairwise.order(annotator)
    page = Page(browser, SIZES["laptop"])
    try:
        page.goto(f"{pairwise_url}/h/{annotator.token}")
        for k, (key, choice) in enumerate((("a", "A"), ("b", "B"), ("t", "tie"), ("x", "both_bad"), ("s", "skip"))):
            assert page.page.locator('input[name="item_id"]').get_attribute("value") == order[k]
            if k == 0:  # the raw-text switch, once ticked, holds the focus: the keys still work
                page.page.locator("#reply-A .raw-switch input").check()
            with page.page.expect_navigation():
                page.page.keyboard.press(key)
            assert pairwise.judgments(annotator.token)[(annotator.token, order[k])] == choice, key
        with page.page.expect_navigation():
            page.page.keyboard.press("ArrowLeft")  # back to the item just judged
        assert page.page.locator('input[name="item_id"]').get_attribute("value") == order[4]
        assert page.page.get_attribute("#current", "data-choice") == "skip"
        with page.page.expect_navigation():
            page.page.keyboard.press("Shift+T")  # an upper-case key is the same key
        assert pairwise.judgments(annotator.token)[(annotator.token, order[4])] == "tie"
        page.goto(f"{pairwise_url}/h/{annotator.token}?item={order[0]}")
        page.page.keyboard.press("Control+b")  # with a modifier: the browser's, not a choice
        page.page.keyboard.press("q")  # no such key: nothing
        page.page.wait_for_timeout(300)
        assert pairwise.judgments(annotator.token)[(annotator.token, order[0])] == "A"
        with page.page.expect_navigation():
            page.page.keyboard.press("ArrowRight")
        assert page.page.locator('input[name="item_id"]').get_attribute("value") == order[1]
        assert not page.errors, page.errors
    finally:
        page.close()
    pointwise = Study.create(tmp_path / "keys", str(review["t1"]), n=3, annotators=1)
    annotator = pointwise.annotators()[0]
    order = pointwise.order(annotator)
    page = Page(browser, SIZES["laptop"])
    try:
        with serving(create_app(Catalog(), index_dir=tmp_path / "idx", study=pointwise, annotator_only=True)) as url:
            page.goto(f"{url}/h/{annotator.token}")
            for k, (key, choice) in enumerate((("g", "good"), ("b", "bad"), ("s", "skip"))):
                with page.page.expect_navigation():
                    page.page.keyboard.press(key)
                assert pointwise.judgments(annotator.token)[(annotator.token, order[k])] == choice, key
            assert "3 / 3" in page.page.inner_text("#progress") or "3 of 3" in page.page.inner_text("#progress")
        assert not page.errors, page.errors
    finally:
        page.close()


def test_a_pair_of_two_conversations_needs_no_scrolling_on_a_laptop(browser: Any, review: dict[str, Path],
                                                                     tmp_path: Path, shots: Path) -> None:
    study = Study.create(tmp_path / "pairs", str(review["t1"]), n=3, annotators=1, mode="pairwise")
    annotator = study.annotators()[0]
    _, height = SIZES["laptop"]
    page = Page(browser, SIZES["laptop"])
    try:
        with serving(create_app(Catalog(), index_dir=tmp_path / "idx", study=study, annotator_only=True)) as url:
            for item in study.order(annotator):
                page.goto(f"{url}/h/{annotator.token}?item={item}")
                assert page.page.locator(".annotate.separate .context").count() == 2
                for side in ("A", "B"):
                    _in_view(page, f"#reply-{side} .reply", height)
                choices = page.box("#choices")
                assert choices["y"] + choices["height"] <= height, choices
            page.page.screenshot(path=str(shots / "review-annotator-pairwise-two-conversations-laptop.png"))
        assert not page.errors, page.errors
    finally:
        page.close()

"""The browser's search, sort and neighbours over a whole run, the page shown while a run is indexed, and the
smaller faults: curation of a case id the run does not have, a run compared with itself, a sample id that is
not a number, an unknown sort, an empty curation page; the Task 3 run page's strategies; `human results`'
kappa CI and majority ties."""

from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("web")

from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402
from web_support import LOOPBACK  # noqa: E402
from web_support_zh import write_recovery_run_zh  # noqa: E402

from uxbench.cli.main import app as cli  # noqa: E402
from uxbench.human.study import Study  # noqa: E402
from uxbench.runs.curation import CURATION_DB, Curation  # noqa: E402
from uxbench.runs.store import RunStore  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import build_catalog  # noqa: E402
from uxbench.web.sample_index import SampleIndex  # noqa: E402


@pytest.fixture
def runs(served: dict[str, Path], tmp_path: Path) -> Path:
    shutil.copytree(served["judge"].parent, tmp_path / "runs")
    shutil.copytree(served["mine"], tmp_path / "mined")
    return tmp_path


def _client(root: Path) -> TestClient:
    catalog = build_catalog([str(root / "runs"), str(root / "mined")])
    return TestClient(create_app(catalog, index_dir=root / "idx"), base_url=LOOPBACK)


def _rows(html: str) -> list[str]:
    from html import unescape

    return [unescape(c) for c in re.findall(r'<tr data-case="([^"]*)"', html)]


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found
    return found.group(1)


def test_search_of_text_and_of_the_judges_output_are_apart(runs: Path) -> None:
    client = _client(runs)
    base = "/runs/t1-alpha/samples"
    assert _rows(client.get(base, params={"q": "verdict"}).text) == []  # the model's (judge's) output: not text
    with RunStore(runs / "runs" / "t1-alpha") as store:
        said_bad = sorted(r.case_id for r in store.iter_records() if (r.raw_output or "") == "verdict: bad")
    assert sorted(_rows(client.get(base, params={"jq": "verdict: bad", "per_page": 200}).text)) == said_bad
    html = client.get(base, params={"q": "zebrafish"}).text
    assert _rows(html) == ["c07"] and 'class="snippet match"' in html and "zebrafish" in html
    judged = client.get("/runs/t2-alpha/samples", params={"judge": "pointwise-openai-judge-x", "jq": "verdict bad",
                                                         "per_page": 200}).text
    with RunStore(runs / "runs" / "t2-alpha") as store:
        bad = sorted(s.case_id for s in store.iter_scores("pointwise-openai-judge-x") if s.label == "bad")
    assert sorted(_rows(judged)) == bad


def test_sorting_covers_the_whole_run_and_the_sample_page_follows_it(runs: Path) -> None:
    client = _client(runs)
    base = "/runs/t1-alpha/samples"
    html = client.get(base, params={"sort": "case", "dir": "desc", "per_page": 7}).text
    with RunStore(runs / "runs" / "t1-alpha") as store:
        ids = sorted((r.case_id for r in store.iter_records()), reverse=True)
    assert _rows(html) == ids[:7]
    assert "sort=case&amp;dir=desc" in html  # the pager keeps the sort
    assert client.get(base, params={"sort": "nope"}).status_code == 400
    # gold=bad, data order: sample 2 (c01) is first; its next is sample 4 (c03), which has no previous but 2
    page = client.get(f"{base}/4", params={"gold": "bad"}).text
    assert 'id="prev-sample"' in page and f"{base}/2?gold=bad" in page and f"{base}/6?gold=bad" in page
    assert "sample 2 of 15" in page and 'href="#under-test"' in page and 'id="under-test"' in page
    first = client.get(f"{base}/2", params={"gold": "bad"}).text
    assert 'id="prev-sample"' not in first and "sample 1 of 15" in first


def test_a_run_not_indexed_yet_shows_the_build_then_the_page(runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real = SampleIndex._build

    def slow(self: SampleIndex, fingerprint: str) -> None:
        release.wait(30)
        real(self, fingerprint)

    monkeypatch.setattr(SampleIndex, "_build", slow)
    import uxbench.web.context as context

    monkeypatch.setattr(context, "SMALL_RUN", 0)  # this run of 30 samples counts as a large one
    catalog = build_catalog([str(runs / "runs")])
    app = create_app(catalog, index_dir=runs / "idx")
    app.state.view.index_wait_s = 0.0
    client = TestClient(app, base_url=LOOPBACK)
    building = client.get("/runs/t1-alpha/samples")
    assert building.status_code == 202 and "Indexing the samples of t1-alpha" in building.text
    assert '<meta http-equiv="refresh" content="2">' in building.text and building.headers["retry-after"] == "2"
    assert client.get("/runs/t1-alpha").status_code == 200  # the run page's figures do not wait for it
    release.set()
    index = app.state.view.indexes["t1-alpha"]
    assert index._thread is not None
    index._thread.join(30)
    assert client.get("/runs/t1-alpha/samples").status_code == 200


def test_smaller_faults_get_clear_answers(runs: Path) -> None:
    client = _client(runs)
    empty = client.get("/curation/run/t1-beta").text
    assert "No case has been curated here yet" in empty and "<table" not in empty
    page = client.get("/runs/t1-beta/samples/3").text
    form = {"csrf": _csrf(page), "target": "run", "target_id": "t1-beta", "case_id": "not-a-case",
            "action": "exclude", "reason": "typo", "who": "me", "back": "/"}
    refused = client.post("/curate", data=form)
    assert refused.status_code == 400 and "no case" in refused.text
    assert not (runs / "runs" / "t1-beta" / CURATION_DB).exists()
    turns = client.get("/mines/mine-mined/turns").text
    key = re.findall(r'data-key="([^"]+)"', turns)[0]
    for case_id, status in ((key, 303), (key.split("#")[0] + "#99", 400), ("nope", 400)):
        done = client.post("/curate", data={**form, "target": "mine", "target_id": "mine-mined",
                                            "case_id": case_id}, follow_redirects=False)
        assert done.status_code == status, case_id
    assert set(Curation(runs / "mined" / CURATION_DB).states()) == {key}
    same = client.get("/compare", params={"a": "t1-alpha", "b": "t1-alpha"})
    assert same.status_code == 400 and "the same run" in same.text
    for path in ("/runs/t1-alpha/samples/abc", "/runs/t1-alpha/samples/1.5"):
        response = client.get(path)
        assert response.status_code == 404 and response.headers["content-type"].startswith("text/html"), path
        assert "no such sample" in response.text and '"detail"' not in response.text


def test_task3_run_page_shows_the_recovery_rate_per_strategy(tmp_path: Path) -> None:
    run = write_recovery_run_zh(tmp_path / "runs" / "t3", "openai:m")
    with RunStore(run) as store:
        summary = store.read_summary() or {}
    block = summary["recovery_strategies"]["classifiers"]["rules"]
    client = TestClient(create_app(build_catalog([str(run)]), index_dir=tmp_path / "idx"), base_url=LOOPBACK)
    html = client.get("/runs/t3").text
    assert 'id="strategies"' in html
    judge = summary["primary_judge"]
    for strategy, cell in block["recovery_rate"][judge].items():
        if cell["n_scored"]:
            row = re.search(rf'<tr data-strategy="{strategy}">(.*?)</tr>', html, re.S)
            assert row and f"(n={cell['n_scored']})" in row.group(1), strategy
    assert "Wilson 95% intervals" in html


def test_human_results_give_kappa_with_its_ci_and_count_ties(served: dict[str, Path], tmp_path: Path) -> None:
    study = Study.create(tmp_path / "s", str(served["judge"]), n=6, annotators=2)
    a, b = study.annotators()
    items = study.items()
    for k, item in enumerate(items):
        study.judge(a, item["item_id"], item["label"])
        study.judge(b, item["item_id"], item["label"] if k < 4 else ("good" if item["label"] == "bad" else "bad"))
    result = CliRunner().invoke(cli, ["human", "results", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "Human majority: 4 of 6 judged items; 2 tied (no majority)" in result.output
    assert re.search(r"Cohen's kappa (-?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\] \(n=4|n/a \(n=4)", result.output), \
        result.output


def test_the_mining_funnel_has_one_unit_per_panel_and_shares_carry_k_and_n(runs: Path) -> None:
    from uxbench.mining.report import build_report
    from uxbench.report.funnel import funnel_panels

    html = _client(runs).get("/mines/mine-mined").text
    report = build_report(runs / "mined")
    panels = funnel_panels(report.stage_counts)
    shown = re.findall(r'<table class="funnel" data-unit="([^"]+)">(.*?)</table>', html, re.S)
    assert [unit for unit, _ in shown] == [p.unit for p in panels] and {"conversations", "replies"} <= \
        {p.unit for p in panels}
    for (_, body), panel in zip(shown, panels, strict=True):
        rows = re.findall(r'<tr><th>([^<]+)</th><td class="num">([\d,]+)</td>', body)
        assert [(label, int(n.replace(",", ""))) for label, n in rows] == panel.steps
        counts = [n for _, n in panel.steps]
        assert counts == sorted(counts, reverse=True)  # a funnel never goes back up
    n_chains = sum(o.count for o in report.recovery)
    for o in report.recovery:
        assert f"{o.count} / {n_chains}" in html
    assert re.search(r'id="patterns".*?\d+ / \d+', html, re.S)


def test_verbatim_and_markdown_rendering() -> None:
    from uxbench.web.render import markdown_html, text_lang, verbatim_html

    text = "line one\n# not a heading\n    indented <b>bold</b> https://example.org"
    shown = str(verbatim_html(text))
    assert shown == "line one\n# not a heading\n    indented &lt;b&gt;bold&lt;/b&gt; https://example.org"
    assert "<br" in str(markdown_html("first\nsecond")) and "<h1>" in str(markdown_html("# title"))
    assert text_lang("你好") == "zh" and text_lang("こんにちは") == "ja" and text_lang("hello") == ""

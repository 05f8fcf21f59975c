"""Every route of `uxbench view` through FastAPI's TestClient (a real ASGI app over real run directories):
what each page shows equals what the run's store and summary say; filters, search and pages; curation with
its audit trail; the security rules (escaping, CSRF, no state change on GET, ids not paths)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from extra_skip import require_extra

require_extra("web")

from fastapi.testclient import TestClient  # noqa: E402
from web_support import LOOPBACK, XSS_CASE  # noqa: E402

from uxbench.metrics.proportions import DEFAULT_N_BOOT  # noqa: E402
from uxbench.runs.curation import CURATION_DB, Curation  # noqa: E402
from uxbench.runs.store import RunStore  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import build_catalog  # noqa: E402
from uxbench.web.render import cell_text  # noqa: E402


@pytest.fixture(scope="module")
def client(served: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    catalog = build_catalog([str(served["judge"].parent), str(served["mine"])])
    return TestClient(create_app(catalog, index_dir=tmp_path_factory.mktemp("index")), base_url=LOOPBACK)


def _summary(path: Path) -> dict[str, Any]:
    with RunStore(path) as store:
        return store.read_summary() or {}


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, "no CSRF token in the page"
    return found.group(1)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _no_live_payload(html: str) -> None:
    """Parsed as a browser would: no script element but the package's own, no event handler attribute, no
    javascript: URL (the payloads are left as text)."""
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        names = {name.lower() for name, _ in attrs}
        assert not any(name.startswith("on") for name in names), (tag, attrs)
        assert tag != "script" or dict(attrs).get("src") == "/static/app.js", (tag, attrs)
        for name, value in attrs:
            if name in ("href", "src", "action", "formaction"):
                assert not (value or "").strip().lower().startswith("javascript:"), (tag, attrs)


def test_index_lists_every_run_with_its_summary_figure_and_the_leaderboard(client: TestClient,
                                                                           served: dict[str, Path]) -> None:
    html = client.get("/").text
    for key in ("judge", "judge2", "eval"):
        assert f'href="/runs/{served[key].name}"' in html
    avg = _summary(served["judge"])["metrics"]["all"]["avg_acc"]
    assert cell_text(avg) in html
    assert "Task 1, UX Judge" in html and "Task 2, UX Eval" in html
    assert 'href="/mines/mine-mined"' in html


def test_run_page_task1_numbers_equal_the_summary(client: TestClient, served: dict[str, Path]) -> None:
    summary = _summary(served["judge"])
    html = client.get(f"/runs/{served['judge'].name}").text
    metrics = summary["metrics"]
    for key in ("avg_acc", "good_acc", "bad_acc", "accuracy", "bad_f1", "positive_bias"):
        row = re.search(rf'<tr data-metric="{key}">(.*?)</tr>', html, re.S)
        assert row, key
        assert cell_text(metrics["all"][key]) in row.group(1) and cell_text(metrics["valid_only"][key]) in row.group(1)
    assert f"valid answers only (n = {metrics['valid_only']['accuracy']['n']})" in html
    for scenario, r in metrics["breakdowns"]["scenario"].items():
        assert f"<td>{scenario}</td>" in html and cell_text(r["avg_acc"]) in html
    assert "Confusion matrix" in html and "Reliability of p(good)" in html  # scores are probabilities here


def test_run_page_task2_shows_every_judge_with_both_denominators(client: TestClient, served: dict[str, Path]) -> None:
    summary = _summary(served["eval"])
    html = client.get(f"/runs/{served['eval'].name}").text
    for key, info in summary["judges"].items():
        m = info["metrics"]
        block = html[html.index(f'data-judge="{key}"'):]
        assert cell_text(m["good_rate_scored_only"]) in block[:2000]
        assert cell_text(m["good_rate_all_cases"]) in block[:2000]
    assert "p(good) histogram" in html  # the GRM judge


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr data-case="([^"]*)"', html)


def test_sample_browser_filters_return_what_the_records_say(client: TestClient, served: dict[str, Path]) -> None:
    with RunStore(served["judge"]) as store:
        records = list(store.iter_records())
    base = f"/runs/{served['judge'].name}/samples"
    bad = {r.case_id for r in records if r.gold == "bad"}
    html = client.get(base, params={"gold": "bad", "per_page": 200}).text
    assert len(_rows(html)) == len(bad) and f"<b>{len(bad)}</b> samples match" in html
    wrong = [r for r in records if r.prediction != r.gold]
    assert f"<b>{len(wrong)}</b> samples match" in client.get(base, params={"correct": "no"}).text
    unparsed = [r for r in records if r.prediction is None]
    assert f"<b>{len(unparsed)}</b> samples match" in client.get(base, params={"verdict": "none"}).text
    scen = [r for r in records if r.strata["scenario"] == "emotional_support" and r.strata["difficulty"] == "hard"]
    html = client.get(base, params={"scenario": "emotional_support", "difficulty": "hard"}).text
    assert f"<b>{len(scen)}</b> samples match" in html
    html = client.get(base, params={"q": "zebrafish"}).text  # full-text search over the case text
    assert _rows(html) == ["c07"]
    html = client.get(base, params={"q": "number 1"}).text  # substring: 'number 1', 'number 10'..'number 19'
    assert len(_rows(html)) == 11


def test_sample_browser_pages_server_side(client: TestClient, served: dict[str, Path]) -> None:
    base = f"/runs/{served['judge'].name}/samples"
    first = _rows(client.get(base, params={"per_page": 7}).text)
    second = _rows(client.get(base, params={"per_page": 7, "page": 2}).text)
    last = client.get(base, params={"per_page": 7, "page": 99}).text
    assert len(first) == len(second) == 7 and not set(first) & set(second)
    assert "page 5 of 5" in last and len(_rows(last)) == 2
    assert client.get(base, params={"page": "x"}).status_code == 400


def test_task2_browser_filters_by_the_chosen_judges_verdict(client: TestClient, served: dict[str, Path]) -> None:
    summary = _summary(served["eval"])
    base = f"/runs/{served['eval'].name}/samples"
    for key in summary["judges"]:
        with RunStore(served["eval"]) as store:
            good = [s for s in store.iter_scores(key) if s.label == "good"]
        html = client.get(base, params={"judge": key, "verdict": "good"}).text
        assert f"<b>{len(good)}</b> samples match" in html


def test_sample_page_renders_turns_escaped_with_the_raw_output(client: TestClient, served: dict[str, Path]) -> None:
    html = client.get(f"/runs/{served['judge'].name}/samples/4").text  # case 3 carries the payloads
    assert "&lt;script&gt;alert(&#34;xss-text&#34;)&lt;/script&gt;" in html or "&lt;script&gt;" in html
    assert "&lt;/div&gt;&lt;script&gt;alert(&#34;xss-output&#34;)" in html  # the raw output, verbatim and escaped
    assert "<strong>hi</strong>" in html  # Markdown is rendered
    _no_live_payload(html)
    html = client.get(f"/runs/{served['judge'].name}/samples/6").text  # the case id payload
    assert XSS_CASE not in html and "case-&lt;img" in html
    _no_live_payload(html)
    assert client.get(f"/runs/{served['judge'].name}/samples/999").status_code == 404


def test_runs_are_addressed_by_id_never_by_path(client: TestClient, served: dict[str, Path]) -> None:
    for bad in ("/runs/..%2F..%2Fetc", f"/runs/{served['judge']}", "/runs/%2Fetc%2Fpasswd", "/mines/%2E%2E",
                "/curation/run/..%2Ft1-alpha"):
        assert client.get(bad).status_code == 404, bad


def test_compare_puts_disagreements_first(client: TestClient, served: dict[str, Path]) -> None:
    a, b = served["judge"].name, served["judge2"].name
    html = client.get("/compare", params={"a": a, "b": b}).text
    differ = [i for i in range(30) if i % 3 == 0]  # alpha wrong on every third case (case 1 unparsed in both)
    assert f"<b>{len(differ)}</b> with different verdicts" in html
    cards = re.findall(r'<div class="card( differ)?" data-case="([^"]*)">', html)
    assert [bool(flag) for flag, _ in cards][:len(differ)] == [True] * len(differ)
    assert "McNemar" in html
    _no_live_payload(html)
    assert client.get("/compare", params={"a": a, "b": served["eval"].name}).status_code == 400
    assert client.get("/compare").status_code == 200


def test_mining_page_and_flagged_turns_with_text_and_evidence(client: TestClient, served: dict[str, Path]) -> None:
    html = client.get("/mines/mine-mined").text
    assert "Stage funnel" in html and "log rows)" in html and "Recovery outcomes" in html
    turns = client.get("/mines/mine-mined/turns").text
    assert "<b>4</b> turns flagged" in turns
    assert "Open the settings and choose the network page" in turns  # the reply's text, from the sessions
    assert "thumbs-down" in turns and "complaint" in turns  # the evidence
    assert "&lt;script&gt;" in turns
    _no_live_payload(turns)
    assert client.get("/mines/mine-mined/turns", params={"signal": "nope"}).status_code == 400


def test_curation_needs_post_and_csrf_and_keeps_an_audit_trail(client: TestClient, served: dict[str, Path]) -> None:
    run = served["judge2"].name
    page = client.get(f"/runs/{run}/samples/3").text
    form = {"target": "run", "target_id": run, "case_id": "c02", "action": "exclude", "reason": "label is wrong",
            "who": "tester", "back": f"/runs/{run}/samples/3"}
    assert client.post("/curate", data=form).status_code == 403  # no token
    assert client.post("/curate", data={**form, "csrf": "0" * 64}).status_code == 403
    assert client.get("/curate", params={**form, "csrf": _csrf(page)}).status_code == 405  # no state change on GET
    assert not (served["judge2"] / CURATION_DB).exists()
    done = client.post("/curate", data={**form, "csrf": _csrf(page)}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == f"/runs/{run}/samples/3"
    flagged = client.post("/curate", data={**form, "case_id": "c04", "action": "flag", "reason": "odd",
                                           "back": "https://evil.example/", "csrf": _csrf(page)},
                          follow_redirects=False)
    assert flagged.headers["location"] == "/"
    curation = Curation(served["judge2"] / CURATION_DB)
    assert curation.excluded() == {"c02"} and set(curation.states()) == {"c02", "c04"}
    assert [(e.case_id, e.action, e.reason, e.who) for e in curation.events()] == [
        ("c02", "exclude", "label is wrong", "tester"), ("c04", "flag", "odd", "tester")]
    audit = client.get(f"/curation/run/{run}").text
    assert "label is wrong" in audit and "tester" in audit
    assert "exclude" in client.get(f"/runs/{run}/samples", params={"q": "number 2"}).text
    base = f"/runs/{run}/samples"
    assert _rows(client.get(base, params={"curation": "excluded"}).text) == ["c02"]
    assert _rows(client.get(base, params={"curation": "flagged"}).text) == ["c04"]
    assert _rows(client.get(base, params={"curation": "marked"}).text) == ["c02", "c04"]
    unmarked = _rows(client.get(base, params={"curation": "unmarked", "per_page": 200}).text)
    assert len(unmarked) == 28 and not {"c02", "c04"} & set(unmarked)
    assert client.get(base, params={"curation": "nope"}).status_code == 400
    assert client.post("/curate", data={**form, "reason": " ", "csrf": _csrf(page)}).status_code == 400


def test_security_headers_and_static_files_from_the_package(client: TestClient) -> None:
    response = client.get("/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert client.get("/static/app.js").status_code == 200
    assert "http" not in re.sub(r'https?://[^"]*example', "", client.get("/").text.split("<main>")[0])


def test_charts_from_report_plots_are_served_as_svg_images(client: TestClient, served: dict[str, Path]) -> None:
    require_extra("plot")
    run = served["judge"].name
    html = client.get(f"/runs/{run}").text
    assert f'src="/runs/{run}/plots/scenario.svg"' in html and f'src="/runs/{run}/plots/reliability.svg"' in html
    for url in (f"/runs/{run}/plots/scenario.svg", f"/runs/{run}/plots/reliability.svg",
                f"/runs/{served['eval'].name}/plots/scenario.svg", "/mines/mine-mined/plots/funnel.svg",
                "/mines/mine-mined/plots/signals.svg"):
        response = client.get(url)
        assert response.status_code == 200 and response.headers["content-type"] == "image/svg+xml", url
        assert b"<svg" in response.content and b"<script" not in response.content
    assert client.get(f"/runs/{run}/plots/nope.svg").status_code == 404
    index = client.get("/").text  # two Task 1 models with release dates: the scaling chart of report.plot_data
    assert 'src="/plots/scaling/judge.svg"' in index and 'src="/plots/scaling/eval.svg"' not in index
    assert client.get("/plots/scaling/judge.svg").headers["content-type"] == "image/svg+xml"
    assert client.get("/plots/scaling/eval.svg").status_code == 404  # one model only
    assert "Reliability of p(good)" in html and "ECE" in html


def test_directory_names_with_markup_are_shown_as_text(served: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    name = 'run-<img src=x onerror=alert("xss-dir")>'
    shutil.copytree(served["judge2"], tmp_path / name)
    mined = tmp_path / 'mined-<script>alert("xss-mine")</script>'
    shutil.copytree(served["mine"], mined)
    catalog = build_catalog([str(tmp_path / name), str(mined)])
    client = TestClient(create_app(catalog, index_dir=tmp_path / "idx"), base_url=LOOPBACK)
    (run_id,) = catalog.runs
    (mine_id,) = catalog.mines
    assert re.fullmatch(r"[A-Za-z0-9._-]+", run_id) and re.fullmatch(r"[A-Za-z0-9._-]+", mine_id)
    for url in ("/", f"/runs/{run_id}", f"/runs/{run_id}/samples", f"/runs/{run_id}/samples/1",
                f"/mines/{mine_id}", f"/mines/{mine_id}/turns", f"/curation/mine/{mine_id}"):
        response = client.get(url)
        assert response.status_code == 200, url
        _no_live_payload(response.text)
    assert "&lt;script&gt;alert(&#34;xss-mine&#34;)&lt;/script&gt;" in client.get("/").text  # the path, as text


def test_compare_of_two_task2_runs_gives_the_paired_rate_difference(served: dict[str, Path], tmp_path: Path) -> None:
    from web_support import write_eval_run

    from uxbench.metrics.ranking import paired_rate_diff

    write_eval_run(tmp_path / "runs" / "ea", "openai:model-a", {"openai:judge-x": ["good", "bad", "good"] * 4})
    write_eval_run(tmp_path / "runs" / "eb", "openai:model-b", {"openai:judge-x": ["good", "good", "bad"] * 4})
    client = TestClient(create_app(build_catalog([str(tmp_path / "runs")]), index_dir=tmp_path / "idx"),
                        base_url=LOOPBACK)
    html = client.get("/compare", params={"a": "ea", "b": "eb"}).text
    expected = paired_rate_diff([x == "good" for x in ["good", "good", "bad"] * 4],
                                [x == "good" for x in ["good", "bad", "good"] * 4], n_boot=DEFAULT_N_BOOT)
    assert "<b>8</b> with different verdicts" in html
    figure = f"= {100 * expected['diff']:+.1f} [{100 * expected['ci_low']:.1f}, {100 * expected['ci_high']:.1f}]"
    assert figure in " ".join(html.split())
    cards = re.findall(r'<div class="card( differ)?" data-case="([^"]*)">', html)
    assert [bool(flag) for flag, _ in cards] == [True] * 8 + [False] * 4
    assert "reply 1 from openai:model-a" in html and "reply 1 from openai:model-b" in html  # side by side


def test_mining_signal_rates_carry_their_counts_and_cis(client: TestClient, served: dict[str, Path]) -> None:
    from uxbench.metrics.proportions import wilson_ci
    from uxbench.mining.report import build_report
    from uxbench.web.render import pct

    report = build_report(served["mine"])
    html = client.get("/mines/mine-mined").text
    day = report.by_day[0]
    k, n = day.counts["complaint"] or (0, 0)
    low, high = wilson_ci(k, n)
    assert f"[{pct(low)}, {pct(high)}]<br>{k}/{n}" in html

"""The leaderboard of the CLI, the web view and the static site is one computation: the same ranks, ties and
paired intervals for the same comparison (one --n-boot and seed), with the method of each interval said; the
view's start page and `site build` stay up on runs that once broke the leaderboard; an unknown --judge is one
clear line with a suggestion."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("web")

from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent / "report"))
from runs_support import write_eval_run  # noqa: E402
from web_support import LOOPBACK  # noqa: E402

from uxbench.cli.main import app  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import build_catalog  # noqa: E402

JUDGE = "openai:judge-x"


def _labels(goods: list[bool]) -> list[str | None]:
    return ["good" if g else "bad" for g in goods]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("figs") / "runs"
    n = 120
    for name, model, goods in (("a", "openai:gpt-4o", [i < 72 for i in range(n)]),
                               ("m", "openai:gpt-4.1", [i % 20 < 11 for i in range(n)]),
                               ("b", "openai:gpt-4o-mini", [i < 60 for i in range(n)])):
        write_eval_run(root / name, model, ["reply"] * n, {JUDGE: _labels(goods)})
    return root


def _interval(pair: dict[str, object]) -> str:
    return f"{100 * pair['diff']:+.1f} [{100 * pair['ci_low']:.1f}, {100 * pair['ci_high']:.1f}]"  # type: ignore[operator]


def test_cli_view_and_site_show_the_same_intervals(runs: Path, tmp_path: Path) -> None:
    cli = CliRunner().invoke(app, ["leaderboard", str(runs), "--format", "json"])
    assert cli.exit_code == 0, cli.output
    board = json.loads(cli.stdout)
    assert board["n_boot"] == 2000 and board["seed"] == 0
    rows = board["tasks"]["eval"]["rows"]
    expected = [_interval(r["vs_previous"]) for r in rows if r["vs_previous"]]
    assert len(expected) == 2

    site = tmp_path / "site"
    built = CliRunner().invoke(app, ["site", "build", str(runs), "--out", str(site)])
    assert built.exit_code == 0, built.output
    published = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    site_rows = published["tasks"]["eval"]["rows"]
    assert [r["rank"] for r in site_rows] == [r["rank"] for r in rows]
    assert [r["ties_with"] for r in site_rows] == [r["ties_with"] for r in rows]
    assert published["tasks"]["eval"]["pairs"] == board["tasks"]["eval"]["pairs"]
    site_html = " ".join((site / "index.html").read_text(encoding="utf-8").split())

    client = TestClient(create_app(build_catalog([str(runs)]), index_dir=tmp_path / "idx"), base_url=LOOPBACK)
    page = client.get("/")
    assert page.status_code == 200
    view_html = " ".join(page.text.split())
    for text in expected:
        assert text in view_html and text in site_html, text
    for html in (view_html, site_html):
        assert "95% CI by Wilson" in html
        assert "differences by paired bootstrap, normal interval (2000 rounds, seed 0)" in html
        assert "Holm-adjusted" in html and "Separability:" in html


def test_view_rounds_follow_its_option(runs: Path, tmp_path: Path) -> None:
    cli = CliRunner().invoke(app, ["leaderboard", str(runs), "--format", "json", "--n-boot", "300", "--seed", "4"])
    rows = json.loads(cli.stdout)["tasks"]["eval"]["rows"]
    client = TestClient(create_app(build_catalog([str(runs)]), index_dir=tmp_path / "idx", n_boot=300, seed=4),
                        base_url=LOOPBACK)
    html = " ".join(client.get("/").text.split())
    assert all(_interval(r["vs_previous"]) in html for r in rows if r["vs_previous"])
    assert "(300 rounds, seed 4)" in html


def test_start_page_and_site_on_runs_of_one_model_under_two_judges_with_failed_scores(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    write_eval_run(root / "x" / "a", "openai:gpt-4o", ["r"] * 3, {"openai:j1": [None] * 3})
    write_eval_run(root / "y" / "a", "openai:gpt-4o", ["r"] * 3, {"openai:j2": [None] * 3})
    paths = [str(root / "x" / "a"), str(root / "y" / "a")]
    client = TestClient(create_app(build_catalog(paths), index_dir=tmp_path / "idx"), base_url=LOOPBACK)
    page = client.get("/")
    # (the labels carry <wbr> line-break opportunities after `:`, `-` and `=`)
    assert page.status_code == 200 and "openai:gpt-4o (judge=openai:j1)" in page.text.replace("<wbr>", "")
    built = CliRunner().invoke(app, ["site", "build", *paths, "--out", str(tmp_path / "site")])
    assert built.exit_code == 0, built.output


def test_an_unknown_judge_is_one_line_with_a_suggestion(runs: Path, tmp_path: Path) -> None:
    for args in (["leaderboard", str(runs), "--judge", "openai:judge-z"],
                 ["site", "build", str(runs), "--out", str(tmp_path / "s"), "--judge", "openai:judge-z"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output and "error:" in result.stderr
        assert "Did you mean 'openai:judge-x'?" in result.stderr

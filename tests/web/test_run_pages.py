"""The run pages as a reviewer reads them, over runs made by the real `uxbench run` and `uxbench sim run`:
- a Task 2 run page leads with its primary judge (the start page's figure), other judges after it;
- every run page (Task 1, Task 2, simulated users) has the run's settings and the command line that made it;
- every sample page has the judge's full prompt and its raw answer (each judge's, primary first);
- a judge that scored nothing says why (counts of unusable answers) on the start page, the run page, the
  leaderboard and the site; a simulated-user judge that never rated a reply says so, and its calls are costed."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.runs import command

LOOPBACK = "http://127.0.0.1"


def _invoke(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output


def _text(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pages") / "runs"
    eval_cmd = ["uxbench", "run", "--task", "eval", "--model", "scripted:echo", "--judge", "scripted:always-good",
                "--quiet", "--out", str(root / "eval")]
    command.set_command(eval_cmd)  # as the console script records it
    try:
        _invoke(*eval_cmd[1:])
    finally:
        command.set_command([])
    _invoke("score", str(root / "eval"), "--judge", "scripted:always-bad", "--no-primary", "--quiet")
    _invoke("run", "--task", "eval", "--model", "scripted:echo", "--judge", "scripted:echo", "--judge-mode",
            "pointwise", "--quiet", "--out", str(root / "unreadable"))
    _invoke("run", "--model", "scripted:always-good", "--strategy", "cot", "--quiet", "--out", str(root / "t1"))
    _invoke("sim", "run", "--quiet", "--model", "scripted:echo", "--simulator", "scripted:user", "--judge",
            "scripted:always-good", "--personas", "demo", "--trials", "1", "--max-turns", "2", "--n-boot", "50",
            "--out", str(root / "sim"))
    return root


@pytest.fixture(scope="module")
def client(runs: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from fastapi.testclient import TestClient

    from uxbench.web.app import create_app
    from uxbench.web.catalog import build_catalog

    return TestClient(create_app(build_catalog([str(runs)]), index_dir=tmp_path_factory.mktemp("idx")),
                      base_url=LOOPBACK)


def _id(client: Any, name: str) -> str:
    found = re.findall(rf'href="/(?:runs|sims)/({name}[^"/]*)"', client.get("/").text)
    assert found, name
    return str(found[0])


@pytest.mark.extra("web")
def test_a_task2_run_page_leads_with_its_primary_judge(client: Any) -> None:
    page = client.get(f"/runs/{_id(client, 'eval-scripted-echo')}").text
    tables = re.findall(r'<table class="judge-figures" data-judge="([^"]+)">', page)
    assert len(tables) == 2 and "always-good" in tables[0] and "always-bad" in tables[1]
    text = _text(page)
    assert "The run's figure, as on the start page: Good% 100.0 [" in text
    assert "under the primary judge scripted:always-good" in text
    assert text.index("Primary judge scripted:always-good") < text.index("Other judge scripted:always-bad")
    start = _text(client.get("/").text)
    assert "Good% 100.0 [" in start  # the start page's figure is the one the run page leads with


@pytest.mark.extra("web")
def test_every_run_page_has_its_settings_and_command_line(client: Any) -> None:
    eval_page = client.get(f"/runs/{_id(client, 'eval-scripted-echo')}").text
    settings = _text(re.search(r'<details class="run-settings".*?</details>', eval_page, re.S).group(0))
    assert "Run settings: lang auto · primary judge scripted:always-good (grm, lang auto)" in settings
    assert "command line uxbench run --task eval --model scripted:echo --judge scripted:always-good" in settings
    for needed in ("Primary judge scripted:always-good", "Judge scripted:always-bad", "threshold 0.5",
                   "templates en/binary.zero_shot.txt (", "temperature 0.7", "uxbench 0.1.0"):
        assert needed in settings, needed
    t1 = _text(client.get(f"/runs/{_id(client, 'judge-scripted-always-good')}").text)
    assert "strategy cot" in t1 and "formulation binary" in t1
    assert "command line not recorded (the run was made before uxbench recorded its command line" in t1
    sim = _text(client.get(f"/sims/{_id(client, 'sim-scripted-echo')}").text)
    assert "Run settings: structured mode, lang auto, 1 trial(s), at most 2 replies, seed 0" in sim
    assert "simulator scripted:user" in sim and "satisfaction judge scripted:always-good" in sim


@pytest.mark.extra("web")
def test_every_sample_page_has_the_judges_full_prompt_and_raw_answer(client: Any) -> None:
    page = client.get(f"/runs/{_id(client, 'eval-scripted-echo')}/samples/1").text
    cards = re.findall(r'<div class="card" data-judge="([^"]+)">(.*?)</details>', page, re.S)
    assert len(cards) == 2 and "always-good" in cards[0][0]  # the primary judge first
    for _, card in cards:
        text = _text(card)
        assert "raw answer" in text and ("好" in text or "good" in text or "差" in text or "bad" in text)
        assert re.search(r"The judge's full prompt \(1 call, 2 messages, [\d,]+ characters\)", text)
        assert "system" in text and "user" in text
    t1 = client.get(f"/runs/{_id(client, 'judge-scripted-always-good')}/samples/1").text
    prompt = _text(re.search(r'<details class="judge-prompt".*?</details>', t1, re.S).group(0))
    query = _text(re.search(r'id="under-test".*?</div>\s*</div>', t1, re.S).group(0)).split("turn under test")[-1]
    assert query.strip()[:12] in prompt  # the judged query is in the prompt it was sent
    assert 'id="raw-output"' in t1


@pytest.mark.extra("web")
def test_a_judge_that_scored_nothing_says_why_everywhere(client: Any, runs: Path, tmp_path: Path) -> None:
    why = "none of the 10 replies scored: 10 answers held no verdict it could read"
    assert why in _text(client.get("/").text)  # the start page's runs table and the leaderboard
    ids = set(re.findall(r'href="/runs/(eval-[^"/]*)"', client.get("/").text))
    assert len(ids) == 2  # both Task 2 runs (one id given a suffix: they share the model and data)
    pages = [_text(client.get(f"/runs/{rid}").text) for rid in ids]
    assert sum(f"scripted:echo: {why}. Open a sample" in p for p in pages) == 1
    site = tmp_path / "site"
    _invoke("site", "build", str(runs), "--out", str(site), "--n-boot", "100")
    assert why in _text((site / "index.html").read_text(encoding="utf-8"))
    board = CliRunner().invoke(app, ["leaderboard", str(runs), "--format", "md"])
    assert f"{why}." in board.stdout


@pytest.mark.extra("web")
def test_a_sim_judge_that_never_rated_says_why_and_is_costed(client: Any) -> None:
    sim_id = _id(client, "sim-scripted-echo")
    page = client.get(f"/sims/{sim_id}").text
    text = _text(page)
    row = _text(re.search(r"<tr><td>Judge satisfaction, final</td>.*?</tr>", page, re.S).group(0))
    assert row.startswith("Judge satisfaction, final no usable rating no usable rating 0 judged sessions")
    assert re.search(r"Satisfaction judge scripted:always-good: 0 of the (\d+) replies it was asked to rate got a "
                     r"rating 1-5: \1 answers held no rating 1-5 \(the first: 'good'\)", text)
    usage = _text(re.search(r'<table id="sim-usage">.*?</table>', page, re.S).group(0))
    assert re.search(r"judge \(scripted:always-good\) \d+ ", usage) and "assistant" in usage
    session = re.search(rf'href="/sims/{sim_id}/sessions/([0-9a-f]+)"', page).group(1)
    note = _text(client.get(f"/sims/{sim_id}/sessions/{session}").text)
    assert re.search(r"Satisfaction judge scripted:always-good rated 0 of \d+ replies here: \d+ answers held no "
                     r"rating 1-5", note)

"""The commands: `uxbench human new / results / export`, `uxbench site build` (a static site without local paths)
and `uxbench view` as a real server process (prints its URL, serves it; warns beyond loopback)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("web")

import httpx  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from uxbench.cli.main import app  # noqa: E402
from uxbench.human.study import Study  # noqa: E402
from uxbench.runs.store import RunStore  # noqa: E402
from uxbench.web.render import cell_text  # noqa: E402


def test_human_new_prints_one_link_per_annotator_then_results_and_export(served: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "study"
    result = runner.invoke(app, ["human", "new", "--from", str(served["judge"]), "--out", str(out), "--n", "6",
                                 "--annotators", "2", "--base-url", "http://localhost:9999"])
    assert result.exit_code == 0, result.output
    study = Study.open(out)
    links = re.findall(r"http://localhost:9999/h/(\S+)", result.output)
    assert sorted(links) == sorted(a.token for a in study.annotators())
    a, _ = study.annotators()
    for item in study.items():
        study.judge(a, item["item_id"], item["label"])
    shown = runner.invoke(app, ["human", "results", str(out)])
    assert shown.exit_code == 0 and "annotator-1: 100.0%" in shown.output
    data = json.loads(runner.invoke(app, ["human", "results", str(out), "--format", "json"]).output)
    assert data["annotators"][0]["accuracy"]["k"] == 6
    exported = runner.invoke(app, ["human", "export", str(out), "--out", str(tmp_path / "j.jsonl")])
    assert exported.exit_code == 0
    rows = [json.loads(line) for line in (tmp_path / "j.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["correct"] for r in rows)
    again = runner.invoke(app, ["human", "new", "--from", str(served["judge"]), "--out", str(out)])
    assert again.exit_code == 2 and "exists already" in again.output


def test_site_build_writes_a_self_contained_site(served: dict[str, Path], tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = CliRunner().invoke(app, ["site", "build", str(served["judge"].parent), "--out", str(site),
                                      "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in site.iterdir()) == ["app.js", "index.html", "leaderboard.json", "runs.json",
                                                       "style.css"]
    html = (site / "index.html").read_text()
    with RunStore(served["judge"]) as store:
        summary = store.read_summary() or {}
    assert cell_text(summary["metrics"]["all"]["avg_acc"]) in html
    assert "http://" not in html and "https://" not in html and 'src="app.js"' in html
    board = (site / "leaderboard.json").read_text()
    assert str(served["judge"].parent) not in board and str(tmp_path) not in html
    assert json.loads(board)["tasks"]["judge"]["rows"][0]["metric"]["value"] is not None


def _start(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "uxbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _url(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"(http://\S+)/", line)
    assert found, line
    return found.group(1)


def _get(url: str) -> httpx.Response:
    for _ in range(100):
        try:
            return httpx.get(url, timeout=10)
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"{url} never answered")


def test_view_serves_on_loopback_and_warns_beyond_it(served: dict[str, Path], tmp_path: Path) -> None:
    proc = _start(["view", str(served["judge"]), "--port", "0", "--index-dir", str(tmp_path / "i")])
    try:
        base = _url(proc)
        assert base.startswith("http://127.0.0.1:")
        for _ in range(300):  # the sample index is built in the background, before any page asks for it
            if list((tmp_path / "i").glob("*.sqlite")):
                break
            time.sleep(0.1)
        assert len(list((tmp_path / "i").glob("*.sqlite"))) == 1
        page = _get(base + f"/runs/{served['judge'].name}")
        assert page.status_code == 200 and "Avg-Acc" in page.text
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
    proc = _start(["view", str(served["judge"]), "--port", "0", "--host", "0.0.0.0", "--index-dir",
                   str(tmp_path / "i")])
    try:
        base = _url(proc)
        assert _get(base + "/").status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert "warning: listening on 0.0.0.0" in err


def test_view_of_nothing_servable_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["view", str(tmp_path)])
    assert result.exit_code == 2 and "not a run directory" in result.output


def test_view_without_paths_reads_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["view"])
    assert result.exit_code == 2 and "runs: no such directory" in result.output


def test_view_and_human_serve_name_a_bad_host_or_index_dir_or_busy_port(served: dict[str, Path],
                                                                         tmp_path: Path) -> None:
    import socket

    runner = CliRunner()
    run = str(served["judge"])
    for args in (["view", run, "--host", "999.1.1.1"], ["view", run, "--host", "no such host"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert "error: --host" in result.output and args[-1] in result.output
    a_file = tmp_path / "not-a-dir"
    a_file.write_text("x")
    result = runner.invoke(app, ["view", run, "--index-dir", str(a_file), "--port", "0"])
    assert result.exit_code == 2 and f"--index-dir {a_file} is a file, not a directory" in result.output
    assert "Errno" not in result.output
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = runner.invoke(app, ["view", run, "--port", str(port), "--index-dir", str(tmp_path / "i")])
        assert result.exit_code == 2 and f"port {port} on 127.0.0.1 is in use" in result.output
    study = tmp_path / "study"
    Study.create(study, run, n=2, annotators=1)
    result = runner.invoke(app, ["human", "serve", str(study), "--host", "999.1.1.1"])
    assert result.exit_code == 2 and "error: --host '999.1.1.1'" in result.output


def test_a_bad_host_or_index_dir_is_refused_before_the_web_stack_or_the_runs(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # The refusal needs neither: on a loaded machine importing the web stack and reading the runs took ~30 s.
    import uxbench.cli.view_cmd as view_cmd
    import uxbench.web.catalog as catalog

    def untouched(*args: object, **kwargs: object) -> None:
        raise AssertionError("reached before the options were checked")

    monkeypatch.setattr(view_cmd, "require_web", untouched)
    monkeypatch.setattr(catalog, "build_catalog", untouched)
    a_file = tmp_path / "not-a-dir"
    a_file.write_text("x")
    runner = CliRunner()
    for args, said in ((["view", "nowhere", "--host", "999.1.1.1"], "error: --host '999.1.1.1'"),
                       (["view", "nowhere", "--index-dir", str(a_file)], "is a file, not a directory"),
                       (["view", "nowhere", "--port", "70000"], "--port must be between 0 and 65535"),
                       (["human", "serve", str(tmp_path / "no-study"), "--host", "999.1.1.1"], "error: --host")):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and said in result.output, (args, result.output)

"""`uxbench site build` publishes nothing of the building machine's file system: runs made by the real `uxbench
run` from data and a `replay:` model that live under a distinctive directory, and the site built from them
holds that directory's name nowhere (data named by file name and fingerprint, specs by the path's last part,
run ids and judge keys with the public spec)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from extra_skip import require_extra

require_extra("web")

from typer.testing import CliRunner  # noqa: E402

from uxbench.cli.main import app  # noqa: E402
from uxbench.data.loaders import DEMO_DIR  # noqa: E402
from uxbench.web.public import Publisher, data_name, strip_paths  # noqa: E402

SECRET = "Zq7-private-home-4417"


def _run(*args: str) -> None:
    result = CliRunner().invoke(app, ["run", "--quiet", *args])
    assert result.exit_code == 0, result.output


def test_the_site_holds_no_local_path(tmp_path: Path) -> None:
    home = tmp_path / SECRET / "work"
    (home / "data" / "task1").mkdir(parents=True)
    for name in ("demo_task1_judge_good.jsonl", "demo_task1_judge_bad.jsonl"):
        shutil.copy(DEMO_DIR / name, home / "data" / "task1" / name)
    shutil.copy(DEMO_DIR / "demo_task2_eval.jsonl", home / "data" / "task2.jsonl")
    answers = home / "answers.jsonl"
    answers.write_text('{"match": "never matched", "text": "x"}\n', encoding="utf-8")
    _run("--task", "judge", "--model", f"replay:{answers}", "-M", "default=good", "--data",
         str(home / "data" / "task1"), "--out", str(home / "runs" / "t1"))
    _run("--task", "eval", "--model", f"replay:{answers}", "-M", "default=a reply", "--judge", f"replay:{answers}",
         "-J", "default=good", "--judge-mode", "pointwise", "--data", str(home / "data" / "task2.jsonl"),
         "--out", str(home / "runs" / "t2"))
    site = tmp_path / "site"
    result = CliRunner().invoke(app, ["site", "build", str(home / "runs"), "--out", str(site), "--n-boot", "100"])
    assert result.exit_code == 0, result.output
    for file in site.iterdir():
        text = file.read_text(encoding="utf-8")
        for local in (SECRET, str(tmp_path), str(Path.home()), tmp_path.name):
            assert local not in text, (file.name, local)
    runs = json.loads((site / "runs.json").read_text(encoding="utf-8"))
    assert sorted(r["data"] for r in runs) == ["task1/ (2 files)", "task2.jsonl"]
    assert all(r["data_fingerprint"] and r["model"] == "replay:answers.jsonl" for r in runs)
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    assert board["tasks"]["eval"]["rows"][0]["judge_spec"] == "replay:answers.jsonl"
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "task2.jsonl" in html and runs[0]["data_fingerprint"] in html


def test_paths_in_any_string_are_cut_to_their_last_part(tmp_path: Path) -> None:
    assert data_name("file /home/me/data/task2.jsonl") == "task2.jsonl"
    assert data_name("directory /srv/x/task1 (2 files)") == "task1/ (2 files)"
    assert strip_paths("left out: /home/me/runs/t1 (no summary); n/a; a / b; https://x.org/p") == \
        "left out: t1 (no summary); n/a; a / b; https://x.org/p"
    assert strip_paths(r"C:\Users\me\d.jsonl and ~/runs/x") == "d.jsonl and x"
    run = tmp_path / "runs" / "r1"
    run_id = "judge-replay-tmp-x-answers.jsonl-01"
    publisher = Publisher([(run, {"run_id": run_id, "model": {"spec": "openai:m"}})])
    cleaned = publisher.clean({"warn": [f"{run}: not scored"], "k": {str(run): 1}})
    assert cleaned == {"warn": [f"{run_id}: not scored"], "k": {run_id: 1}}
    assert publisher.clean("hf:Qwen/Qwen2.5-0.5B") == "hf:Qwen/Qwen2.5-0.5B"  # a hub id is not a path

"""A site built from runs whose models are named by a path inside the spec (`scripted:file:/abs/rules.json`, for
the model under test, a judge and a simulated-session run's assistant and satisfaction judge) holds that path
and its slug nowhere, and lists the simulated-session runs as the view does: task "sim", the model by its spec,
sessions, task success with its CI, flagged sessions (never a Python dict, a `None` task or a mangled URL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.runs.manifest import slug

PRIVATE = "Kx9-home-of-someone-3301"


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.extra("web")
def test_a_site_holds_no_path_of_a_spec_and_lists_sim_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / PRIVATE / "rules dir"
    home.mkdir(parents=True)
    rules = home / "rules.json"
    rules.write_text(json.dumps([{"pattern": "差|bad|worse", "response": "bad"},
                                 {"pattern": "[1-5]", "response": "4"},
                                 {"pattern": ".", "response": "good"}]), encoding="utf-8")
    spec = f"scripted:file:{rules}"
    monkeypatch.chdir(tmp_path)  # the runs go under ./runs, named by `uxbench run` itself
    _invoke("run", "--quiet", "--model", spec)
    _invoke("run", "--quiet", "--task", "eval", "--model", "scripted:echo", "--judge", spec,
            "--judge-mode", "pointwise")
    _invoke("sim", "run", "--quiet", "--model", spec, "--simulator", "scripted:user", "--judge", spec,
            "--personas", "demo", "--trials", "1", "--max-turns", "3", "--n-boot", "50")
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert runs and not any(PRIVATE in name or "rules-dir" in name for name in runs), runs  # run ids hold no path
    assert any(name.startswith("judge-scripted-file-rules.json-") for name in runs), runs
    assert any(name.startswith("sim-scripted-file-rules.json-") for name in runs), runs

    site = tmp_path / "site"
    _invoke("site", "build", "runs", "--out", str(site), "--n-boot", "100")
    leaks = [str(tmp_path), str(home), str(rules), PRIVATE, slug(str(home)), slug(str(rules)),
             slug(spec), slug(spec, 32), slug(spec, 24), "rules-dir", "rules dir"]
    written = sorted(site.iterdir())
    assert [p.name for p in written] == ["app.js", "index.html", "leaderboard.json", "runs.json", "style.css"]
    for file in written:
        text = file.read_text(encoding="utf-8")
        for leak in leaks:
            assert leak not in text, (file.name, leak)
        assert "{'spec'" not in text and "http:v1" not in text, file.name

    published = json.loads((site / "runs.json").read_text(encoding="utf-8"))
    sims = [r for r in published if r["task"] == "sim"]
    assert len(sims) == 1 and sims[0]["model"] == "scripted:file:rules.json"
    assert sims[0]["simulator"] == "scripted:user" and sims[0]["n_sessions"] == 24
    assert sims[0]["figure"] == "Task success %" and sims[0]["cell"]["n"] == 24
    tasks = {r["task"]: r for r in published if r["task"] != "sim"}
    assert tasks["judge"]["model"] == "scripted:file:rules.json" and tasks["judge"]["n_samples"] == 24
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    assert board["tasks"]["eval"]["rows"][0]["judge_spec"] == "scripted:file:rules.json"
    assert board["tasks"]["sim"]["rows"][0]["model"] == "scripted:file:rules.json"
    html = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="sims"' in html and "scripted:user (structured)" in html
    assert ">None<" not in html and "Good%</td><td class=\"num\"" not in html.split('id="sims"')[1]


@pytest.mark.extra("web")
def test_an_old_run_named_by_its_paths_slug_is_resumed_not_duplicated(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A run made before run ids left paths out keeps its directory: the same command resumes it."""
    rules = tmp_path / PRIVATE / "rules.json"
    rules.parent.mkdir()
    rules.write_text('[{"pattern": ".", "response": "good"}]', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    spec = f"scripted:file:{rules}"
    _invoke("run", "--quiet", "--model", spec, "--limit", "4")
    (made,) = (tmp_path / "runs").iterdir()
    old_name = made.name.replace(slug("scripted:file:rules.json"), slug(spec))
    made.rename(made.parent / old_name)
    out = _invoke("run", "--quiet", "--model", spec, "--limit", "4")
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [old_name]
    assert "resum" in out.lower() or old_name in out


@pytest.mark.extra("web")
def test_specs_with_paths_anywhere_are_cut_and_urls_kept(tmp_path: Path) -> None:
    from uxbench.runs.spec_paths import public_spec
    from uxbench.web.public import Publisher, strip_paths

    assert public_spec("scripted:file:/home/me/rules.json") == "scripted:file:rules.json"
    assert public_spec("replay:~/answers.jsonl") == "replay:answers.jsonl"
    assert public_spec("x:file:///home/me/a.json") == "x:file:a.json"
    for kept in ("openai:gpt-4o", "hf:Qwen/Qwen2.5-0.5B", "openai:http://127.0.0.1:8000/v1", "scripted:echo"):
        assert public_spec(kept) == kept
    assert strip_paths("judge scripted:file:/home/me/r.json failed; see http://host:8/v1 and file:///srv/x.log") \
        == "judge scripted:file:r.json failed; see http://host:8/v1 and file:x.log"
    run = tmp_path / "runs" / "sim-x"
    manifest = {"run_id": "sim-scripted-file-home-me-rules.json-0123456789",
                "model": {"spec": "scripted:file:/home/me/rules.json", "args": {"base_url": "http://h:8000/v1"}},
                "simulator": {"spec": "replay:/home/me/users.jsonl"}, "judges": ["satisfaction:hf:/models/judge"]}
    cleaned = Publisher([(run, manifest)]).clean({**manifest, "dir": str(run)})
    assert cleaned["run_id"] == "sim-scripted-file-rules.json-0123456789" and cleaned["dir"] == cleaned["run_id"]
    assert cleaned["model"] == {"spec": "scripted:file:rules.json", "args": {"base_url": "http://h:8000/v1"}}
    assert cleaned["simulator"]["spec"] == "replay:users.jsonl" and cleaned["judges"] == ["satisfaction:hf:judge"]

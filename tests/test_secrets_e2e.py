"""Acceptance: seeded secrets never reach a file, a record or the terminal.

`uxbench run` and `uxbench mine run`, through the real CLI, against a loopback server that echoes the
request's headers in plain-text error pages, with secrets in the environment (the API key), in `-M`
values, in nested header and body values and in a URL. Then every byte under the run directories, the
mining outputs and the cache directory, and everything printed, is searched: no secret, in any form.
"""

from __future__ import annotations

import base64
import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import orjson
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner, Result

from uxbench.cli.main import app
from uxbench.redact import forget_secrets
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

sys.path.insert(0, str(Path(__file__).parent / "mining"))
from pipeline_support import write_log

ENV_KEY = "sk-e2e-environment-key-5f3a9c"
HEADER_KEY = "hdr-e2e-api-key-77d1"
HEADER_OTHER = "hdr-e2e-custom-value-31b8"
BODY_KEY = "body-e2e-api-key-c42e"
URL_USER = "alice"
URL_PASSWORD = "url-e2e-password-90aa"
ARG_KEY = "sk-e2e-typo-argument-6b0d"
SECRETS = [ENV_KEY, HEADER_KEY, HEADER_OTHER, BODY_KEY, URL_PASSWORD, ARG_KEY]
HEADERS = json.dumps({"api-key": HEADER_KEY, "X-Custom-Gateway": HEADER_OTHER})
BODY = json.dumps({"api_key": BODY_KEY, "top_k": 3})


def forms(secret: str) -> list[bytes]:
    return [secret.encode(), quote(secret, safe="").encode(), json.dumps(secret)[1:-1].encode()]


NEEDLES = [f for s in SECRETS for f in forms(s)] + [
    base64.b64encode(f"{URL_USER}:{URL_PASSWORD}".encode()),
    f"{URL_USER}:{URL_PASSWORD}".encode(),
]


def readable(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".parquet":
        data += orjson.dumps(pq.read_table(path).to_pylist(), default=str)
    elif path.suffix == ".gz":
        data += gzip.decompress(data)
    return data


def leaks(*roots: Path, printed: str = "") -> list[str]:
    """(where, which secret form) for every secret found in the files under `roots` or in `printed`."""
    found = []
    blobs = [(str(p), readable(p)) for root in roots for p in sorted(root.rglob("*")) if p.is_file()]
    blobs.append(("printed output", printed.encode()))
    for where, blob in blobs:
        found += [f"{where}: {needle!r}" for needle in NEEDLES if needle in blob]
    return found


def judge_rows() -> list[dict[str, object]]:
    rows = []
    for i in range(10):
        gold = "good" if i % 2 == 0 else "bad"
        marker = "[[FAULT:echo]]" if i in (4, 7, 9) else f"[[SAY:{gold}]]"
        rows.append({"cid": f"c{i:02d}", "ground_truth": 1 if gold == "good" else -1, "query": f"question {i}",
                     "agent_response_full": f"answer {i} {marker}"})
    return rows


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("UXBENCH_DEID_SALT", "e2e-deid-key-012")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    data = tmp_path / "judge.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in judge_rows()), encoding="utf-8")
    return data


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


def invoke(*args: str) -> Result:
    forget_secrets()  # each command must find its own secrets, as a fresh process would
    return CliRunner().invoke(app, list(args))


def printed(result: Result) -> str:
    return result.stdout + result.stderr + (repr(result.exception) if result.exception else "")


def with_password(base_url: str) -> str:
    return base_url.replace("http://", f"http://{URL_USER}:{URL_PASSWORD}@")


def test_a_run_keeps_every_secret_out_of_files_and_terminal(
        tmp_path: Path, env: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    run = invoke("run", "--model", "openai:loopback", "--data", str(env), "--concurrency", "1",
                 "--out", str(tmp_path / "run-env"),
                 "-M", f"base_url={server.base_url}", "-M", f"extra_headers={HEADERS}", "-M", f"extra_body={BODY}")
    assert server.stats.statuses[400] >= 3, printed(run)  # the echo pages were served
    assert run.exit_code in (0, 1), printed(run)
    records = (tmp_path / "run-env" / "samples.jsonl").read_text("utf-8")
    assert "Request received" in records and "<redacted>" in records  # errors stored, scrubbed
    manifest = json.loads((tmp_path / "run-env" / "manifest.json").read_text("utf-8"))
    assert json.loads(manifest["model"]["args"]["extra_body"])["top_k"] == 3  # what changes the answer stays
    out = printed(run)

    monkeypatch.delenv("OPENAI_API_KEY")
    url_run = invoke("run", "--model", "openai:loopback", "--data", str(env), "--concurrency", "1",
                     "--out", str(tmp_path / "run-url"), "-M", f"base_url={with_password(server.base_url)}",
                     "-M", f"extra_headers={HEADERS}")
    assert url_run.exit_code in (0, 1), printed(url_run)
    assert server.stats.last_headers["Authorization"].startswith("Basic ")
    out += printed(url_run)

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    both = invoke("run", "--model", "openai:loopback", "--data", str(env), "--out", str(tmp_path / "run-both"),
                  "-M", f"base_url={with_password(server.base_url)}")
    assert both.exit_code == 2 and "user name and password" in both.stderr and "Traceback" not in printed(both)
    typo = invoke("run", "--model", "openai:loopback", "--data", str(env), "--out", str(tmp_path / "run-typo"),
                  "-M", f"api_key={ARG_KEY}", "-M", f"base_url={server.base_url}")
    assert typo.exit_code == 2 and "api_key" in typo.stderr
    out += printed(both) + printed(typo)

    assert leaks(tmp_path / "run-env", tmp_path / "run-url", tmp_path / "cache", printed=out) == []
    assert not (tmp_path / "run-both").exists() and not (tmp_path / "run-typo").exists()


def test_a_mine_run_keeps_every_secret_out_of_files_and_terminal(
        tmp_path: Path, env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = write_log(tmp_path / "log.jsonl")
    out = ""
    with LoopbackServer(LoopbackConfig(echo_headers_status=400)) as echo:
        monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
        mined = invoke("mine", "run", str(log), "--out", str(tmp_path / "mine-env"), "--workers", "1",
                       "--llm-signals", "--model", "openai:loopback", "-M", f"base_url={echo.base_url}",
                       "-M", f"extra_headers={HEADERS}", "-M", f"extra_body={BODY}")
        assert echo.stats.statuses[400] > 0, printed(mined)
        out += printed(mined)
        monkeypatch.delenv("OPENAI_API_KEY")
        url_mined = invoke("mine", "run", str(log), "--out", str(tmp_path / "mine-url"), "--workers", "1",
                           "--model", "openai:loopback", "-M", f"base_url={with_password(echo.base_url)}",
                           "-M", f"extra_headers={HEADERS}")
        out += printed(url_mined)
        assert echo.stats.last_headers["Authorization"].startswith("Basic ")
    # Every call is refused (the echoing 400), so both runs end in the one error that says so (no case can be
    # mined); what matters here is that neither the error nor any file holds a secret.
    assert mined.exit_code == 2 and url_mined.exit_code == 2, out
    assert out.count("agent exchanges of batch 0 failed") == 2, out
    manifest = (tmp_path / "mine-env" / "manifest.json").read_text("utf-8")
    assert "top_k" in manifest and "<redacted>" in manifest
    assert leaks(tmp_path / "mine-env", tmp_path / "mine-url", tmp_path / "cache", printed=out) == []


def _persona_with_key(key: str) -> dict[str, object]:
    """A persona whose own text holds the process's API key: in its profile, opener, a fact and free meta."""
    return {
        "id": "leaky-persona", "lang": "en",
        "profile": {"description": f"Keeps the gateway key {key} on a sticky note."},
        "opener": f"my key is {key} and the blender is broken, i want a refund",
        "goal": [{"id": "refund", "request": f"get a refund (key {key})", "check": {"any_of": ["refund"]},
                  "needs": ["order"]}],
        "facts": [{"id": "order", "label": "order number", "value": key, "disclose": "opening",
                   "ask_patterns": ["order"]}],
        "patience": {"session": 2},
        "meta": {"notes": [key, {"nested": key}]},
    }


def test_a_sim_run_keeps_the_processes_own_key_out_of_every_file(
        tmp_path: Path, env: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: a persona holding the process's own key (OPENAI_API_KEY) is shown <redacted> in sessions.jsonl,
    and is so in sim.sqlite's persona snapshot as well; every file of the run (SQLite and its WAL included), of
    the fidelity pass and of the cache, and everything printed, is searched."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    personas = tmp_path / "personas.jsonl"
    personas.write_text(json.dumps(_persona_with_key(ENV_KEY)) + "\n", encoding="utf-8")
    run_dir = tmp_path / "sim-run"
    run = invoke("sim", "run", "--personas", str(personas), "--model", "openai:loopback", "-M",
                 f"base_url={server.base_url}", "--simulator", "scripted:user", "--max-turns", "2", "--trials", "2",
                 "--out", str(run_dir), "--quiet", "--n-boot", "50")
    assert run.exit_code in (0, 1), printed(run)
    assert server.stats.requests > 0
    fidelity = invoke("sim", "fidelity", str(run_dir), "--judge", "openai:loopback", "-J",
                      f"base_url={server.base_url}", "--quiet", "--n-boot", "50", "--format", "json")
    out = printed(run) + printed(fidelity)
    assert "<redacted>" in (run_dir / "sessions.jsonl").read_text("utf-8")
    import sqlite3

    with sqlite3.connect(run_dir / "sim.sqlite") as db:
        (body,) = db.execute("SELECT body FROM personas").fetchone()
    assert b"<redacted>" in body  # the snapshot is there, scrubbed
    assert leaks(run_dir, tmp_path / "cache", printed=out) == []


def test_a_short_key_given_as_api_key_env_is_written_nowhere(
        tmp_path: Path, env: Path, server: LoopbackServer) -> None:
    """Issue 28: an 18-character value with no key prefix, given as api_key_env (a short key pasted in place of a
    variable's name), names no variable: the manifest records `<not set>`, and the value reaches no file and no
    printed line."""
    short_key = "aB3dE5gH7jK9mN1pQr"
    run = invoke("run", "--model", "openai:loopback", "--data", str(env), "--out", str(tmp_path / "run"),
                 "-M", f"base_url={server.base_url}", "-M", f"api_key_env={short_key}", "--quiet")
    assert run.exit_code in (0, 1), printed(run)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text("utf-8"))
    assert manifest["model"]["args"]["api_key_env"] == "<not set>"
    found = [str(p) for p in (tmp_path / "run").rglob("*") if p.is_file() and short_key.encode() in readable(p)]
    assert found == [] and short_key not in printed(run)

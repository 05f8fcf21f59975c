"""Acceptance: a seeded key, swept across every position around every length at which the code cuts a text
that reaches an error, a record, a summary or the terminal, leaves no fragment of four or more of its
characters anywhere: not in an error text, not in a file under the run or mining directory or the cache,
not in what is printed.

The cut lengths (found by grepping the code for slicing of texts that leave the process): the OpenAI
provider's quote of a body that is not the expected JSON (600), `short()` of every error detail (300), the
echo of a refused provider argument (60), the agents' raw answers kept on candidates (`max_raw_chars`, 4000),
the agents' correction turn (200 per problem) and the model table / data readers' quotes (120, 160). Texts
are scrubbed before they are cut (`redact.clip`), and pieces of a key that a server's own cut left at an edge
are scrubbed too; both are swept here through a real loopback server.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.data.schema import Message
from uxbench.errors import ConfigError, ModelError
from uxbench.models.api import GenerateConfig
from uxbench.models.providers._args import _SHOWN_CHARS, parse_provider_args
from uxbench.models.providers._errors import _MAX_DETAIL
from uxbench.models.providers.openai import _BODY_CHARS, OpenAIArgs
from uxbench.models.registry import create_model_api
from uxbench.redact import forget_secrets, remember_secret
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

sys.path.insert(0, str(Path(__file__).parent / "mining"))
from pipeline_support import PipelineScript, write_log

KEY = "sk-" + "".join(random.Random(16).choice("QXZJWKVYBGHMP") for _ in range(37))
"""Letters that no filler, placeholder or message of ours holds, so a 4-gram of it can only be the key."""
FRAGMENTS = {KEY[i:i + 4] for i in range(len(KEY) - 3)}
CUTS = (_MAX_DETAIL, _BODY_CHARS, 4000)
ENV = "UXBENCH_SWEEP_KEY"


def fragments_in(text: str | bytes) -> list[str]:
    blob = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return sorted(f for f in FRAGMENTS if f in blob)


def positions(cut: int, prefix: int = 0) -> list[int]:
    """Every start at which the key straddles (or touches) position `cut` of a text that has `prefix`
    characters before the body."""
    return list(range(max(0, cut - prefix - len(KEY) - 1), cut - prefix + 2))


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    forget_secrets()
    monkeypatch.setenv(ENV, KEY)
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("UXBENCH_DEID_SALT", "secrets-sweep-salt-0123")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield
    forget_secrets()


def filler(n: int) -> str:
    """`n` characters, four blanks of every five."""
    return ("a" + " " * 4) * (n // 5) + "a" * (n % 5)


def _pad(messages: list[dict[str, Any]]) -> int:
    text = str(messages[-1].get("content") or "")
    found = text.split("[[PAD:", 1)
    return int(found[1].split("]]", 1)[0]) if len(found) > 1 else -1


def _pages(kind: str) -> Any:
    """A server page with the request's own key (its Authorization header) at the prompt's [[PAD:n]]."""
    def page(messages: list[dict[str, Any]], body: dict[str, Any], headers: dict[str, str]) -> tuple[int, str] | None:
        n = _pad(messages)
        if n < 0:
            return None
        key = headers.get("Authorization", "").removeprefix("Bearer ")
        # Mostly blanks before the key, as an HTML or plain-text error page has: collapsed for the message, the
        # 600 characters of the body shrink below the detail's 300, so that cut alone cannot hide a leak.
        text = filler(n) + key + " b" * 80
        if kind == "plain":
            return 502, text
        if kind == "json-error":
            return 400, json.dumps({"error": {"message": text}})
        if kind == "not-json-200":
            return 200, text
        if kind == "server-cut":  # the server shortens its own page: the key's start ends the body
            return 502, text[: n + len(key) // 2]
        if kind == "server-cut-marked":
            return 502, text[: n + len(key) // 2] + "..."
        raise ValueError(kind)

    return page


@pytest.mark.parametrize("kind", ["plain", "json-error", "not-json-200", "server-cut", "server-cut-marked"])
async def test_provider_errors_hold_no_fragment_at_any_cut(kind: str) -> None:
    with LoopbackServer(LoopbackConfig(page=_pages(kind))) as server:
        api = create_model_api("openai:m", {"base_url": server.base_url, "api_key_env": ENV})
        leaks: list[tuple[int, list[str]]] = []
        for at in sorted({p for cut in CUTS[:2] for p in positions(cut)} | set(range(0, 8))):
            with pytest.raises(ModelError) as info:
                await api.generate([Message(role="user", content=f"[[PAD:{at}]]")], GenerateConfig())
            if found := fragments_in(str(info.value)):
                leaks.append((at, found))
        await api.aclose()
    assert server.stats.requests > 80
    assert leaks == []


def test_a_refused_argument_is_never_echoed_with_a_fragment() -> None:
    remember_secret(KEY)
    for at in positions(_SHOWN_CHARS):
        value = "x" * at + KEY + "y" * 10
        with pytest.raises(ConfigError) as info:
            parse_provider_args(OpenAIArgs, {"reasoning_effort": value, "timeout": "-1"}, provider="openai")
        assert fragments_in(str(info.value)) == [], at


def _files(*roots: Path) -> Iterator[tuple[Path, bytes]]:
    for root in roots:
        for path in sorted(root.rglob("*")) if root.exists() else []:
            if not path.is_file():
                continue
            data = path.read_bytes()
            if path.suffix == ".parquet":
                data += json.dumps(pq.read_table(path).to_pylist(), default=str, ensure_ascii=False).encode()
            elif path.suffix == ".gz":
                data += gzip.decompress(data)
            yield path, data


def test_a_run_writes_and_prints_no_fragment(tmp_path: Path) -> None:
    """`uxbench run` against a server whose error pages hold the key at every position around the cuts: no
    fragment in samples.sqlite, samples.jsonl, summary.json, the manifest, the cache, or on the terminal."""
    starts = sorted({p for cut in CUTS[:2] for p in positions(cut, prefix=0)})
    rows = [{"cid": f"ok{i}", "ground_truth": 1, "query": "q", "agent_response_full": "[[SAY:good]]"} for i in range(3)]
    rows += [{"cid": f"p{at}", "ground_truth": -1, "query": "q", "agent_response_full": f"[[PAD:{at}]]"}
             for at in starts]
    data = tmp_path / "judge.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with LoopbackServer(LoopbackConfig(page=_pages("plain"))) as server:
        result = CliRunner().invoke(app, [
            "run", "--model", "openai:m", "-M", f"base_url={server.base_url}", "-M", f"api_key_env={ENV}", "--data",
            str(data), "--out", str(tmp_path / "run"), "--concurrency", "1", "--max-attempts", "1", "--quiet"])
    assert result.exit_code == 1, result.output  # the paged samples failed, as they should
    assert server.stats.statuses[502] == len(starts)
    assert (tmp_path / "run" / "samples.jsonl").read_text("utf-8").count("HTTP 502") == len(starts)
    leaks = [(str(p), fragments_in(d)) for p, d in _files(tmp_path / "run", tmp_path / "cache") if fragments_in(d)]
    assert leaks == [] and fragments_in(result.stdout + result.stderr) == []


def test_a_mining_run_keeps_no_fragment_of_agent_answers(tmp_path: Path) -> None:
    """Agents' raw answers are kept on candidates cut to 4000 characters: a model that answers the key at
    every position around that cut leaves no fragment in any output, shard or the terminal."""
    script = PipelineScript()
    starts = positions(4000)
    calls = {"n": 0, "agents": 0}

    def answer(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        text = script(messages, body)
        if "{\"label\"" in text or "{\"strategy\"" in text:
            return text
        calls["agents"] += 1
        if calls["agents"] % 2:  # every other agent answer is valid: a batch whose every call fails is an error
            return text
        at = starts[calls["n"] % len(starts)]
        calls["n"] += 1
        return "a" * at + KEY + " b" * 100  # not valid JSON: the miner's raw answer is kept, cut to 4000

    log = write_log(tmp_path / "log.jsonl", copies=3)
    with LoopbackServer(LoopbackConfig(responder=answer)) as server:
        result = CliRunner().invoke(app, [
            "mine", "run", str(log), "--out", str(tmp_path / "mine"), "--workers", "1", "--model", "openai:m",
            "-M", f"base_url={server.base_url}", "-M", f"api_key_env={ENV}", "--quiet"])
    assert calls["n"] >= 6, result.output
    candidates = (tmp_path / "mine" / "candidates.jsonl").read_text("utf-8")
    assert "miner_raw" in candidates and "<redacted>" in candidates
    leaks = [(str(p), fragments_in(d)) for p, d in _files(tmp_path / "mine", tmp_path / "cache") if fragments_in(d)]
    assert leaks == [] and fragments_in(result.stdout + result.stderr) == []

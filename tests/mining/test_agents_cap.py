"""Every agent call carries an output cap (a rambling model stops there instead of filling its context), the
documented default or the one `--agent-max-tokens` sets, through a real loopback server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pipeline_support import PipelineScript, write_log
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.mining.agents.models import DEFAULT_MAX_TOKENS
from uxbench.mining.deid import SALT_ENV
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer


class Recording(PipelineScript):
    """The pipeline's scripted answers, and the output cap of every agent request."""

    def __init__(self) -> None:
        super().__init__()
        self.caps: list[Any] = []

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        before = self.followups + self.audits
        answer = super().__call__(messages, body)
        if self.followups + self.audits == before:  # neither the follow-up check nor the audit: an agent
            self.caps.append(body.get("max_tokens"))
        return answer


@pytest.mark.parametrize("flag", [None, 200])
def test_every_agent_call_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: int | None) -> None:
    monkeypatch.setenv(SALT_ENV, "agents-cap-salt-0123")
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    log = write_log(tmp_path / "log.jsonl")
    script = Recording()
    with LoopbackServer(LoopbackConfig(responder=script)) as server:
        extra = ["--agent-max-tokens", str(flag)] if flag is not None else []
        result = CliRunner().invoke(app, ["mine", "run", str(log), "--out", str(tmp_path / "out"), "--workers", "1",
                                          "--model", "openai:loopback", "-M", f"base_url={server.base_url}",
                                          "--quiet", *extra])
    assert result.exit_code == 0, result.output
    assert script.caps and set(script.caps) == {flag or DEFAULT_MAX_TOKENS}, script.caps

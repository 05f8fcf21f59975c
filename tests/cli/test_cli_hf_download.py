"""`-M allow_download=true` on a machine without a network to the hub: one clear error before anything runs
(was: the hub client's retries of every file for minutes, "Loading" twice, and advice to pass allow_download)."""

from __future__ import annotations

from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("local")

from cli_support import assert_clean_error, invoke  # noqa: E402

from uxbench.errors import ConfigError  # noqa: E402
from uxbench.models.providers import _hf_hub as hub  # noqa: E402
from uxbench.testing import LoopbackServer  # noqa: E402

REPO = "uxbench-tests/not-a-cached-model"


def test_an_unreachable_hub_is_one_error_before_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    result = invoke("run", "--model", f"hf:{REPO}", "-M", "allow_download=true", "--limit", "2", "--out",
                    tmp_path / "run")
    assert_clean_error(result, "-M allow_download=true", "http://127.0.0.1:9 cannot be reached",
                       f"huggingface-cli download {REPO}")
    assert "pass -M allow_download" not in result.output and "Loading" not in result.output
    assert not (tmp_path / "run").exists()


def test_a_hub_that_answers_lets_the_load_say_what_is_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    with LoopbackServer() as server:  # answers 404 to /api/models/...: reachable, the load names the problem
        monkeypatch.setattr(constants, "ENDPOINT", server.base_url.removesuffix("/v1"))
        hub.check_hub_reachable(REPO)


def test_hf_hub_offline_is_named_not_allow_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$HF_HUB_OFFLINE with -M allow_download=true: the variable is named (was: "pass -M allow_download=true")."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = invoke("run", "--model", f"hf:{REPO}", "-M", "allow_download=true", "--limit", "2", "--out",
                    tmp_path / "run")
    assert_clean_error(result, "$HF_HUB_OFFLINE turns downloads off")
    assert "pass -M allow_download" not in result.output
    with pytest.raises(ConfigError, match=r"\$HF_HUB_OFFLINE turns downloads off"):
        hub.check_hub_reachable(REPO, offline=True)

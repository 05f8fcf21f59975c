"""The Ray engine gives byte-identical outputs to the in-process engine: the same end-to-end run (LLM
stages included when the agents are installed) on a local Ray instance started by the test."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("ray")

import ray  # noqa: E402
from pipeline_support import PII_VALUES, PipelineScript, tree_bytes, write_log  # noqa: E402

from uxbench.errors import MissingDependencyError  # noqa: E402
from uxbench.mining.deid import SALT_ENV, scan_for_values  # noqa: E402
from uxbench.mining.pipeline import (  # noqa: E402
    MineConfig,
    ray_engine,
    run_pipeline,
)
from uxbench.testing import LoopbackConfig, LoopbackServer  # noqa: E402

HAS_AGENTS = importlib.util.find_spec("uxbench.mining.agents") is not None and \
    importlib.util.find_spec("uxbench.mining.export") is not None
CACHE = ("responses.sqlite", "responses.sqlite-wal", "responses.sqlite-shm")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_engine_matches_the_local_engine(local_ray: None, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "ray-test-salt-01")
    monkeypatch.setattr(ray_engine, "WAVE_BATCHES", 2)  # several waves, so the wave loop is exercised
    log = write_log(tmp_path / "log.jsonl", copies=2)
    with LoopbackServer(LoopbackConfig(responder=PipelineScript())) as server:
        llm = {"model": "openai:loopback", "model_args": {"base_url": server.base_url}, "llm_signals": True}
        for engine in ("local", "ray"):
            run_pipeline(MineConfig(inputs=(str(log),), out=str(tmp_path / engine), engine=engine, workers=2,
                                    batch_size=3, llm=HAS_AGENTS, **(llm if HAS_AGENTS else {})))
    local = tree_bytes(tmp_path / "local", skip=(*CACHE, "manifest.json"))
    on_ray = tree_bytes(tmp_path / "ray", skip=(*CACHE, "manifest.json"))
    assert sorted(on_ray) == sorted(local)
    assert [name for name in local if local[name] != on_ray[name]] == []
    assert len([n for n in local if n.startswith("work/04-signals/part-")]) == 12  # 6 batches x (shard, marker)
    assert scan_for_values([tmp_path / "ray"], PII_VALUES) == []
    assert not (tmp_path / "ray" / "work" / "02-gate" / "_ray_out").exists()


def test_ray_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_ray(name: str, *args: object, **kwargs: object) -> object:
        if name == "ray" or name.startswith("ray."):
            raise ImportError("no ray here")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(MissingDependencyError, match=r"uxbench\[ray\]"):
        ray_engine.RayEngine(workers=1)

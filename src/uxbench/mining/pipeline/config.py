"""Settings of one `uxbench mine run`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from uxbench.errors import ConfigError
from uxbench.mining.dedup import DedupConfig
from uxbench.mining.logformat import FORMATS
from uxbench.mining.prefilter import PrefilterConfig
from uxbench.mining.signals import SignalConfig
from uxbench.mining.workers import default_workers
from uxbench.redact import redact_args

if TYPE_CHECKING:
    from uxbench.mining.agents import AgentConfig

Engine = Literal["local", "ray"]


class MineConfig(BaseModel):
    """Everything that decides what a mining run does. Frozen: one object travels to every stage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    inputs: tuple[str, ...]
    """Log files or directories (read in sorted order)."""
    out: str
    """Output directory; checkpoints go to ``<out>/work``."""
    format: str = "auto"
    skip_invalid: bool = False
    engine: Engine = "local"
    ray_address: str | None = None
    """Join this Ray cluster (``auto`` or ``host:port``); else a local Ray instance is started."""
    workers: int = Field(default_factory=default_workers, ge=1)
    """Processes for the parallel stages (local engine) or CPUs for a local Ray instance."""
    batch_size: int = Field(default=1000, ge=1)
    """Conversations per batch (one checkpoint shard each, one job of the worker pool). Smaller batches balance
    the workers better at the end of a run (with 2,000 a 10,000-conversation log ends on one busy worker for
    about a fifth of the run); the batch also bounds what one worker holds in memory."""
    seed: int = 0
    """Seed of the case sample."""
    fresh: bool = False
    """Discard earlier work in ``out``."""
    llm: bool = True
    """Run the LLM agents, sampling and export (False: ``--no-llm``)."""
    llm_signals: bool = False
    """Classify every follow-up message with the model too (``--llm-signals``)."""
    model: str | None = None
    model_args: dict[str, str] = Field(default_factory=dict)
    cache_path: str | None = None
    """Response cache of the LLM stages (default ``<out>/work/responses.sqlite``: reruns cost nothing)."""
    concurrency: int | None = Field(default=None, ge=1)
    """Most model calls in flight (``--concurrency``; default: the provider's). The shared adaptive limiter
    goes below it when the server rate-limits, times out or queues (see `uxbench.runtime.limiter`)."""
    deid_model: str | None = None
    """PROVIDER:MODEL of the optional model pass of de-identification (``--deid-model``; a local model), run
    on what the rules left before any other stage reads the conversations."""
    deid_model_args: dict[str, str] = Field(default_factory=dict)
    signals: SignalConfig = Field(default_factory=SignalConfig)
    learned_signals: str | None = None
    """Directory of a learned follow-up classifier (``--signals learned:DIR``, from ``uxbench mine
    train-signals``): it decides `dissatisfied` on replies with a next message; None: the rules decide."""
    prefilter: PrefilterConfig = Field(default_factory=PrefilterConfig)
    dedup: DedupConfig = Field(default_factory=DedupConfig)
    agent_options: dict[str, Any] = Field(default_factory=dict)
    """Fields of `uxbench.mining.agents.AgentConfig` (checked when the agents run)."""
    sample_options: dict[str, Any] = Field(default_factory=dict)
    """Fields of `uxbench.mining.sample.SampleConfig` other than the seed."""

    @model_validator(mode="after")
    def _check(self) -> MineConfig:
        if not self.inputs:
            raise ConfigError("give at least one log file or directory to mine")
        if self.format not in FORMATS:
            raise ConfigError(f"unknown log format '{self.format}'; choose one of {', '.join(FORMATS)}")
        if self.engine not in ("local", "ray"):
            raise ConfigError(f"unknown engine '{self.engine}'; choose local or ray")
        if self.llm_signals and not self.llm:
            raise ConfigError("--llm-signals asks a model, and --no-llm runs without one: drop one of them")
        if self.uses_model and not self.model:
            raise ConfigError(
                "the LLM stages need a model: pass --model PROVIDER:MODEL "
                "(e.g. openai:gpt-4o-mini), or --no-llm to run only the deterministic stages"
            )
        if self.uses_model and self.model:
            from uxbench.models.registry import validate_provider_args

            validate_provider_args(self.model, self.model_args)  # before any stage runs: typos, bad values
        if self.deid_model is not None:
            from uxbench.models.registry import validate_provider_args

            validate_provider_args(self.deid_model, self.deid_model_args, option="--deid-model-arg")
        elif self.deid_model_args:
            raise ConfigError("--deid-model-arg needs --deid-model PROVIDER:MODEL")
        return self

    @property
    def uses_model(self) -> bool:
        return self.llm or self.llm_signals

    def public_dict(self) -> dict[str, Any]:
        """The settings with secrets redacted (`uxbench.redact.redact_args`), for manifest.json."""
        data = self.model_dump(mode="json")
        data["model_args"] = redact_args(self.model_args)
        data["deid_model_args"] = redact_args(self.deid_model_args)
        return data

    def model_identity(self) -> dict[str, Any]:
        """What of the model settings decides the LLM stages' answers (their checkpoint keys): every
        argument that changes an answer, no secret (a new key keeps the checkpoints)."""
        return {"model": self.model, "args": redact_args(self.model_args)}


def agent_config(config: MineConfig) -> AgentConfig:
    """The agents' settings of a run (`-A key=value`), checked: here rather than in the agents' stage, because the
    stage registry keys the stage by them."""
    from uxbench.mining.agents import AgentConfig

    try:
        return AgentConfig(**config.agent_options)
    except ValueError as exc:
        raise ConfigError(f"invalid agent settings: {exc}") from None

"""The provider protocol every model implements, and the types that cross it.

A provider turns `messages + GenerateConfig` into a `ModelOutput`. It knows nothing about tasks,
retries, caching or concurrency: `uxbench.models.model.Model` adds those around it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from uxbench.data.schema import Message, ToolCall
from uxbench.data.schema import ToolSpec as ToolSpec  # defined with the conversation types; re-exported


class GenerateConfig(BaseModel):
    """Generation settings. Part of the cache key, so only fields that change the output belong here."""

    model_config = ConfigDict(frozen=True)

    temperature: float | None = None
    """Sampling temperature; None leaves the provider default."""
    max_tokens: int | None = None
    """Cap on generated tokens."""
    top_p: float | None = None
    """Nucleus sampling."""
    stop: tuple[str, ...] | None = None
    """Stop sequences."""
    seed: int | None = None
    """Seed, where the provider supports one."""
    top_logprobs: int | None = None
    """When set, return this many top alternatives for each of the first `logprob_tokens` tokens."""
    logprob_tokens: int = 1
    """How many leading output tokens to report logprobs for (when `top_logprobs` is set)."""
    reasoning_effort: str | None = None
    """Reasoning effort for reasoning models (low / medium / high), passed through when supported."""
    choices: tuple[str, ...] | None = None
    """Answers to score (e.g. good / bad). Providers that see the model's full next-token distribution
    (hf) return `ModelOutput.choice_logprobs`; the others ignore it (use `top_logprobs` there)."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific request fields passed through verbatim."""
    tools: tuple[ToolSpec, ...] = ()
    """Tools the model may call (OpenAI `tools`, Anthropic tool use, Gemini function declarations); they enter
    the cache key like every other setting."""
    tool_choice: Literal["auto", "required", "none"] | None = None
    """Whether the model must, may or may not call a tool (None: the provider's default, `auto`)."""


class TopLogprob(BaseModel):
    """One candidate token and its log-probability."""

    token: str
    logprob: float


class TokenLogprobs(BaseModel):
    """The emitted token at one position, with the top alternatives at that position."""

    token: str
    logprob: float
    top: list[TopLogprob] = Field(default_factory=list)


class Usage(BaseModel):
    """Token usage of one call (or a sum of calls)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    """Reasoning tokens, when the provider reports them apart (they are also in output_tokens)."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(  # sums of validated ints (validating them is cheaper than model_construct)
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class ModelOutput(BaseModel):
    """What one model call returned."""

    text: str
    """Final answer text (reasoning excluded)."""
    reasoning: str | None = None
    """Reasoning text, where the provider returns one."""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    """Wall time of the successful call (0 for a cache hit's replay is not used: the original is kept)."""
    logprobs: list[TokenLogprobs] | None = None
    """Top logprobs of the first tokens, when asked for and supported."""
    choice_logprobs: dict[str, float] | None = None
    """Log-probability that the answer starts with each of `GenerateConfig.choices` (first token; the
    variants " x", "X" and " X" are added in). None when the provider cannot score choices or the choices
    share their first token."""
    finish_reason: str | None = None
    model: str = ""
    """Model name as reported by the provider (or as configured)."""
    cached: bool = False
    """True when this output came from the response cache, not a fresh call."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """The tool calls the model made (its `text` may then be empty)."""


class ProviderArgs(BaseModel):
    """Base of each provider's `--model-arg` model: one field per argument (its docstring is the help
    `uxbench providers` shows); an unknown name is an error. Values arrive as text and are converted by
    pydantic; an empty value means the default, except for the fields named in `keep_blank`."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    keep_blank: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _blank_is_default(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items()
                    if k in cls.keep_blank or not (isinstance(v, str) and not v.strip())}
        return data


class ModelAPI(ABC):
    """A provider. Subclasses set `provider` and register with `@register_provider`.

    `model_name` is the part after `provider:`; `args` are the `--model-arg key=value` pairs.
    Providers must raise `uxbench.errors.RateLimitError`, `TransientModelError` or `FatalModelError`
    so the runtime can decide whether to retry.
    """

    provider: ClassVar[str]
    args_model: ClassVar[type[ProviderArgs]] = ProviderArgs
    """The provider's arguments (validated by `uxbench.models.registry.validate_provider_args`)."""
    default_max_concurrency: ClassVar[int] = 32
    """Upper bound on parallel calls unless the user sets one (a local in-process model uses 1-8)."""

    def __init__(self, model_name: str, args: dict[str, str] | None = None) -> None:
        self.model_name = model_name
        self.args: dict[str, str] = dict(args or {})

    @abstractmethod
    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        """Run one chat completion."""

    def connection_key(self) -> str:
        """Calls sharing a key share one concurrency limiter (default: provider and model)."""
        return f"{self.provider}:{self.model_name}"

    def cache_identity(self) -> dict[str, Any]:
        """What, besides the request, decides the output: goes into the cache key. No secrets here."""
        return {"provider": self.provider, "model": self.model_name}

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections, threads or memory."""

    async def preflight(self) -> None:  # noqa: B027 - optional hook
        """Check, before a run creates anything or loads weights, what would make every call fail: a missing
        API key, a server that cannot be reached, a device that is not there. Raises `ConfigError` (or
        `FatalModelError`) with what to do; cheap (at most one short request)."""

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.model_name}"

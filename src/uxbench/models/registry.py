"""Providers by name. Modules are imported only when their provider is asked for, keeping startup fast."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from uxbench.errors import ConfigError
from uxbench.models.api import ModelAPI, ProviderArgs

# name -> module that defines (and registers) the provider
_PROVIDER_MODULES: dict[str, str] = {
    "openai": "uxbench.models.providers.openai",
    "anthropic": "uxbench.models.providers.anthropic",
    "google": "uxbench.models.providers.google",
    "hf": "uxbench.models.providers.hf",
    "replay": "uxbench.models.providers.replay",
    "scripted": "uxbench.models.providers.scripted",
    "lite": "uxbench.models.providers.lite",
}
_REGISTRY: dict[str, type[ModelAPI]] = {}
PROVIDER_EXTRAS: dict[str, str] = {"anthropic": "anthropic", "google": "google", "hf": "local", "lite": "judge"}
"""The extra of pyproject.toml each provider needs (the others need only the core install)."""

P = TypeVar("P", bound=type[ModelAPI])


def register_provider(name: str) -> Callable[[P], P]:
    """Class decorator: make a provider available as `name:MODEL`."""

    def deco(cls: P) -> P:
        cls.provider = name
        _REGISTRY[name] = cls
        return cls

    return deco


def provider_names() -> list[str]:
    return sorted(set(_PROVIDER_MODULES) | set(_REGISTRY))


def get_provider(name: str) -> type[ModelAPI]:
    if name not in _REGISTRY:
        module = _PROVIDER_MODULES.get(name)
        if module is None:
            close = difflib.get_close_matches(name, provider_names(), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ConfigError(
                f"Unknown model provider '{name}'. Known providers: {', '.join(provider_names())}.{hint}"
            )
        importlib.import_module(module)
    return _REGISTRY[name]


def parse_model_spec(spec: str) -> tuple[str, str]:
    """Split `provider:model` (the model part may itself contain colons, e.g. `openai:qwen3:8b`)."""
    provider, sep, model = spec.partition(":")
    if not sep or not provider or not model:
        raise ConfigError(
            f"Model '{spec}' is not of the form PROVIDER:MODEL (for example openai:gpt-4o-mini, "
            f"hf:/path/to/model, scripted:always-good). Providers: {', '.join(provider_names())}."
        )
    return provider, model


def parse_model_args(pairs: list[str] | None, *, option: str = "--model-arg") -> dict[str, str]:
    """Turn `["key=value", ...]` into a dict, with a clear error for a malformed pair. Secret values are
    remembered for scrubbing at once (`uxbench.redact`), before anything can print them."""
    from uxbench.redact import remember_args, remember_secret, scrub

    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            remember_secret(pair)  # `-M sk-...` without a name: it may well be a key
            raise ConfigError(
                f"{option} '{scrub(pair)}' must be KEY=VALUE (for example base_url=http://localhost:8000/v1)"
            )
        out[key.strip()] = value
    remember_args(out)
    return out


def provider_args_model(provider: str) -> type[ProviderArgs]:
    """The pydantic model of a provider's arguments."""
    return get_provider(provider).args_model


def validate_provider_args(
    provider: str, args: Mapping[str, Any] | None, *, option: str = "--model-arg"
) -> ProviderArgs:
    """Check model arguments before anything runs: unknown names ("did you mean"), bad values (naming the
    argument). `provider` is a provider name or a full `PROVIDER:MODEL` spec; `option` is the command-line
    option the arguments came from (`--model-arg`, `--judge-arg` ...), for the error message. Returns the
    validated arguments (the provider's `args_model`)."""
    from uxbench.models.providers._args import parse_provider_args

    name = parse_model_spec(provider)[0] if ":" in provider else provider
    checked = parse_provider_args(provider_args_model(name), args or {}, provider=name, option=option)
    require_provider_extra(provider)  # after the arguments: a typo is said whether the extra is installed or not
    return checked


def require_provider_extra(spec: str) -> None:
    """A one-line error naming the command, the model and the extra when `spec`'s provider needs an extra that is
    not installed (`uxbench run: hf:embedded needs the local extra ...`)."""
    from uxbench.extras import require

    name = parse_model_spec(spec)[0] if ":" in spec else spec
    extra = PROVIDER_EXTRAS.get(name)
    if extra is not None:
        require(extra, spec if ":" in spec else f"the {name} provider")


MODEL_NAMES = {
    "anthropic": ["anthropic:claude-sonnet-4-5"],
    "google": ["google:gemini-2.5-flash"],
    "lite": ["lite:/path/to/judge-dir  (a judge trained by `uxbench judge train --method lite`)"],
    "hf": ["hf:embedded  (the bundled tiny demo model; the default of `uxbench run`)",
           "hf:/path/to/model-dir, hf:/path/model.gguf, hf:Qwen/Qwen2.5-0.5B-Instruct -M allow_download=true"],
    "openai": ["openai:gpt-4o-mini  (the OpenAI API, key in $OPENAI_API_KEY)",
               "openai:Qwen/Qwen2.5-7B-Instruct -M base_url=http://localhost:8000/v1  (vLLM, SGLang, Ollama, "
               "llama.cpp: the name the server serves)"],
    "replay": ["replay:/path/answers.jsonl"],
    "scripted": ["scripted:always-good, scripted:always-bad, scripted:echo, scripted:oracle",
                 'scripted:file:/path/rules.json  (a JSON list of {"pattern": REGEX, "response": TEXT}; the first '
                 "pattern found in the last user message answers)"],
}
"""How to name a model of each provider on the command line (`uxbench providers`)."""


def provider_help(width: int | None = None) -> str:
    """Every provider: how to name a model, then its arguments (name, type and default, help): `uxbench
    providers`. Lines wrap at `width` (default: the terminal's), continued under their text."""
    import shutil
    import textwrap

    from uxbench.models.providers._args import describe_args

    width = width or max(60, shutil.get_terminal_size((100, 24)).columns)

    def wrap(text: str, indent: str, hang: str) -> list[str]:
        return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hang, break_on_hyphens=False,
                             break_long_words=False) or [indent.rstrip()]

    lines: list[str] = []
    for name in provider_names():
        cls = get_provider(name)
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        lines += wrap(f"{name}:MODEL  {summary}".rstrip(), "", "    ")
        for example in MODEL_NAMES.get(name, []):
            lines += wrap(f"--model {example}", "    e.g. ", "         ")
        rows = describe_args(cls.args_model)
        if not rows:
            lines.append("    (no arguments)")
        for arg, kind, doc in rows:
            lines += wrap(f"-M {arg}=  ({kind})  {doc}".rstrip(), "    ", "        ")
    return "\n".join(lines)


def create_model_api(spec: str, args: dict[str, str] | None = None) -> ModelAPI:
    provider, model = parse_model_spec(spec)
    cls = get_provider(provider)
    require_provider_extra(spec)
    return cls(model, args or {})

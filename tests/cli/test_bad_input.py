"""Acceptance: every subcommand over a table of hostile input (empty, binary, truncated, wrong types,
out-of-range numbers, options that do not apply, hostile strings, damaged run files). A row fails on any
traceback and on an exit 0 where an error is due: each must end in one clear refusal (exit 2 and an `error:`
line, or click's usage error), or, where the table says so, exit 1 with the problem listed.

The commands run in-process (typer's runner) over real files built once per module: runs of the three tasks
made with the scripted provider, a mining output, a blind study. In-process, starting a server fails the row
(it must refuse before); the rows whose refusal comes from the server itself run as real processes with a
timeout, so a command that serves on instead of refusing fails the row instead of hanging.
Rows fixed on another branch are listed in `FIXED_ON_BRANCH` (strict xfail until that branch lands; the
branch that lands deletes its entry).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cli_support import invoke, judge_rows, log_rows, write_jsonl

from uxbench.extras import installed

KEY = "sk-proj-QXZJWKVYbadinputKEY0123456789"


def _failing_judge(base_url: str) -> tuple[str, ...]:
    """A judge that answers the check before a run (`GET /models`) and fails every call (HTTP 500)."""
    return ("-J", f"base_url={base_url}", "-J", "api_key_env=UXBENCH_NO_KEY", "-J", "timeout=5")


@dataclass(frozen=True)
class Row:
    args: tuple[str, ...]
    """The command line; `{name}` is replaced by the fixture path of that name, `{tmp}` by the row's tmp dir."""
    codes: tuple[int, ...] = (2,)
    needle: str | None = None
    """Text the message must hold (what is wrong, or what to do)."""
    server: bool = False
    """Run as a real process with a timeout and a memory limit (the command would serve if it did not refuse, or
    could run away on a hostile file)."""
    env: dict[str, str] = field(default_factory=dict)


def R(*args: str, codes: tuple[int, ...] = (2,), needle: str | None = None, server: bool = False,
      **env: str) -> Row:
    return Row(tuple(args), codes, needle, server, env)


FIXED_ON_BRANCH: dict[str, tuple[str, ...]] = {
    # Rows (and tests) that fail on this branch and pass once the named branch is merged: strict xfail, so a
    # row that starts passing is noticed. When a branch lands, delete its line here (nothing else to edit).
}
_OWNER = {name: branch for branch, names in FIXED_ON_BRANCH.items() for name in names}


def _owned(name: str) -> list[pytest.MarkDecorator]:
    """The strict xfail mark of a row or test fixed on another branch (`FIXED_ON_BRANCH`), else none."""
    branch = _OWNER.get(name)
    return [pytest.mark.xfail(strict=True, reason=f"fixed on branch {branch}")] if branch else []


T1 = ("run", "--model", "scripted:always-good", "--data", "{judge}", "--out", "{tmp}/run", "--quiet")
EVAL = ("run", "--task", "eval", "--model", "scripted:echo", "--data", "{eval}", "--out", "{tmp}/run", "--quiet")
EVAL_J = (*EVAL, "--judge", "scripted:always-good")


def _numbers(base: tuple[str, ...], option: str, values: tuple[str, ...], needle: str | None = None) -> list[Row]:
    return [R(*base, option, v, needle=needle if v.lstrip("-").isdigit() else None) for v in values]


ROWS: dict[str, Row] = {}


def add(name: str, row: Row) -> None:
    assert name not in ROWS, name
    ROWS[name] = row


# -- item 2: no traceback --------------------------------------------------------------------------------
add("surrogate-run", R(*T1[:3], "--data", "{surrogate}", "--out", "{tmp}/run", "--quiet", needle="lone surrogate"))
add("surrogate-validate", R("data", "validate", "{surrogate}", codes=(1,), needle="lone surrogate"))
add("surrogate-mine", R("mine", "run", "{log_surrogate}", "--out", "{tmp}/mine", "--no-llm", "--quiet",
                        needle="lone surrogate"))
add("surrogate-stats", R("data", "stats", "{surrogate}", needle="lone surrogate"))
for v in ("0", "-5"):
    add(f"n-boot-run-{v}", R(*T1, "--n-boot", v, needle="--n-boot"))
    add(f"n-boot-score-{v}", R("score", "{eval_run}", "--judge", "scripted:always-bad", "--n-boot", v,
                               needle="--n-boot"))
add("curation-not-sqlite", R(*T1, "--curation", "{notsqlite}", needle="not a SQLite database"))
add("curation-cut", R(*T1, "--curation", "{cut_sqlite}", needle="cut short"))
add("mine-engine-bogus", R("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--engine", "bogus",
                           needle="--engine"))
add("study-damaged-results", R("human", "results", "{bad_study}", needle="study.sqlite"))
add("study-damaged-export", R("human", "export", "{bad_study}", needle="study.sqlite"))
add("study-damaged-serve", R("human", "serve", "{bad_study}", "--port", "0", needle="study.sqlite"))
add("samples-cut-rerun", R("run", "--model", "scripted:always-good", "--data", "{judge}", "--out", "{cut_run}",
                           "--quiet", needle="recover"))
add("samples-cut-report", R("report", "{cut_run}", "--n-boot", "10", needle="damaged"))
add("leaderboard-unknown-judge", R("leaderboard", "{eval_run}", "--judge", "nosuch:judge"))
add("site-unknown-judge", R("site", "build", "{eval_run}", "--out", "{tmp}/site", "--judge", "nosuch:judge"))
add("leaderboard-failed-primaries", R("leaderboard", "{failed_a}", "{failed_b}", codes=(0, 2)))
add("judge-train-c-negative", R("judge", "train", "--data", "{judge_many}", "--out", "{tmp}/jt", "--encoder",
                                "hashing", "--c", "-1"))

# -- item 3: no silent success ---------------------------------------------------------------------------
for v in ("0", "-1"):
    add(f"concurrency-run-{v}", R(*T1, "--concurrency", v, needle="--concurrency"))
    add(f"concurrency-score-{v}", R("score", "{eval_run}", "--judge", "scripted:always-bad", "--concurrency", v))
    add(f"concurrency-pairwise-{v}", R("pairwise", "{eval_run}", "{eval_run2}", "--judge", "scripted:always-good",
                                       "--concurrency", v))
add("likert-scale-without-likert", R(*T1, "--likert-scale", "5", needle="--formulation likert"))
add("likert-threshold-without-likert", R(*T1, "--likert-threshold", "3", needle="--formulation likert"))
for v in ("3", "8", "0", "-4"):
    add(f"likert-scale-{v}", R(*T1, "--formulation", "likert", "--likert-scale", v, needle="between 4 and 7"))
add("likert-threshold-above-scale", R(*T1, "--formulation", "likert", "--likert-threshold", "9"))
add("few-shot-k-without-few-shot", R(*T1, "--few-shot-k", "3", needle="--strategy few_shot"))
add("few-shot-k-zero", R(*T1, "--strategy", "few_shot", "--few-shot-k", "0"))
add("few-shot-k-too-many", R(*T1, "--strategy", "few_shot", "--few-shot-k", "99", needle="examples"))
add("judge-strategy-under-grm", R(*EVAL_J, "--judge-strategy", "cot", needle="--judge-mode pointwise"))
add("judge-strategy-under-grm-score", R("score", "{eval_run}", "--judge", "scripted:always-bad",
                                        "--judge-strategy", "cot", needle="--judge-mode pointwise"))
add("grm-threshold-under-pointwise", R(*EVAL_J, "--judge-mode", "pointwise", "--grm-threshold", "0.6"))
add("mine-audit-M-without-model", R("mine", "audit", "{mined}", "-M", "base_url=http://x", needle="--model"))
add("mine-audit-cache-without-model", R("mine", "audit", "{mined}", "--cache-path", "{tmp}/c.sqlite"))
add("mine-audit-concurrency-without-model", R("mine", "audit", "{mined}", "--concurrency", "3"))
for v in ("-1", "-0.5"):
    add(f"temperature-{v}", R(*T1, "--temperature", v, needle="--temperature"))
add("reasoning-effort-extreme", R(*T1, "--reasoning-effort", "extreme", needle="--reasoning-effort"))
add("task-twice", R(*T1, "--task", "judge,judge", needle="twice"))
add("task-eval-twice", R(*EVAL, "--task", "eval,judge,eval", needle="twice"))
add("model-empty", R("run", "--model", "", "--data", "{judge}", "--out", "{tmp}/run", needle="--model is empty"))
add("model-blank", R("run", "--model", "  ", "--data", "{judge}", "--out", "{tmp}/run", needle="--model is empty"))
add("complaint-list", R("run", "--task", "recovery", "--model", "scripted:echo", "--data", "{recovery_list}",
                        "--out", "{tmp}/run", "--quiet", needle="list of 2 texts"))
add("stats-format-xml", R("data", "stats", "{judge}", "--format", "xml", needle="--format"))
add("validate-max-errors-negative", R("data", "validate", "{judge}", "--max-errors", "-1", needle="--max-errors"))
add("pairwise-same-run", R("pairwise", "{eval_run}", "{eval_run}", "--judge", "scripted:always-good",
                           needle="same"))
add("pairwise-copied-run", R("pairwise", "{eval_run}", "{eval_run_copy}", "--judge", "scripted:always-good",
                             needle="same run"))
add("judge-serve-max-batch-0", R("judge", "serve", "scripted:always-good", "--port", "0", "--max-batch", "0",
                                 server=True))
add("verdict-from-logprobs-no-logprobs", R("run", "--model", "openai:m", "-M", "base_url={no_logprobs_url}",
                                           "-M", "api_key_env=UXBENCH_NO_KEY", "--data", "{judge}", "--out",
                                           "{tmp}/run", "--quiet", "--no-cache", "--verdict-from", "logprobs",
                                           codes=(1,), needle="no log-probabilities"))

# -- item 4: clear errors --------------------------------------------------------------------------------
add("task2-file-as-task1", R(*T1[:3], "--data", "{eval}", "--out", "{tmp}/run", needle="--task eval"))
add("task3-file-as-task1", R(*T1[:3], "--data", "{recovery}", "--out", "{tmp}/run", needle="--task recovery"))
add("data-empty-string", R(*T1[:3], "--data", "", "--out", "{tmp}/run", needle="--data is empty"))
add("view-bad-host", R("view", "{eval_run}", "--host", "999.1.1.1", server=True, needle="error: .*999.1.1.1"))
add("view-index-dir-file", R("view", "{eval_run}", "--index-dir", "{afile}", "--port", "0"))
add("judge-with-task1-and-J", R(*T1, "--judge", "scripted:always-good", "-J", "x=1", needle="Task 1 has no judge"))
add("score-new-judge-other-failures", R("score", "{failed_a}", "--judge", "scripted:always-good", "--judge-mode",
                                        "pointwise", "--quiet", codes=(0,), needle="other judges"))

# -- item 1: secrets in arguments --------------------------------------------------------------------------
add("api-key-env-is-a-key", R(*T1[:3], "--model", "openai:m", "-M", f"api_key_env={KEY}", "--data", "{judge}",
                              "--out", "{tmp}/run", needle="looks like an API key"))
add("api-key-env-bad-name", R("run", "--model", "openai:m", "-M", "api_key_env=my-key", "--data", "{judge}",
                              "--out", "{tmp}/run", needle="name of an environment variable"))
add("api-key-env-mine", R("mine", "run", "{log}", "--out", "{tmp}/mine", "--model", "openai:m", "-M",
                          f"api_key_env={KEY}", needle="looks like an API key"))
add("header-list", R("run", "--model", "openai:m", "-M", 'extra_headers={"Authorization": ["Bearer x-123456"]}',
                     "--data", "{judge}", "--out", "{tmp}/run", needle="is a list"))
add("header-object", R("run", "--model", "openai:m", "-M", 'extra_headers={"X-A": {"k": "v"}}', "--data",
                       "{judge}", "--out", "{tmp}/run", needle="is a object"))
add("header-null", R("run", "--model", "openai:m", "-M", 'extra_headers={"X-A": null}', "--data", "{judge}",
                     "--out", "{tmp}/run", needle="null"))
add("salt-short", R("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", needle="at least 16",
                    UXBENCH_DEID_SALT="a"))
add("salt-fifteen", R("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", needle="at least 16",
                      UXBENCH_DEID_SALT="fifteen-chars-x"))

# -- run: every other option over hostile values -----------------------------------------------------------
for option, values in {
    "--n-boot": ("abc", "1.5"), "--max-attempts": ("0", "-1", "x"), "--timeout": ("0", "-3", "nan?"),
    "--limit": ("0", "-2", "many"), "--max-tokens": ("0", "-10", "1e3"), "--concurrency": ("x", "2.5", ""),
    "--temperature": ("hot", ""), "--seed": ("1.5",), "--ci-seed": ("x",),
}.items():
    for v in values:
        add(f"run{option}={v!r}", R(*T1, option, v))
for option, value in (("--formulation", "xml"), ("--formulation", ""), ("--strategy", "bogus"), ("--lang", "fr"),
                      ("--verdict-from", "bogus"), ("--reasoning-effort", ""), ("--task", "bogus"),
                      ("--task", ""), ("--task", ",,"), ("--task", "judge,,evl")):
    add(f"run{option}={value!r}", R(*T1, option, value))
add("verdict-logprobs-likert", R(*T1, "--formulation", "likert", "--verdict-from", "logprobs"))
add("judge-mode-bogus", R(*EVAL_J, "--judge-mode", "bogus"))
add("judge-lang-fr", R(*EVAL_J, "--judge-lang", "fr"))
add("grm-threshold-1.5", R(*EVAL_J, "--grm-threshold", "1.5"))
add("grm-threshold-neg", R(*EVAL_J, "--grm-threshold", "-0.1"))
add("judge-arg-without-judge", R("run", "--task", "eval", "--model", "scripted:echo", "--data", "{eval}",
                                 "-J", "x=1", "--out", "{tmp}/run", needle="--judge"))
add("judge-strategy-without-judge", R("run", "--task", "eval", "--model", "scripted:echo", "--data", "{eval}",
                                      "--judge-strategy", "cot", "--out", "{tmp}/run"))
add("judge-with-task1", R(*T1, "--judge", "scripted:always-good", needle="Task 1 has no judge"))
add("judge-lang-with-task1", R(*T1, "--judge-lang", "zh", needle="Task 1 has no judge"))
add("seed-with-task1", R(*T1, "--seed", "3", needle="--seed"))
add("system-prompt-with-task1", R(*T1, "--system-prompt", "ux"))
add("recovery-layout-with-task1", R(*T1, "--recovery-layout", "coach"))
add("recovery-strategy-with-eval", R(*EVAL, "--recovery-strategy", "cot"))
add("strategy-model-with-task1", R(*T1, "--strategy-model", "scripted:always-good"))
add("strategy-arg-without-model", R(*T1, "--strategy-arg", "x=1"))
add("no-cache-and-cache-path", R(*T1, "--no-cache", "--cache-path", "{tmp}/c.sqlite", needle="--no-cache"))
add("M-unknown-arg", R(*T1[:3], "--model", "openai:m", "-M", "bogus=1", "--data", "{judge}", "--out", "{tmp}/r"))
add("M-no-equals", R(*T1, "-M", "noequals"))
add("M-empty-key", R(*T1, "-M", "=x"))
add("M-typo-base-url", R("run", "--model", "openai:m", "-M", "baseurl=http://x", "--data", "{judge}",
                         "--out", "{tmp}/r", needle="base_url"))
add("M-ftp-url", R("run", "--model", "openai:m", "-M", "base_url=ftp://x", "--data", "{judge}", "--out", "{tmp}/r"))
add("M-timeout-negative", R("run", "--model", "openai:m", "-M", "timeout=-1", "--data", "{judge}", "--out", "{tmp}/r"))
add("M-headers-not-json", R("run", "--model", "openai:m", "-M", "extra_headers=nope", "--data", "{judge}",
                            "--out", "{tmp}/r"))
add("M-body-not-object", R("run", "--model", "openai:m", "-M", "extra_body=[1,2]", "--data", "{judge}",
                           "--out", "{tmp}/r"))
add("M-max-tokens-field", R("run", "--model", "openai:m", "-M", "max_tokens_field=tokens", "--data", "{judge}",
                            "--out", "{tmp}/r"))
add("model-unknown-provider", R(*T1[:3], "--model", "nosuch:x", "--data", "{judge}", "--out", "{tmp}/r"))
add("model-no-colon", R(*T1[:3], "--model", "openai", "--data", "{judge}", "--out", "{tmp}/r"))
add("model-scripted-bogus", R(*T1[:3], "--model", "scripted:bogus", "--data", "{judge}", "--out", "{tmp}/r"))
add("model-hf-missing-path", R(*T1[:3], "--model", "hf:/nonexistent/model/dir", "--data", "{judge}",
                               "--out", "{tmp}/r"))
add("model-replay-missing", R(*T1[:3], "--model", "replay:/nonexistent.jsonl", "--data", "{judge}",
                              "--out", "{tmp}/r"))
for name in ("empty", "binary", "truncated", "notjson_json", "wrong_types", "label_bool", "label_zero",
             "query_int", "history_str", "id_list", "array_row", "deep", "nul_bytes", "utf16", "huge_int_id"):
    add(f"data-{name}", R(*T1[:3], "--data", "{" + name + "}", "--out", "{tmp}/run", "--quiet"))
    add(f"validate-{name}", R("data", "validate", "{" + name + "}", codes=(1, 2)))
    add(f"stats-{name}", R("data", "stats", "{" + name + "}"))
add("data-missing-file", R(*T1[:3], "--data", "{tmp}/nope.jsonl", "--out", "{tmp}/run"))
add("data-empty-dir", R(*T1[:3], "--data", "{emptydir}", "--out", "{tmp}/run"))
add("data-wrong-suffix", R(*T1[:3], "--data", "{afile}", "--out", "{tmp}/run"))
add("data-bad-parquet", R(*T1[:3], "--data", "{bad_parquet}", "--out", "{tmp}/run"))
add("data-gz-not-gzip", R(*T1[:3], "--data", "{bad_gz}", "--out", "{tmp}/run"))
add("data-hf-empty", R(*T1[:3], "--data", "hf:", "--out", "{tmp}/run"))
add("data-log-as-task", R(*T1[:3], "--data", "{log}", "--out", "{tmp}/run"))
add("out-is-a-file", R(*T1[:6], "{afile}", "--quiet"))
add("out-foreign-dir", R(*T1[:6], "{foreign_dir}", "--quiet", needle="not a uxbench run directory"))
add("out-other-config", R(*T1[:6], "{t1_run}", "--quiet", "--strategy", "cot", needle="different configuration"))
add("curation-directory", R(*T1, "--curation", "{emptydir}"))
add("unknown-option", R(*T1, "--concurency", "3", needle="--concurrency"))
add("unknown-command", R("rn", needle="run"))
add("providers-extra-arg", R("providers", "extra"))

# -- report, score, pairwise, bias, leaderboard, plot, site ------------------------------------------------
for name, args in {
    "report-missing": ("report", "{tmp}/nope"), "report-not-run": ("report", "{emptydir}"),
    "report-file": ("report", "{afile}"), "report-format-xml": ("report", "{t1_run}", "--format", "xml"),
    "report-format-text": ("report", "{t1_run}", "--format", "text"),
    "report-n-boot-0": ("report", "{t1_run}", "--n-boot", "0"),
    "report-n-boot-neg": ("report", "{t1_run}", "--n-boot", "-3"), "report-mined": ("report", "{mined}"),
    "report-no-args": ("report",),
    "score-task1": ("score", "{t1_run}", "--judge", "scripted:always-good"),
    "score-missing": ("score", "{tmp}/nope", "--judge", "scripted:always-good"),
    "score-no-judge": ("score", "{eval_run}"), "score-judge-empty": ("score", "{eval_run}", "--judge", ""),
    "score-judge-mode-bogus": ("score", "{eval_run}", "--judge", "scripted:always-good", "--judge-mode", "x"),
    "score-grm-under-pointwise": ("score", "{eval_run}", "--judge", "scripted:always-good", "--judge-mode",
                                  "pointwise", "--grm-threshold", "0.4"),
    "score-judge-arg-without-judge": ("score", "{eval_run}", "--strategy-model", "scripted:x", "-J", "a=1"),
    "score-strategy-arg-alone": ("score", "{eval_run}", "--judge", "scripted:always-good", "--strategy-arg", "a=1"),
    "score-max-attempts-0": ("score", "{eval_run}", "--judge", "scripted:always-good", "--max-attempts", "0"),
    "score-timeout-0": ("score", "{eval_run}", "--judge", "scripted:always-good", "--timeout", "0"),
    "score-unknown-provider": ("score", "{eval_run}", "--judge", "nosuch:x"),
    "score-mined": ("score", "{mined}", "--judge", "scripted:always-good"),
    "pairwise-missing-b": ("pairwise", "{eval_run}", "{tmp}/nope", "--judge", "scripted:always-good"),
    "pairwise-task1": ("pairwise", "{t1_run}", "{t1_run_b}", "--judge", "scripted:always-good"),
    "pairwise-format-xml": ("pairwise", "{eval_run}", "{eval_run2}", "--judge", "scripted:x", "--format", "xml"),
    "pairwise-judge-empty": ("pairwise", "{eval_run}", "{eval_run2}", "--judge", ""),
    "pairwise-limit-0": ("pairwise", "{eval_run}", "{eval_run2}", "--judge", "scripted:always-good", "--limit", "0"),
    "pairwise-temp-neg": ("pairwise", "{eval_run}", "{eval_run2}", "--judge", "scripted:always-good",
                          "--judge-temperature", "-1"),
    "pairwise-max-tokens-0": ("pairwise", "{eval_run}", "{eval_run2}", "--judge", "scripted:always-good",
                              "--judge-max-tokens", "0"),
    "pairwise-strategy-bogus": ("pairwise", "{eval_run}", "{eval_run2}", "--judge", "scripted:always-good",
                                "--judge-strategy", "bogus"),
    "pairwise-no-judge": ("pairwise", "{eval_run}", "{eval_run2}"),
    "bias-missing": ("bias", "{tmp}/nope"), "bias-format-xml": ("bias", "{eval_run}", "--format", "xml"),
    "bias-n-boot-0": ("bias", "{eval_run}", "--n-boot", "0"), "bias-empty-dir": ("bias", "{emptydir}"),
    "bias-width-10": ("bias", "{eval_run}", "--width", "10"), "bias-models-missing": ("bias", "{eval_run}",
                                                                                     "--models", "{tmp}/no.yaml"),
    "bias-models-not-yaml": ("bias", "{eval_run}", "--models", "{binary}"),
    "leaderboard-missing": ("leaderboard", "{tmp}/nope"),
    "leaderboard-format-xml": ("leaderboard", "{t1_run}", "--format", "xml"),
    "leaderboard-n-boot-0": ("leaderboard", "{t1_run}", "--n-boot", "0"),
    "leaderboard-width-10": ("leaderboard", "{t1_run}", "--width", "10"),
    "leaderboard-empty-dir": ("leaderboard", "{emptydir}"), "leaderboard-file": ("leaderboard", "{afile}"),
    "leaderboard-no-args": ("leaderboard",),
    "plot-kind-bogus": ("plot", "{t1_run}", "--kind", "bogus", "--out", "{tmp}/p.png"),
    "plot-out-txt": ("plot", "{t1_run}", "--kind", "scenario", "--out", "{tmp}/p.txt"),
    "plot-missing": ("plot", "{tmp}/nope", "--kind", "scenario", "--out", "{tmp}/p.png"),
    "plot-n-boot-0": ("plot", "{t1_run}", "--kind", "scaling", "--out", "{tmp}/p.png", "--n-boot", "0"),
    "plot-funnel-on-run": ("plot", "{t1_run}", "--kind", "funnel", "--out", "{tmp}/p.png"),
    "plot-by-bogus": ("plot", "{t1_run}", "--kind", "scaling", "--by", "bogus", "--out", "{tmp}/p.png"),
    "plot-no-kind": ("plot", "{t1_run}", "--out", "{tmp}/p.png"),
    "site-missing": ("site", "build", "{tmp}/nope", "--out", "{tmp}/site"),
    "site-n-boot-0": ("site", "build", "{t1_run}", "--out", "{tmp}/site", "--n-boot", "0"),
    "site-out-file": ("site", "build", "{t1_run}", "--out", "{afile}"),
    "site-no-out": ("site", "build", "{t1_run}"),
}.items():
    add(name, R(*args))

# -- data, mine -------------------------------------------------------------------------------------------
for name, args in {
    "validate-empty-path": ("data", "validate", ""), "validate-missing": ("data", "validate", "{tmp}/nope"),
    "validate-task-bogus": ("data", "validate", "{judge}", "--task", "bogus"),
    "validate-max-errors-x": ("data", "validate", "{judge}", "--max-errors", "x"),
    "stats-empty-path": ("data", "stats", ""), "stats-missing": ("data", "stats", "{tmp}/nope"),
    "stats-task-bogus": ("data", "stats", "{judge}", "--task", "bogus"),
    "stats-format-md": ("data", "stats", "{judge}", "--format", "text"),
    "mine-no-logs": ("mine", "run", "--out", "{tmp}/mine"), "mine-no-out": ("mine", "run", "{log}"),
    "mine-empty-log-name": ("mine", "run", "", "--out", "{tmp}/mine", "--no-llm"),
    "mine-missing-log": ("mine", "run", "{tmp}/nope.jsonl", "--out", "{tmp}/mine", "--no-llm"),
    "mine-empty-log": ("mine", "run", "{empty}", "--out", "{tmp}/mine", "--no-llm"),
    "mine-binary-log": ("mine", "run", "{binary}", "--out", "{tmp}/mine", "--no-llm"),
    "mine-truncated-log": ("mine", "run", "{truncated}", "--out", "{tmp}/mine", "--no-llm"),
    "mine-task1-file": ("mine", "run", "{judge}", "--out", "{tmp}/mine", "--no-llm"),
    "mine-format-bogus": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--format", "bogus"),
    "mine-ray-address-local": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--ray-address", "auto"),
    "mine-no-llm-model": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--model", "openai:x"),
    "mine-no-llm-M": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "-M", "base_url=http://x"),
    "mine-no-llm-concurrency": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--concurrency", "4"),
    "mine-no-llm-cache-path": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--cache-path", "{tmp}/c"),
    "mine-no-llm-agent-tokens": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--agent-max-tokens",
                                 "100"),
    "mine-no-llm-llm-signals": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--llm-signals"),
    "mine-no-model": ("mine", "run", "{log}", "--out", "{tmp}/mine"),
    "mine-model-empty": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--model", ""),
    "mine-workers-0": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--workers", "0"),
    "mine-batch-0": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--batch-size", "0"),
    "mine-concurrency-0": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--model", "scripted:x", "--concurrency",
                           "0"),
    "mine-threshold-2": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--dissatisfied-threshold", "2"),
    "mine-signals-bogus": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--signals", "bogus"),
    "mine-signals-learned-missing": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--signals",
                                     "learned:{tmp}/nope"),
    "mine-out-is-file": ("mine", "run", "{log}", "--out", "{afile}", "--no-llm"),
    "mine-out-is-run": ("mine", "run", "{log}", "--out", "{t1_run}", "--no-llm"),
    "mine-agent-tokens-1": ("mine", "run", "{log}", "--out", "{tmp}/mine", "--model", "scripted:x",
                            "--agent-max-tokens", "1"),
    "mine-report-missing": ("mine", "report", "{tmp}/nope"), "mine-report-run": ("mine", "report", "{t1_run}"),
    "mine-report-format": ("mine", "report", "{mined}", "--format", "xml"),
    "mine-report-top-0": ("mine", "report", "{mined}", "--top", "0"),
    "mine-report-empty-dir": ("mine", "report", "{emptydir}"),
    "mine-audit-missing": ("mine", "audit", "{tmp}/nope"), "mine-audit-run": ("mine", "audit", "{t1_run}"),
    "mine-audit-format": ("mine", "audit", "{mined}", "--format", "csv"),
    "mine-audit-model-empty": ("mine", "audit", "{mined}", "--model", ""),
    "mine-audit-concurrency-0": ("mine", "audit", "{mined}", "--model", "scripted:x", "--concurrency", "0"),
    "eval-signals-missing": ("mine", "eval-signals", "--labels", "{tmp}/nope.jsonl", "--log", "{log}"),
    "eval-signals-binary": ("mine", "eval-signals", "--labels", "{binary}", "--log", "{log}"),
    "train-signals-missing": ("mine", "train-signals", "--labels", "{tmp}/nope.jsonl", "--log", "{log}", "--out",
                              "{tmp}/ts"),
}.items():
    add(name, R(*args))

# -- human, view, judge -----------------------------------------------------------------------------------
for name, args in {
    "human-new-n-0": ("human", "new", "--from", "{t1_run}", "--out", "{tmp}/s", "--n", "0"),
    "human-new-annotators-0": ("human", "new", "--from", "{t1_run}", "--out", "{tmp}/s", "--annotators", "0"),
    "human-new-mode-bogus": ("human", "new", "--from", "{t1_run}", "--out", "{tmp}/s", "--mode", "bogus"),
    "human-new-missing": ("human", "new", "--from", "{tmp}/nope", "--out", "{tmp}/s"),
    "human-new-mined": ("human", "new", "--from", "{mined}", "--out", "{tmp}/s"),
    "human-new-binary": ("human", "new", "--from", "{binary}", "--out", "{tmp}/s"),
    "human-new-pairwise-one": ("human", "new", "--from", "{eval_run}", "--out", "{tmp}/s", "--mode", "pairwise"),
    "human-new-out-exists": ("human", "new", "--from", "{t1_run}", "--out", "{study}"),
    "human-results-missing": ("human", "results", "{tmp}/nope"),
    "human-results-format": ("human", "results", "{study}", "--format", "xml"),
    "human-results-empty-dir": ("human", "results", "{emptydir}"),
    "human-export-missing": ("human", "export", "{tmp}/nope"),
    "human-study-cut-results": ("human", "results", "{cut_study}"),
    "judge-train-missing": ("judge", "train", "--data", "{tmp}/nope.jsonl", "--out", "{tmp}/jt"),
    "judge-train-binary": ("judge", "train", "--data", "{binary}", "--out", "{tmp}/jt"),
    "judge-eval-missing": ("judge", "eval", "--judge", "scripted:always-good", "--data", "{tmp}/nope.jsonl"),
    "judge-eval-binary": ("judge", "eval", "--judge", "scripted:always-good", "--data", "{binary}"),
}.items():
    add(name, R(*args))
add("human-serve-missing", R("human", "serve", "{tmp}/nope", "--port", "0"))

# uxbench plan (issue 19), personas and sim (issue 18)
add("plan-difference-zero", R("plan", "--difference", "0", needle="--difference"))
add("plan-task-bogus", R("plan", "--difference", "0.05", "--task", "bogus", needle="--task"))
add("plan-rate-out-of-range", R("plan", "--difference", "0.05", "--rate", "2", needle="--rate"))
add("plan-rate-edge", R("plan", "--difference", "0.05", "--rate", "0.99", needle="not both in [0, 1]"))
add("plan-nothing-given", R("plan", "--difference", "0.05", needle="--pilot"))
add("personas-validate-missing", R("personas", "validate", "{tmp}/nope.yaml", needle="no such file"))
add("personas-validate-bad-yaml", R("personas", "validate", "{notjson_json}", codes=(1, 2)))
add("personas-validate-unknown-field", R("personas", "validate", "{bad_persona}", codes=(1,), needle="line 1"))
add("personas-list-empty-dir", R("personas", "list", "{emptydir}", needle="holds no persona"))
add("personas-list-format", R("personas", "list", "--format", "xml", needle="--format"))
add("personas-build-missing", R("personas", "build", "--from", "{tmp}/nope", needle="no such directory"))
add("personas-build-not-mined", R("personas", "build", "--from", "{emptydir}", needle="not a mining output"))
add("sim-run-no-personas", R("sim", "run", "--personas", "{emptydir}", "--model", "scripted:always-good",
                             "--simulator", "scripted:user", "--out", "{tmp}/sim", needle="holds no persona"))
add("sim-run-max-turns-0", R("sim", "run", "--max-turns", "0", "--model", "scripted:always-good", "--simulator",
                             "scripted:user", "--out", "{tmp}/sim"))
add("sim-run-mode-bogus", R("sim", "run", "--mode", "bogus", "--model", "scripted:always-good", "--simulator",
                            "scripted:user", "--out", "{tmp}/sim", needle="--mode"))
add("sim-run-trials-0", R("sim", "run", "--trials", "0", "--model", "scripted:always-good", "--simulator",
                          "scripted:user", "--out", "{tmp}/sim"))
add("sim-run-simulator-typo", R("sim", "run", "--model", "scripted:always-good", "--simulator", "scripted:usr",
                                "--out", "{tmp}/sim", needle="Did you mean"))
add("sim-compare-not-runs", R("sim", "compare", "{emptydir}", "{emptydir}", needle="not a `uxbench sim run`"))
add("sim-compare-a-task-run", R("sim", "compare", "{t1_run}", "{t1_run}", needle="not a `uxbench sim run`"))
add("sim-signals-missing", R("sim", "signals", "{tmp}/nope", needle="not a `uxbench sim run`"))
add("sim-fidelity-not-run", R("sim", "fidelity", "{emptydir}", needle="not a `uxbench sim run`"))
add("sim-frontier-one", R("sim", "frontier", "{tmp}/nope", needle="two or more"))
add("sim-proxies-one", R("sim", "proxies", "{tmp}/nope", needle="two or more"))
add("sim-proxies-not-runs", R("sim", "proxies", "{emptydir}", "{emptydir}", needle="not a `uxbench sim run`"))
add("sim-sensitivity-not-run", R("sim", "sensitivity", "{emptydir}", needle="not a `uxbench sim run`"))
add("sim-validate-real-missing", R("sim", "validate", "{emptydir}", "--real", "{tmp}/nope", needle="--real"))
add("sim-validate-nothing", R("sim", "validate", "--real", "{emptydir}", needle="sim run directories"))
add("sim-rubric-agreement-no-options", R("sim", "rubric-agreement"))
add("sim-rubric-agreement-missing", R("sim", "rubric-agreement", "--real", "{tmp}/nope", "--personas", "demo",
                                      "--judge", "scripted:always-good"))
add("view-missing", R("view", "{tmp}/nope", "--port", "0"))
add("view-port-bad", R("view", "{eval_run}", "--port", "70000"))

# -- issue 28: hostile files and failing judges on the new surfaces ---------------------------------------------
# Item 1: every YAML or JSON a user hands in, an alias bomb ("billion laughs", 1 KB) and deep nesting (5,000
# levels); run as processes under a memory limit (`_serve`), so a runaway fails the row, not the machine.
SIM = ("sim", "run", "--model", "scripted:always-good", "--simulator", "scripted:user", "--out", "{tmp}/sim")
RUBRIC = (*T1, "--formulation", "rubric", "--rubric")
for kind, bomb, needle in (("alias-bomb", "{persona_bomb}", "aliases repeat more than"),
                           ("deep", "{persona_deep}", "deeper than 64 levels")):
    add(f"personas-validate-{kind}", R("personas", "validate", bomb, codes=(1,), needle=needle, server=True))
    add(f"personas-list-{kind}", R("personas", "list", bomb, needle=needle, server=True))
    add(f"sim-run-personas-{kind}", R(*SIM, "--personas", bomb, needle=needle, server=True))
    add(f"rubric-file-{kind}", R(*RUBRIC, bomb, needle=needle, server=True))
    add(f"rubric-agreement-general-{kind}", R("sim", "rubric-agreement", "--real", "{mined}", "--personas", "demo",
                                              "--judge", "scripted:always-good", "--general", bomb, needle=needle,
                                              server=True))
    add(f"leaderboard-models-{kind}", R("leaderboard", "{t1_run}", "--models", bomb, needle=needle, server=True))
    add(f"bias-models-{kind}", R("bias", "{eval_run}", "--models", bomb, needle=needle, server=True))
    add(f"env-models-{kind}", R("leaderboard", "{t1_run}", needle=needle, server=True, UXBENCH_MODELS=bomb))
    add(f"env-prices-{kind}", R(*T1, needle=needle, server=True, UXBENCH_PRICES=bomb))
add("personas-list-deep-jsonl", R("personas", "list", "{persona_deep_jsonl}", needle="deeper than 64", server=True))
add("personas-meta-not-json", R("personas", "validate", "{persona_binary_meta}", codes=(1,), needle="cannot be written",
                                server=True))
add("personas-list-meta-not-json", R("personas", "list", "{persona_binary_meta}", needle="cannot be written",
                                     server=True))
add("personas-nesting-300", R("personas", "list", "{persona_300}", needle="deeper than 64", server=True))
add("env-prices-deep-json", R(*T1, needle="deeper than 64", server=True, UXBENCH_PRICES="{deep_json}"))
add("scripted-rules-deep", R(*T1[:3], "--model", "scripted:file:{deep_json}", "--data", "{judge}", "--out",
                             "{tmp}/run", needle="deeper than 64", server=True))
add("replay-deep", R(*T1[:3], "--model", "replay:{deep_jsonl}", "--data", "{judge}", "--out", "{tmp}/run",
                     needle="deeper than 64", server=True))
add("M-extra-body-deep", R("run", "--model", "openai:m", "-M", "extra_body=" + "[" * 5000 + "]" * 5000, "--data",
                           "{judge}", "--out", "{tmp}/r", needle="deeper than 64", server=True))
add("data-nesting-300", R(*T1[:3], "--data", "{data_300}", "--out", "{tmp}/run", needle="deeper than 64",
                          server=True))
add("calibration-manifest-deep", R(*EVAL, "--judge", "scripted:always-good", "--calibration", "{deep_manifest_run}",
                                   needle="deeper than 64", server=True))
add("eval-signals-labels-deep", R("mine", "eval-signals", "--labels", "{deep_jsonl}", "--log", "{log}",
                                  needle="deeper than 64", server=True))
add("signals-learned-deep", R("mine", "run", "{log}", "--out", "{tmp}/mine", "--no-llm", "--signals",
                              "learned:{deep_model_dir}", needle="deeper than 64", server=True))
# Item 2: a judge that fails is a failure (exit 2 with the reason, the 401 named), never figures computed without it
for name, url, needle in (("401", "{judge_401_url}", "HTTP 401"), ("no-format", "{judge_text_url}", "answered none")):
    add(f"sim-fidelity-judge-{name}", R("sim", "fidelity", "{sim_run}", "--judge", "openai:j", "-J",
                                        f"base_url={url}", "-J", "api_key_env=UXBENCH_NO_KEY", "--quiet",
                                        needle=needle))
add("rubric-agreement-judge-401", R("sim", "rubric-agreement", "--real", "{ra_mined}", "--personas",
                                    "{ra_personas}", "--judge", "openai:j", "-J", "base_url={judge_401_url}", "-J",
                                    "api_key_env=UXBENCH_NO_KEY", "--quiet", needle="HTTP 401"))
add("rubric-agreement-judge-no-format", R("sim", "rubric-agreement", "--real", "{ra_mined}", "--personas",
                                          "{ra_personas}", "--judge", "openai:j", "-J", "base_url={judge_text_url}",
                                          "-J", "api_key_env=UXBENCH_NO_KEY", "--quiet", needle="scored none"))
# Item 3: values that make numbers silently wrong
add("sim-run-temperature-neg", R(*SIM, "--temperature", "-2", needle="--temperature"))
add("sim-run-sim-temperature-neg", R(*SIM, "--sim-temperature", "-1", needle="--sim-temperature"))
add("sim-run-temperature-nan", R(*SIM, "--temperature", "nan", needle="--temperature"))
add("sim-run-timeout-0", R(*SIM, "--timeout", "0", needle="--timeout"))
add("rubric-weight-inf", R(*RUBRIC, "{rubric_inf}", needle="weight"))
add("rubric-weight-nan", R(*RUBRIC, "{rubric_nan}", needle="weight"))
add("sim-sensitivity-one-simulator-each", R("sim", "sensitivity", "{sim_run}", "{sim_run_other}",
                                            needle="missing under"))
add("leaderboard-calibration-measured-none", R("leaderboard", "{eval_run}", "--calibration", "{t1_run_b}",
                                               codes=(0,), needle="scored none of these runs"))
add("human-new-pairwise-same-run", R("human", "new", "--from", "{eval_run}", "--from", "{eval_run}", "--mode",
                                     "pairwise", "--out", "{tmp}/s", needle="twice"))
add("human-new-pairwise-copied-run", R("human", "new", "--from", "{eval_run}", "--from", "{eval_run_copy}",
                                       "--mode", "pairwise", "--out", "{tmp}/s", needle="same run"))
# Item 4: hosts (the requests themselves: tests/web/test_web_hosts.py, tests/judge_train/test_serve_hosts.py)
add("judge-serve-allow-host-star", R("judge", "serve", "scripted:always-good", "--port", "0", "--allow-host", "*",
                                     needle="--allow-host '*'", server=True))
add("judge-serve-allow-host-port", R("judge", "serve", "scripted:always-good", "--port", "0", "--allow-host",
                                     "evil.example.com:80", needle="not a host name", server=True))
add("view-allow-host-star", R("view", "{eval_run}", "--port", "0", "--allow-host", "*", server=True))
add("human-serve-allow-host-url", R("human", "serve", "{study}", "--port", "0", "--allow-host", "http://x/",
                                    server=True))
# Item 5: a short key given as api_key_env runs (no traceback) and is written nowhere (tests/test_secrets_e2e.py)
add("api-key-env-short-value", R("run", "--model", "openai:m", "-M", "base_url={no_logprobs_url}", "-M",
                                 "api_key_env=aB3dE5gH7jK9mN1pQr", "--data", "{judge}", "--out", "{tmp}/run",
                                 "--quiet", codes=(0,)))
# Item 6: clear errors where they were vague
add("sim-run-assessor-bogus", R(*SIM, "--assessor", "bogus", needle="--assessor takes rules"))
add("sim-run-assessor-unknown-provider", R(*SIM, "--assessor", "nosuch:x", needle="--assessor"))
add("plan-pilot-sim-run", R("plan", "--difference", "0.05", "--pilot", "{sim_run}", needle="sim run"))
add("plan-pilot-mined", R("plan", "--difference", "0.05", "--pilot", "{mined}", needle="mine run"))
add("human-new-pairwise-one-task2", R("human", "new", "--from", "{eval_run}", "--out", "{tmp}/s", "--mode",
                                      "pairwise", needle="gold labels"))
add("fit-history-still-too-long", R("run", "--model", "openai:m", "-M", "base_url={small_context_url}", "-M",
                                    "api_key_env=UXBENCH_NO_KEY", "--data", "{judge_history}", "--out", "{tmp}/run",
                                    "--no-cache", "--fit-history", codes=(0,), needle="Even with --fit-history"))
# Item 7: damaged run files
add("manifest-cut-report", R("report", "{cut_manifest_run}", needle="Move it aside"))
add("manifest-cut-rerun", R(*T1[:6], "{cut_manifest_run}", "--quiet", needle="mv "))
add("samples-db-deleted-rerun", R(*T1[:6], "{no_db_run}", codes=(0,), needle="read back"))


# -- fixtures ---------------------------------------------------------------------------------------------
def _json_lines(path: Path, rows: list[object]) -> Path:
    return write_jsonl(path, rows)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

    root = tmp_path_factory.mktemp("bad-input")
    f: dict[str, Path] = {}
    f["judge"] = _json_lines(root / "judge.jsonl", judge_rows(6))
    many = [{**row, "cid": f"{row['cid']}-{k}", "query": f"{row['query']} {k}"}
            for k in range(8) for row in judge_rows(12)]
    f["judge_many"] = _json_lines(root / "judge_many.jsonl", many)
    f["eval"] = _json_lines(root / "eval.jsonl", [{"cid": f"e{i}", "lang": "en", "query": f"how do I do {i}?"}
                                                  for i in range(4)])
    f["recovery"] = _json_lines(root / "recovery.jsonl", [
        {"cid": f"r{i}", "query": f"q {i}", "failed_response": "no.", "complaint": "that is wrong"} for i in range(3)])
    f["recovery_list"] = _json_lines(root / "recovery_list.jsonl", [
        {"cid": "r0", "query": "q", "failed_response": "no.", "complaint": ["that is", "wrong"]}])
    f["surrogate"] = root / "surrogate.jsonl"
    f["surrogate"].write_text('{"cid": "s", "ground_truth": 1, "query": "\\ud800 x", "agent_response_full": "y"}\n',
                              encoding="utf-8")
    f["log"] = _json_lines(root / "log.jsonl", log_rows())
    f["log_surrogate"] = root / "log_surrogate.jsonl"
    f["log_surrogate"].write_text(f["log"].read_text("utf-8") + '{"conversation_id": "z", "turn_index": 0, '
                                  '"role": "user", "content": "\\udc00 hi"}\n', encoding="utf-8")
    raw = {
        "empty": b"", "binary": bytes(range(256)) * 4, "truncated": b'{"cid": "x", "ground_truth": 1, "que',
        "wrong_types": b'{"cid": 1.5, "ground_truth": "maybe", "query": ["a", 1], "agent_response_full": 7}\n',
        "label_bool": b'{"cid": "b", "ground_truth": true, "query": "q", "agent_response_full": "a"}\n',
        "label_zero": b'{"cid": "z", "ground_truth": 0, "query": "q", "agent_response_full": "a"}\n',
        "query_int": b'{"cid": "q", "ground_truth": 1, "query": 12, "agent_response_full": "a"}\n',
        "history_str": b'{"cid": "h", "ground_truth": 1, "history": "abc", "query": "q", "agent_response_full": "a"}\n',
        "id_list": b'{"cid": [1], "ground_truth": 1, "query": "q", "agent_response_full": "a"}\n',
        "array_row": b"[1, 2, 3]\n", "deep": b"[" * 100000 + b"]" * 100000 + b"\n",
        "nul_bytes": b'{"cid": "n\x00", "ground_truth": 1, "query": "\x00", "agent_response_full": "\x00"}\n',
        "utf16": '{"cid": "u", "ground_truth": 1, "query": "q", "agent_response_full": "a"}\n'.encode("utf-16"),
        "huge_int_id": b'{"cid": 123456789012345678901234567890, "ground_truth": 1, "query": "q", '
                       b'"agent_response_full": "a"}\n',
    }
    for name, data in raw.items():
        f[name] = root / f"{name}.jsonl"
        f[name].write_bytes(data)
    f["notjson_json"] = root / "notjson.json"
    f["notjson_json"].write_text("{not json at all", encoding="utf-8")
    f["bad_parquet"] = root / "bad.parquet"
    f["bad_parquet"].write_bytes(b"PAR1 not really" * 10)
    f["bad_gz"] = root / "bad.jsonl.gz"
    f["bad_gz"].write_bytes(b"not gzip at all")
    f["notsqlite"] = root / "not-a-db.sqlite"
    f["notsqlite"].write_text("not a database " * 100, encoding="utf-8")
    f["bad_persona"] = root / "bad_persona.jsonl"
    f["bad_persona"].write_text('{"id": "p1", "bogus_field": 1}\n', encoding="utf-8")
    f["afile"] = root / "afile.txt"
    f["afile"].write_text("x", encoding="utf-8")
    f["emptydir"] = root / "emptydir"
    f["emptydir"].mkdir()
    f["foreign_dir"] = root / "foreign"
    f["foreign_dir"].mkdir()
    (f["foreign_dir"] / "notes.txt").write_text("mine", encoding="utf-8")
    failing = LoopbackServer(LoopbackConfig(page=lambda messages, body, headers: (500, "judge down")))
    with pytest.MonkeyPatch.context() as mp, failing:
        broken = _failing_judge(failing.base_url)
        mp.setenv("UXBENCH_CACHE_DIR", str(root / "cache"))
        mp.setenv("UXBENCH_DEID_SALT", "bad-input-tests-0123456789")
        made = {
            "t1_run": ("run", "--model", "scripted:always-good", "--data", f["judge"], "--quiet"),
            "t1_run_b": ("run", "--model", "scripted:always-bad", "--data", f["judge"], "--quiet"),
            "eval_run": ("run", "--task", "eval", "--model", "scripted:echo", "--data", f["eval"], "--judge",
                         "scripted:always-good", "--judge-mode", "pointwise", "--quiet"),
            "eval_run2": ("run", "--task", "eval", "--model", "scripted:always-bad", "--data", f["eval"], "--quiet"),
            # A judge whose every call fails (HTTP 500): scores all failed, two primaries.
            "failed_a": ("run", "--task", "eval", "--model", "scripted:echo", "--data", f["eval"], "--judge",
                         "openai:judge-a", *broken, "--judge-mode", "pointwise", "--max-attempts", "1",
                         "--quiet"),
            "failed_b": ("run", "--task", "eval", "--model", "scripted:echo", "--data", f["eval"], "--judge",
                         "openai:judge-b", *broken, "--judge-mode", "pointwise", "--max-attempts", "1",
                         "--quiet"),
        }
        for name, args in made.items():
            f[name] = root / name
            result = invoke(*args, "--out", f[name])
            assert result.exit_code in (0, 1), (name, result.output)
        f["mined"] = root / "mined"
        assert invoke("mine", "run", f["log"], "--out", f["mined"], "--no-llm", "--quiet").exit_code == 0
        f["study"] = root / "study"
        assert invoke("human", "new", "--from", f["t1_run"], "--out", f["study"], "--n", "4").exit_code == 0
    f["eval_run_copy"] = root / "eval_run_copy"
    subprocess.run(["cp", "-r", str(f["eval_run"]), str(f["eval_run_copy"])], check=True)
    f["cut_run"] = root / "cut_run"
    subprocess.run(["cp", "-r", str(f["t1_run"]), str(f["cut_run"])], check=True)
    db = f["cut_run"] / "samples.sqlite"
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    f["cut_sqlite"] = root / "cut.sqlite"
    f["cut_sqlite"].write_bytes((f["t1_run"] / "samples.sqlite").read_bytes()[:6000])
    f["bad_study"] = root / "bad_study"
    f["bad_study"].mkdir()
    (f["bad_study"] / "study.sqlite").write_text("not a database " * 300, encoding="utf-8")
    f["cut_study"] = root / "cut_study"
    subprocess.run(["cp", "-r", str(f["study"]), str(f["cut_study"])], check=True)
    study_db = f["cut_study"] / "study.sqlite"
    study_db.write_bytes(study_db.read_bytes()[: study_db.stat().st_size // 2])
    with LoopbackServer(LoopbackConfig(logprobs_supported=False)) as no_logprobs, _issue28(root, f) as more:
        yield {**{k: str(v) for k, v in f.items()}, "no_logprobs_url": no_logprobs.base_url, **more}


_PERSONA = ("id: p1\nlang: en\nprofile: {description: Bought a kettle that arrived broken.}\n"
            "opener: my kettle arrived broken, i want a refund\n"
            "goal:\n  - id: refund\n    request: get a refund for the broken kettle\n"
            "    check: {any_of: [refund is on its way]}\n")
_BOMB = "".join([f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9 if i else ['"lol"'] * 9) + "]\n"
                 for i in range(10)])
_RUBRIC = ("id: mine\ntitle: {{en: mine, zh: mine}}\ndimensions:\n  - key: helpful\n"
           "    name: {{en: helpful, zh: helpful}}\n    description: {{en: how helpful 1-5, zh: how helpful 1-5}}\n"
           "    weight: {weight}\n")


@contextmanager
def _issue28(root: Path, f: dict[str, Path]) -> Iterator[dict[str, str]]:
    """The files, runs and judges of the issue-28 rows: hostile persona / rubric / table files, two small sim runs
    under different simulators and assistants, personas built with a hold-out, judges that fail."""
    import json
    import shutil

    from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

    sys.path.insert(0, str(Path(__file__).parent.parent / "sim"))
    from build_support import write_log

    deep = "[" * 5000 + "]" * 5000
    texts = {
        "persona_bomb.yaml": _PERSONA + "meta:\n" + _BOMB, "persona_deep.yaml": _PERSONA + f"meta: {{x: {deep}}}\n",
        "persona_300.yaml": _PERSONA + "meta: {x: " + "[" * 300 + "]" * 300 + "}\n",
        "persona_binary_meta.yaml": _PERSONA + 'meta: {b: !!binary "/w=="}\n',
        "persona_deep.jsonl": '{"id": "p1", "meta": {"x": ' + deep + "}}\n",
        "deep.json": deep, "deep.jsonl": deep + "\n",
        "rubric_inf.yaml": _RUBRIC.format(weight=".inf"), "rubric_nan.yaml": _RUBRIC.format(weight=".nan"),
    }
    out: dict[str, Path] = {}
    for name, text in texts.items():  # persona_bomb.yaml -> {persona_bomb}, deep.jsonl -> {deep_jsonl}
        out[name.replace(".yaml", "").replace(".", "_")] = root / name
        (root / name).write_text(text, encoding="utf-8")
    row = {**judge_rows(1)[0], "extra": json.loads("[" * 300 + "]" * 300)}
    out["data_300"] = write_jsonl(root / "data_300.jsonl", [row])
    out["judge_history"] = write_jsonl(root / "judge_history.jsonl", [
        {**r, "history": [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "ok"}]}
        for r in judge_rows(2)])
    out["deep_model_dir"] = root / "deep_model"
    out["deep_model_dir"].mkdir()
    (out["deep_model_dir"] / "model.json").write_text(deep, encoding="utf-8")
    for name, damage in (("deep_manifest_run", lambda d: (d / "manifest.json").write_text(deep, "utf-8")),
                         ("cut_manifest_run", lambda d: (d / "manifest.json").write_bytes(
                             (d / "manifest.json").read_bytes()[:200])),
                         ("no_db_run", lambda d: [p.unlink() for p in d.glob("samples.sqlite*")])):
        out[name] = root / name
        shutil.copytree(f["t1_run"], out[name])
        damage(out[name])
    personas = root / "sim_personas.yaml"
    personas.write_text(_PERSONA, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UXBENCH_CACHE_DIR", str(root / "cache"))
        mp.setenv("UXBENCH_DEID_SALT", "bad-input-tests-0123456789")
        for name, model, mode in (("sim_run", "scripted:always-good", "structured"),
                                  ("sim_run_other", "scripted:always-bad", "free")):
            out[name] = root / name
            made = invoke("sim", "run", "--personas", personas, "--model", model, "--simulator", "scripted:user",
                          "--mode", mode, "--trials", "2", "--max-turns", "2", "--n-boot", "50", "--quiet", "--out",
                          out[name])
            assert made.exit_code in (0, 1), made.output
        out["ra_mined"] = root / "ra_mined"
        assert invoke("mine", "run", write_log(root / "ra_log.jsonl"), "--out", out["ra_mined"], "--no-llm",
                      "--quiet").exit_code == 0
        out["ra_personas"] = root / "ra_personas.jsonl"
        assert invoke("personas", "build", "--from", out["ra_mined"], "--out", out["ra_personas"], "--holdout",
                      "prefix:0.3").exit_code == 0
    unauthorized = LoopbackConfig(page=lambda messages, body, headers: (401, "Unauthorized: bad key"))
    with LoopbackServer(unauthorized) as judge_401, LoopbackServer(LoopbackConfig(default_answer="no idea, sorry")) \
            as judge_text, LoopbackServer(LoopbackConfig(max_prompt_chars=10)) as small_context:
        yield {**{k: str(v) for k, v in out.items()}, "judge_401_url": judge_401.base_url,
               "judge_text_url": judge_text.base_url, "small_context_url": small_context.base_url}


def _fill(args: tuple[str, ...], files: dict[str, str], tmp: Path) -> list[str]:
    names = {**files, "tmp": str(tmp)}
    return [re.sub(r"\{(\w+)\}", lambda m: names.get(m.group(1), m.group(0)), a) for a in args]


_SERVERS = ("aiohttp.web.TCPSite.start", *(("uvicorn.run",) if installed("web") else ()))
"""What a command would serve with; uvicorn comes with the web extra (without it nothing serves through it)."""


def _would_serve(*args: object, **kwargs: object) -> None:
    raise AssertionError("the command went on to serve instead of refusing its input")


MEMORY_LIMIT = 1536 * 2**20
"""Address space of a row run as a process: a runaway (an alias bomb expanded) fails the row, not the machine."""


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _serve(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """A command that would serve, or could run away: run it as a process under a memory limit; still running
    after the timeout fails the row."""
    try:
        done = subprocess.run([sys.executable, "-m", "uxbench", *args], capture_output=True, text=True,
                              timeout=30, env={**os.environ, **env}, stdin=subprocess.DEVNULL,
                              preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        return -1, "still running (serving) after 30 s"
    return done.returncode, done.stdout + done.stderr


_EXTRA_OF = {("view",): "web", ("site", "build"): "web", ("human", "serve"): "web", ("plot",): "plot"}
"""Commands that stop at once without their extra (tests/cli/test_missing_extras.py): their rows need it."""


def _extra(row: Row) -> list[pytest.MarkDecorator]:
    marks = [pytest.mark.extra(extra) for words, extra in _EXTRA_OF.items() if row.args[:len(words)] == words]
    if any(arg.startswith("learned:") for arg in row.args):  # a learned detector is read with the learn extra
        marks.append(pytest.mark.extra("learn"))
    return marks


def _params() -> list[object]:
    assert set(_OWNER) <= {*ROWS, "judge-serve-bad-top-logprobs"}, set(_OWNER) - set(ROWS)
    return [pytest.param(n, marks=[*_owned(n), *_extra(ROWS[n])]) for n in ROWS]


@pytest.mark.parametrize("name", _params())
def test_bad_input_is_refused_clearly(name: str, files: dict[str, str], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    row = ROWS[name]
    args = _fill(row.args, files, tmp_path)
    env = dict(zip(row.env, _fill(tuple(row.env.values()), files, tmp_path), strict=True))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))  # never the user's cache, shared by every row
    for where in _SERVERS:
        monkeypatch.setattr(where, _would_serve)  # in-process rows must refuse before serving, never hang
    if row.server:
        code, output = _serve(args, env)
        exception = None
    else:
        result = invoke(*args)
        code, output, exception = result.exit_code, result.output, result.exception
    assert "Traceback" not in output, output
    assert exception is None or isinstance(exception, SystemExit), repr(exception)
    assert code in row.codes, (code, output)
    if code == 2:
        assert "error:" in output or "Error" in output, output
    if row.needle is not None:
        assert row.needle in output or (row.needle.startswith("error: ") and re.search(row.needle, output)), (
            row.needle, output)
    assert KEY not in output and KEY[:12] not in output


def test_the_table_covers_every_subcommand_with_200_rows() -> None:
    from typer.main import get_command

    from uxbench.cli.main import app

    group = get_command(app)
    commands: set[str] = set()
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None)
        commands |= {f"{name} {sub}" for sub in subs} if subs else {name}
    covered = {" ".join(r.args[:2]) if " ".join(r.args[:2]) in commands else r.args[0] for r in ROWS.values()}
    assert commands <= covered | {"providers"}, sorted(commands - covered)
    assert len(ROWS) >= 200, len(ROWS)


@pytest.mark.parametrize("name", [pytest.param("judge-serve-bad-top-logprobs",
                                               marks=_owned("judge-serve-bad-top-logprobs"))])
def test_judge_serve_answers_a_bad_top_logprobs_clearly(name: str, tmp_path: Path) -> None:
    """A row of the table that needs a request: `judge serve` answering `top_logprobs: "abc"` names the field
    (today: Python's own `invalid literal for int()`)."""
    import socket
    import time
    import urllib.error
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "uxbench", "judge", "serve", "scripted:always-good", "--port",
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "logprobs": true, ' \
               b'"top_logprobs": "abc"}'
        for _ in range(100):
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body,
                                                 headers={"Content-Type": "application/json"})
                urllib.request.urlopen(request, timeout=10)
                answer = ""
                break
            except urllib.error.HTTPError as err:
                answer = err.read().decode("utf-8", "replace")
                break
            except OSError:
                time.sleep(0.2)
        assert "top_logprobs" in answer and "invalid literal" not in answer, answer
    finally:
        server.terminate()
        server.wait(timeout=10)

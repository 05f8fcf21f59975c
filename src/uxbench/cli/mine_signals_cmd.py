"""`uxbench mine eval-signals` and `uxbench mine train-signals`: the signals measured on labelled real
follow-ups, and the learned follow-up classifier trained on them. Registered on the `mine` group by
`mine_cmd`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer

_SPLITS = ("dev", "held-out", "all")
_FORMATS = ("table", "md", "json")


def _check_split(value: str) -> str:
    if value not in _SPLITS:
        raise typer.BadParameter(f"choose one of {', '.join(_SPLITS)}")
    return value


def _check_format(value: str) -> str:
    if value not in _FORMATS:
        raise typer.BadParameter(f"choose one of {', '.join(_FORMATS)}")
    return value
EVAL_HELP = ("Precision, recall and F1 of the signals on labelled real follow-ups (per signal, per stratum, with "
             "Wilson CIs), the label confusion, the precision-recall curve of the dissatisfied score (its "
             "threshold for a target precision chosen on the dev part), and every false positive and miss.")


def eval_signals(
    labels: Annotated[Path, typer.Option("--labels", help="Labelled follow-ups (JSONL: conversation_id, u2_turn_index, label, ...).")],  # noqa: E501
    log: Annotated[Path, typer.Option("--log", help="The log the labels refer to (or the output directory of an earlier `uxbench mine run` on it).")],  # noqa: E501
    split: Annotated[str, typer.Option("--split", callback=_check_split, help="dev (tune on it) | held-out (report it) | all.")] = "held-out",  # noqa: E501
    threshold: Annotated[float | None, typer.Option("--threshold", min=0.0, max=1.0, help="Flag dissatisfied at dissatisfied_score >= this (default: the table's own dissatisfied flag).")] = None,  # noqa: E501
    target_precision: Annotated[float, typer.Option("--target-precision", min=0.0, max=1.0, help="Report the threshold (chosen on dev) for this precision.")] = 0.6,  # noqa: E501
    plot: Annotated[Path | None, typer.Option("--plot", help="Draw the precision-recall curve to OUT.svg or OUT.png.")] = None,  # noqa: E501
    format: Annotated[str, typer.Option("--format", callback=_check_format, help="table | md | json")] = "table",
    errors: Annotated[bool, typer.Option("--errors/--no-errors", help="List the false positives and misses.")] = True,
    workdir: Annotated[Path | None, typer.Option("--workdir", help="Keep the deterministic stages' output here (default: a temporary directory).")] = None,  # noqa: E501
    model: Annotated[str | None, typer.Option("--model", "-m", help="Measure the LLM follow-up check (--llm-signals) with PROVIDER:MODEL instead of the rules.")] = None,  # noqa: E501
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", help="KEY=VALUE for the provider.")] = None,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache of the model (default: WORKDIR/work/responses.sqlite, else none kept).")] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(min=1, help="Most model calls at once (default: the provider's).")] = None,  # noqa: E501
    quiet: Annotated[bool, typer.Option(help="No progress lines.")] = False,
) -> None:
    from uxbench.mining.eval_signals import evaluate_llm_signals, evaluate_signals
    from uxbench.mining.signals.curve import write_curve
    from uxbench.mining.signals.split import Split
    from uxbench.report.signal_eval import render_markdown, render_text

    def say(line: str) -> None:
        if not quiet:
            typer.echo(line, err=True)

    chosen: Split = split  # type: ignore[assignment]  # checked by _check_split
    if model is None:
        result = evaluate_signals(labels, log, split=chosen, threshold=threshold, target_precision=target_precision,
                                  workdir=workdir, say=say)
    else:
        from uxbench.models.registry import parse_model_args

        result = asyncio.run(evaluate_llm_signals(
            labels, log, model, parse_model_args(model_arg or []), split=chosen, target_precision=target_precision,
            workdir=workdir, cache_path=cache_path, concurrency=concurrency, say=say))
    if plot is not None:
        mark = result["operating_point"]["reported"]
        write_curve(plot, result["curve"], f"dissatisfied: {result['method']}, {split} part (n {result['n']})",
                    mark)
        say(f"precision-recall curve: {plot}")
    if format == "json":
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
    elif format == "md":
        typer.echo(render_markdown(result, errors), nl=False)
    else:
        typer.echo(render_text(result, errors), nl=False)


def register(app: typer.Typer) -> None:
    app.command("eval-signals", help=EVAL_HELP)(eval_signals)

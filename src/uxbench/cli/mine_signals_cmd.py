"""`uxbench mine eval-signals` and `uxbench mine train-signals`: the signals measured on labelled real
follow-ups, and the learned follow-up classifier trained on them. Registered on the `mine` group by
`mine_cmd`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from uxbench.cli.options import format_option

_SPLITS = ("dev", "held-out", "all")


def _check_split(value: str) -> str:
    if value not in _SPLITS:
        raise typer.BadParameter(f"choose one of {', '.join(_SPLITS)}")
    return value


EVAL_HELP = ("Precision, recall and F1 of the signals on labelled real follow-ups (per signal, per stratum, with "
             "Wilson CIs), the label confusion, the precision-recall curve of the dissatisfied score (its "
             "threshold for a target precision chosen on the dev part), and every false positive and miss.")


def eval_signals(
    labels: Annotated[Path, typer.Option("--labels", help="Labelled follow-ups (JSONL: conversation_id, u2_turn_index, label, ...).")],  # noqa: E501
    log: Annotated[Path, typer.Option("--log", help="The log the labels refer to (or the output directory of an earlier `uxbench mine run` on it).")],  # noqa: E501
    split: Annotated[str, typer.Option("--split", callback=_check_split, help="dev (tune on it) | held-out (report it) | all.")] = "held-out",  # noqa: E501
    threshold: Annotated[float | None, typer.Option("--threshold", min=0.0, max=1.0, help="Flag dissatisfied at dissatisfied_score >= this.", show_default="the table's own dissatisfied flag")] = None,  # noqa: E501
    target_precision: Annotated[float, typer.Option("--target-precision", min=0.0, max=1.0, help="Report the threshold (chosen on dev) for this precision.")] = 0.6,  # noqa: E501
    plot: Annotated[Path | None, typer.Option("--plot", help="Draw the precision-recall curve to OUT.svg or OUT.png.", show_default="no plot")] = None,  # noqa: E501
    format: Annotated[str, format_option("table", "md", "json")] = "table",
    errors: Annotated[bool, typer.Option("--errors/--no-errors", help="List the false positives and misses.")] = True,
    workdir: Annotated[Path | None, typer.Option("--workdir", help="Keep the deterministic stages' output here.", show_default="a temporary directory")] = None,  # noqa: E501
    model: Annotated[str | None, typer.Option("--model", "-m", help="Measure the LLM follow-up check (--llm-signals) with PROVIDER:MODEL instead of the rules.", show_default="none: the rules")] = None,  # noqa: E501
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", metavar="KEY=VALUE", help="An argument of the model's provider; repeat for several.", show_default="none")] = None,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache of the model.", show_default="WORKDIR/work/responses.sqlite, else none kept")] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(min=1, help="Most model calls at once.", show_default="the provider's")] = None,  # noqa: E501
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines.")] = False,
    signals: Annotated[str, typer.Option("--signals", help="rules, or learned:DIR (a classifier from train-signals) deciding dissatisfied.")] = "rules",  # noqa: E501
) -> None:
    from uxbench.mining.eval_signals import evaluate_llm_signals, evaluate_signals
    from uxbench.mining.pipeline.learned_stage import parse_signals_option
    from uxbench.mining.signals.curve import write_curve
    from uxbench.mining.signals.split import Split
    from uxbench.report.signal_eval import render_markdown, render_text

    def say(line: str) -> None:
        if not quiet:
            typer.echo(line, err=True)

    chosen: Split = split  # type: ignore[assignment]  # checked by _check_split
    if model is not None and (signals != "rules" or threshold is not None):
        from uxbench.errors import ConfigError

        raise ConfigError("--model measures the LLM follow-up check, which gives labels, not scores: drop "
                          + ("--signals" if signals != "rules" else "--threshold") + " or --model")
    if plot is not None and plot.suffix.lower() == ".png":
        from uxbench.extras import require

        require("plot", "uxbench mine eval-signals --plot OUT.png (OUT.svg needs nothing)")
    if model is None:
        result = evaluate_signals(labels, log, split=chosen, threshold=threshold, target_precision=target_precision,
                                  workdir=workdir, say=say, learned=parse_signals_option(signals))
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


TRAIN_HELP = ("Train the learned follow-up classifier (character n-grams + the rules' signals, logistic regression; "
              "needs the learn extra) on labelled follow-ups: cross-validated by conversation, compared with the "
              "rules (paired), and measured on held-out when trained on dev. Use it with "
              "`uxbench mine run --signals learned:DIR`.")


def _comparison_lines(title: str, c: dict[str, Any]) -> list[str]:
    from uxbench.report.signal_eval import signal_cells

    lines = [title]
    for name in ("learned", "rules"):
        cells = signal_cells("dissatisfied", c[name])
        lines.append(f"  {name:<8} n {c[name]['n']}, TP {cells[3]}, FP {cells[4]}, FN {cells[5]}: precision "
                     f"{cells[6]}, recall {cells[7]}, F1 {cells[8]}")
    ba, mc = c["balanced_accuracy"], c["mcnemar"]
    lines.append(f"  learned only right {mc['a_only']}, rules only right {mc['b_only']} (McNemar p "
                 f"{mc['p_value']:.3g}, {mc['method']}); balanced accuracy {ba['diff']:+.2f} "
                 f"[{ba['ci_low']:+.2f}, {ba['ci_high']:+.2f}]")
    lines.append(f"  {c['verdict']}")
    return lines


def train_signals(
    labels: Annotated[Path, typer.Option("--labels", help="Labelled follow-ups (JSONL).")],
    log: Annotated[Path, typer.Option("--log", help="The log the labels refer to (or a `uxbench mine run` output directory).")],  # noqa: E501
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for model.json and report.json.")],
    split: Annotated[str, typer.Option("--split", callback=_check_split, help="Train on dev (then measured on held-out) or on all.")] = "dev",  # noqa: E501
    folds: Annotated[int, typer.Option("--folds", min=2, help="Cross-validation folds (grouped by conversation).")] = 5,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the model and of the bootstrap.")] = 0,
    workdir: Annotated[Path | None, typer.Option("--workdir", help="Keep the deterministic stages' output here.", show_default="a temporary directory")] = None,  # noqa: E501
    format: Annotated[str, format_option("table", "md", "json")] = "table",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines.")] = False,
) -> None:
    from uxbench.errors import ConfigError
    from uxbench.mining.train_signals import train_signals as train

    if split == "held-out":
        raise ConfigError("train on dev or all: the held-out part is only for reporting")
    from uxbench.extras import require

    require("learn", "uxbench mine train-signals")

    def say(line: str) -> None:
        if not quiet:
            typer.echo(line, err=True)

    report = train(labels, log, out, split=split, folds=folds, seed=seed, workdir=workdir, say=say)  # type: ignore[arg-type]
    if format == "json":
        typer.echo(json.dumps(report, ensure_ascii=False, indent=2))
        return
    lines = [f"trained on {report['train_split']} ({report['n_train']} items, {report['n_train_missing']} without "
             f"their reply); threshold {report['threshold']}; model: {report['model']}"]
    lines += _comparison_lines(f"{report['folds']}-fold cross-validation by conversation on {report['train_split']}:",
                               report["cv"])
    if "held_out" in report:
        lines += _comparison_lines("held-out (never trained or tuned on):", report["held_out"])
    typer.echo("\n".join(("- " + x if format == "md" and not x.startswith("  ") else x) for x in lines))


def register(app: typer.Typer) -> None:
    app.command("eval-signals", help=EVAL_HELP)(eval_signals)
    app.command("train-signals", help=TRAIN_HELP)(train_signals)

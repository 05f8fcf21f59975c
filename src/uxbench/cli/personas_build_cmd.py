"""`uxbench personas build --from MINE_RUN`: personas from de-identified mined sessions (on `personas_cmd.app`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from uxbench.cli.options import format_option
from uxbench.cli.sim_app import FORMATS as _FORMATS
from uxbench.cli.sim_app import choice as _choice
from uxbench.cli.sim_app import personas_app as app

_MODEL = "Extraction model"
_SELECT = "Which conversations"


@app.command("build", help="Personas from the de-identified sessions of a `uxbench mine run` output: facts are the "
                           "pipeline's pseudonyms (every value checked in the user's own messages), reaction weights "
                           "fitted from the sessions, profile and goal from a schema-checked LLM extraction (or by "
                           "rule without --model), the hold-out split recorded.")
def build(
    source: Annotated[Path, typer.Option("--from", help="The output directory of `uxbench mine run` (--no-llm is enough).")],  # noqa: E501
    out: Annotated[Path | None, typer.Option(help="Personas file to write (JSON Lines); a build report is written beside it.", show_default="MINE_RUN/personas.jsonl")] = None,  # noqa: E501
    model: Annotated[str | None, typer.Option("--model", "-m", help="PROVIDER:MODEL that extracts profile, goal and facts from the user's messages.", show_default="none: by rule", rich_help_panel=_MODEL)] = None,  # noqa: E501
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", help="KEY=VALUE for its provider.", show_default="none", rich_help_panel=_MODEL)] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(min=1, help="Extraction calls in flight at most.", show_default="the provider's", rich_help_panel=_MODEL)] = None,  # noqa: E501
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.", rich_help_panel=_MODEL)] = False,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR or ~/.cache/uxbench", rich_help_panel=_MODEL)] = None,  # noqa: E501
    holdout: Annotated[str, typer.Option(help="prefix:F (build from the first share F of each conversation's user turns; the rest is for replay validation), conversation:P (hold P% of conversations out whole) or none.", rich_help_panel=_SELECT)] = "prefix:0.5",  # noqa: E501
    min_user_turns: Annotated[int, typer.Option(min=1, help="Conversations with fewer user messages in the built part are skipped.", rich_help_panel=_SELECT)] = 1,  # noqa: E501
    lang: Annotated[str, typer.Option(help="zh | en: only conversations in that language; auto: all.", rich_help_panel=_SELECT)] = "auto",  # noqa: E501
    limit: Annotated[int | None, typer.Option(min=1, help="Build at most N personas (a deterministic subset).", show_default="all", rich_help_panel=_SELECT)] = None,  # noqa: E501
    format: Annotated[str, format_option()] = "table",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    from rich.console import Console

    from uxbench.cli.sim_quality_cmd import Ticker, judge_model
    from uxbench.errors import ConfigError
    from uxbench.models.registry import parse_model_args
    from uxbench.report.sim_validation import render_build
    from uxbench.sim.build import BuildOptions, build_personas
    from uxbench.sim.build_llm import extract, prompt_digest
    from uxbench.sim.build_rules import Holdout
    from uxbench.sim.mined import check_mined_dir

    _choice(format, _FORMATS, "--format")
    _choice(lang, ("zh", "en", "auto"), "--lang")
    if model is None and (model_arg or concurrency or no_cache or cache_path):
        raise ConfigError("--model-arg, --concurrency, --no-cache and --cache-path apply to the extraction model: "
                          "add --model, or drop them.")
    console = Console(stderr=True)
    check_mined_dir(source)
    target = out or source / "personas.jsonl"
    options = BuildOptions(holdout=Holdout.parse(holdout), min_user_turns=min_user_turns, lang=lang, limit=limit,
                           extraction=model or "rules", prompt_digest=prompt_digest() if model else None)
    if model is None:
        console.print("[bold]Extraction:[/] by rule (no --model): the goal is the user's own requests, the profile "
                      "their message lengths and habits; pass --model for an LLM extraction.")
    tick = Ticker(console, "persona extraction", "conversations", quiet)

    async def go() -> Any:
        if model is None:
            return await build_personas(source, target, options)
        async with judge_model(model, parse_model_args(model_arg, option="--model-arg"), cache=not no_cache,
                               cache_path=cache_path, concurrency=concurrency) as llm:
            total = [0]

            async def extractor(texts: list[str], text_lang: str) -> Any:
                return await extract(llm, texts, text_lang)

            def selected(n: int) -> None:
                total[0] = n
                tick(0, n, llm.limiter.max_concurrency)

            return await build_personas(source, target, options, extractor=extractor,
                                        width=llm.limiter.max_concurrency, on_selected=selected,
                                        tick=lambda n: tick(n, total[0], llm.limiter.max_concurrency))

    try:
        report = asyncio.run(go())
    finally:
        tick.stop()
    typer.echo(render_build(report.as_dict(), str(target), format), nl=False)  # type: ignore[arg-type]

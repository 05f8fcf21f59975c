"""`uxbench human`: blind human evaluation (new, serve, results, export)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from uxbench.cli.options import format_option

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.command("new", help="Create a study: N items (a run's replies drawn at random, Task 1 cases stratified by class), one unguessable link per annotator.")  # noqa: E501
def new(
    source: Annotated[list[str], typer.Option("--from", help="A run directory, or Task 1 data (a file, a directory, demo); with --mode pairwise also two Task 2/3 runs (--from A --from B).")],  # noqa: E501
    out: Annotated[Path, typer.Option(help="The study directory to create.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Items in the study.")] = 50,
    annotators: Annotated[int, typer.Option(min=1, help="Annotators (one link each).")] = 3,
    mode: Annotated[str, typer.Option(help="pointwise (good / bad / skip) or pairwise (A / B / tie / both bad / skip: a good and a bad reply, or two runs' replies).")] = "pointwise",  # noqa: E501
    seed: Annotated[int, typer.Option(help="Seed of the draw and of each annotator's order.")] = 0,
    draw: Annotated[str | None, typer.Option(help="pointwise: random (every reply equally likely: what a human-anchored Good% needs) or stratified (by class, or by the primary judge's verdict).", show_default="random for a Task 2/3 run, else stratified")] = None,  # noqa: E501
    base_url: Annotated[str, typer.Option(help="Where the study will be served, for the printed links.")] = "http://127.0.0.1:8321",
    lang: Annotated[str, typer.Option(help="Language of the annotator pages: zh | en | auto (zh when most items are Chinese).")] = "auto",  # noqa: E501
) -> None:
    from uxbench.human.study import Study

    study = Study.create(out, source, n=n, annotators=annotators, mode=mode, seed=seed, draw=draw, lang=lang)
    meta = study.meta()
    how = f", drawn {meta['draw']} from {meta['population']} (seed {seed})" if meta.get("draw") else ""
    typer.echo(f"Study of {meta['n']} {mode} items from {meta['source']}{how} in {out}; pages in "
               f"{'Chinese' if meta.get('lang') == 'zh' else 'English'} (--lang).")
    typer.echo(f"Serve it with: uxbench human serve {out}   Links (give each annotator only their own):")
    for a in study.annotators():
        typer.echo(f"  {a.name}: {base_url.rstrip('/')}/h/{a.token}")


@app.command("serve", help="Serve a study's annotator pages (progress is saved as each judgment is made).")
def serve_study(
    study_dir: Annotated[Path, typer.Argument(help="The study directory.")],
    host: Annotated[str, typer.Option(help="Address to listen on: 127.0.0.1 is this machine only, 0.0.0.0 every interface.")] = "127.0.0.1",  # noqa: E501
    port: Annotated[int, typer.Option(help="Port (0: any free port).")] = 8321,
    allow_host: Annotated[list[str] | None, typer.Option("--allow-host", metavar="NAME", help="Another name this server may be reached by (repeatable; `*.example.org` for every name under it). Requests naming any other host are refused, against DNS rebinding.", show_default="none: the bound address and loopback names only")] = None,  # noqa: E501
) -> None:
    from uxbench.cli.view_cmd import require_web
    from uxbench.web.serve import preflight

    preflight(host, port, None)
    require_web("uxbench human serve")
    from uxbench.human.study import Study
    from uxbench.web.catalog import Catalog
    from uxbench.web.serve import serve

    serve(Catalog(), host=host, port=port, index_dir=None, study=Study.open(study_dir), echo=typer.echo,
          err=lambda m: typer.secho(m, fg=typer.colors.YELLOW, err=True), study_links=True,
          allow_hosts=allow_host or (), annotator_only=True)


@app.command("results", help="Accuracy per annotator (Wilson CI), Fleiss' kappa, human-judge agreement, and the human-anchored Good% of a run.")  # noqa: E501
def results(
    study_dir: Annotated[Path, typer.Argument(help="The study directory.")],
    format: Annotated[str, format_option("table", "json")] = "table",
    annotators: Annotated[str, typer.Option(help="Human-anchored Good%: majority (an item's majority label; a tie counts half) or each (one estimate per annotator).")] = "majority",  # noqa: E501
) -> None:
    import json

    from uxbench.human.results import results_text, study_results
    from uxbench.human.study import Study

    report = study_results(Study.open(study_dir), anchor_by=annotators)
    typer.echo(json.dumps(report, ensure_ascii=False, indent=2) if format == "json" else results_text(report),
               nl=format == "json")


@app.command("export", help="Every judgment with its item's label and the judges' verdicts, as JSON Lines.")
def export(
    study_dir: Annotated[Path, typer.Argument(help="The study directory.")],
    out: Annotated[Path | None, typer.Option(help="File to write.", show_default="standard output")] = None,
) -> None:
    import json

    from uxbench.fileio import atomic_write_bytes
    from uxbench.human.results import export_rows
    from uxbench.human.study import Study

    lines = [json.dumps(r, ensure_ascii=False) for r in export_rows(Study.open(study_dir))]
    if out is None:
        for line in lines:
            typer.echo(line)
    else:
        atomic_write_bytes(out, "".join(line + "\n" for line in lines).encode("utf-8"))
        typer.echo(f"{len(lines)} judgments written to {out}", err=True)

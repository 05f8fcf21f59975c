"""`uxbench personas validate|list`: check persona files (every error with its file, line and field) and list them.

New `personas` subcommands register on `app` here."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from uxbench.cli.options import format_option
from uxbench.cli.sim_app import FORMATS as _FORMATS
from uxbench.cli.sim_app import personas_app as app


@app.command("validate", help="Check persona files (YAML or JSONL) against the schema: every error with its file, line "
                              "and field. Exit status 1 when any persona is invalid.")
def validate(
    paths: Annotated[list[str], typer.Argument(help="Persona files or directories; demo = the bundled set.")],
    format: Annotated[str, format_option()] = "table",
) -> None:
    from uxbench.errors import ConfigError
    from uxbench.sim.persona_io import check_personas

    if format not in _FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(_FORMATS)}, not '{format}'.")
    loaded, errors = check_personas(paths)
    if format in ("md", "csv"):
        import csv
        import io

        rows = [[e.source or "", "" if e.line is None else str(e.line), e.field or "", e.reason, e.hint or ""]
                for e in errors]
        if format == "csv":
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows([["source", "line", "field", "error", "hint"], *rows])
            typer.echo(buf.getvalue(), nl=False)
        else:
            from uxbench.report.render import _markdown

            title = f"{len(loaded)} valid personas, {len(errors)} errors"
            typer.echo(_markdown([(title, ["source", "line", "field", "error", "hint"], rows)], [], text_columns=5),
                       nl=False)
    elif format == "json":
        typer.echo(json.dumps({
            "valid": len(loaded), "invalid": len(errors),
            "personas": [{"id": p.persona.id, "lang": p.persona.lang, "hash": p.persona.content_hash(),
                          "source": p.source, "line": p.line} for p in loaded],
            "errors": [{"source": e.source, "line": e.line, "field": e.field, "message": e.reason, "hint": e.hint}
                       for e in errors],
        }, ensure_ascii=False, indent=2))
    else:
        for err in errors:
            typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        langs = {lang: sum(p.persona.lang == lang for p in loaded) for lang in ("zh", "en")}
        typer.echo(f"{len(loaded)} valid personas ({langs['zh']} zh, {langs['en']} en), {len(errors)} errors.")
    if not loaded and not errors:
        raise ConfigError(f"No persona in {', '.join(paths)}: nothing to validate.")
    if errors:
        raise typer.Exit(1)


@app.command("list", help="The personas of files or directories: id, language, goal items, facts by disclosure, "
                          "patience, content hash.")
def list_personas(
    paths: Annotated[list[str] | None, typer.Argument(help="Persona files or directories.",
                                                      show_default="demo")] = None,
    format: Annotated[str, format_option()] = "table",
) -> None:
    from uxbench.errors import ConfigError
    from uxbench.report.render import _markdown, _rich
    from uxbench.sim.persona_io import load_personas

    if format not in _FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(_FORMATS)}, not '{format}'.")
    loaded = load_personas(paths or ["demo"])
    header = ["id", "lang", "expertise", "goal items", "facts (disclosure)", "patience", "opener", "hash"]
    rows = []
    for item in loaded:
        p = item.persona
        facts = ", ".join(f"{f.id}:{f.disclose}" for f in p.facts) or "—"
        rows.append([p.id, p.lang, p.profile.expertise, " -> ".join(g.id for g in p.goal), facts,
                     f"{p.patience.session:g}", "yes" if p.opener else "no", p.content_hash()])
    if format == "json":
        typer.echo(json.dumps([dict(zip(header, r, strict=True)) for r in rows], ensure_ascii=False, indent=2))
    elif format == "csv":
        typer.echo("\n".join(",".join(f'"{c}"' for c in r) for r in [header, *rows]))
    elif format == "md":
        typer.echo(_markdown([(f"{len(rows)} personas", header, rows)], [], text_columns=5), nl=False)
    else:
        # the names wrap (id, goal items, facts), the short columns do not: rich would squeeze them to nothing
        typer.echo(_rich([(f"{len(rows)} personas", header, rows)], [], None,
                         droppable=("hash", "opener", "expertise"), wrap=(0, 3, 4)), nl=False)


from uxbench.cli import personas_build_cmd  # noqa: E402, F401  (`personas build` registers on `app`)

"""`uxbench view`: browse runs, samples and mining outputs in a local web app (the `web` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def require_web(command: str = "uxbench view") -> None:
    """One line naming `command` and the web extra when the extra is not installed."""
    from uxbench.extras import require

    require("web", command)


ALLOW_HOST_HELP = ("Another name this server may be reached by (repeatable; `*.example.org` for every name under it). "
                   "Requests naming any other host are refused, against DNS rebinding.")


def view(
    paths: Annotated[list[str] | None, typer.Argument(help="Run directories, their parent directories or globs, and output directories of `uxbench mine run`.", show_default="runs, where `uxbench run` writes by default")] = None,  # noqa: E501
    host: Annotated[str, typer.Option(help="Address to listen on: 127.0.0.1 is this machine only, 0.0.0.0 every interface.")] = "127.0.0.1",  # noqa: E501
    port: Annotated[int, typer.Option(help="Port (0: any free port).")] = 8321,
    allow_host: Annotated[list[str] | None, typer.Option("--allow-host", metavar="NAME", help=ALLOW_HOST_HELP, show_default="none: the bound address and loopback names only")] = None,  # noqa: E501
    study: Annotated[Path | None, typer.Option(help="Also serve the annotator pages of this study directory (`uxbench human new`).", show_default="none")] = None,  # noqa: E501
    index_dir: Annotated[Path | None, typer.Option(help="Where the sample indexes are kept.", show_default="~/.cache/uxbench/view")] = None,  # noqa: E501
    n_boot: Annotated[int | None, typer.Option("--n-boot", min=1, help="Bootstrap rounds of the leaderboard and the comparisons (as `uxbench leaderboard --n-boot`).", show_default="2000")] = None,  # noqa: E501
    seed: Annotated[int, typer.Option(help="Bootstrap seed (as `uxbench leaderboard --seed`).")] = 0,
) -> None:
    from uxbench.web.serve import preflight

    preflight(host, port, index_dir)
    require_web()
    from uxbench.human.study import Study
    from uxbench.web.catalog import build_catalog
    from uxbench.web.serve import serve

    catalog = build_catalog(paths or ["runs"])
    opened = Study.open(study) if study is not None else None
    serve(catalog, host=host, port=port, index_dir=index_dir, study=opened, echo=typer.echo,
          err=lambda m: typer.secho(m, fg=typer.colors.YELLOW, err=True), study_links=opened is not None,
          allow_hosts=allow_host or (), n_boot=n_boot, seed=seed)

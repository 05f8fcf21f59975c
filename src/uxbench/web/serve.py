"""Start the web server for `uxbench view` and `uxbench human serve`: checks the index directory and binds the
listening socket itself (so a bad --host, a port in use or an --index-dir that is a file is one clear error
before anything is served), binds 127.0.0.1 by default, prints the URL (and a warning beyond loopback), serves
until interrupted."""

from __future__ import annotations

import errno
import os
import socket
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from uxbench.errors import ConfigError
from uxbench.web.security import WILDCARD, HostCheck, check_port, host_warning

if TYPE_CHECKING:
    from uxbench.human.study import Study
    from uxbench.web.catalog import Catalog
    from uxbench.web.context import ViewState


def default_index_dir() -> Path:
    from uxbench.runtime.cache import default_cache_path

    return default_cache_path().parent / "view"


def prepare_index_dir(path: Path) -> Path:
    """The sample indexes' directory, created when missing; a file there, or one that cannot be written, is an
    error now rather than a warning per run later."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"--index-dir {path} is a file, not a directory: give a directory for the sample "
                          "indexes (it is created when missing), or leave the option out.")
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ConfigError(f"--index-dir {path}: cannot create it ({exc.strerror or exc}).") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"--index-dir {path}: not writable by this user; give another directory.")
    return path


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port), not yet listening; port 0 picks a free one."""
    check_port(port)
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"--host {host!r} is neither an IP address nor a name this machine can resolve "
                          f"({reason}). Use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface).") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} on {host} is in use: choose another --port (0 picks a free one), or "
                              "stop the server already there.") from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise ConfigError(f"--host {host} is not an address of this machine: use one of its addresses, "
                              "127.0.0.1 (this machine only) or 0.0.0.0 (every interface).") from None
        if exc.errno == errno.EACCES:
            raise ConfigError(f"not allowed to listen on {host}:{port} (ports below 1024 need privileges): "
                              "choose a --port of 1024 or more.") from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}.") from None
    return sock


def preflight(host: str, port: int, index_dir: Path | None) -> None:
    """The checks of `serve` that need neither the web extra nor the runs, made first by the commands, so a bad
    --host, --port or --index-dir is refused in about a second rather than after the web stack is imported."""
    check_port(port)
    prepare_index_dir(index_dir or default_index_dir())
    bind(host, port).close()


def prebuild(view: ViewState, err: Callable[[str], None]) -> None:
    """Build (or check) every run's sample index, then the leaderboard, in the background, so the first pages
    seldom wait; a page of a run whose index is not built yet says so and reloads itself."""
    from uxbench.web.pages.runs import leaderboard_for

    entries = list(view.catalog.runs.values())
    for entry in entries:
        try:
            view.index(entry).ensure()
        except (sqlite3.Error, OSError, ValueError) as exc:  # the page that needs it shows the error again
            err(f"warning: could not index {entry.path}: {exc}")
    leaderboard_for(view, entries)  # the start page's leaderboard (it reads every record of every run)


def serve(catalog: Catalog, *, host: str, port: int, index_dir: Path | None, study: Study | None,
          echo: Callable[[str], None], err: Callable[[str], None], study_links: bool = False,
          allow_hosts: Sequence[str] = (), annotator_only: bool = False, n_boot: int | None = None,
          seed: int = 0) -> None:
    import uvicorn

    from uxbench.web.app import create_app

    check_port(port)
    index_dir = prepare_index_dir(index_dir or default_index_dir())
    sock = bind(host, port)
    try:
        warning = host_warning(host)
        if warning:
            err(warning)
        port = int(sock.getsockname()[1])
        hosts = HostCheck(host, allow_hosts)
        from uxbench.metrics.proportions import DEFAULT_N_BOOT

        app = create_app(catalog, index_dir=index_dir, study=study, hosts=hosts, annotator_only=annotator_only,
                         n_boot=n_boot or DEFAULT_N_BOOT, seed=seed)
        if catalog.runs:
            threading.Thread(target=prebuild, args=(app.state.view, err), daemon=True,
                             name="uxbench-index").start()
        shown = "127.0.0.1" if host in WILDCARD else (f"[{host}]" if ":" in host else host)
        base = f"http://{shown}:{port}"
        if not annotator_only:
            echo(f"uxbench view: {base}/")
        if study is not None and study_links:
            for a in study.annotators():
                echo(f"{a.name}: {base}/h/{a.token}")
        if host in WILDCARD:
            echo("Answering to any IP address of this machine and to localhost; to reach it by a name, add "
                 "--allow-host NAME.")
        echo("Press Ctrl+C to stop.")
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[sock])
    finally:
        sock.close()

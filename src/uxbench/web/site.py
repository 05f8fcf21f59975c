"""`uxbench site build`: the leaderboard as a static, self-contained site: `index.html` (the tables, rendered
here; sorting by a script beside it), `leaderboard.json` (the same data, `report.leaderboard`'s output),
`runs.json` (each run's summary headline), and the style and script, all referenced by relative paths, so the
directory opens from the file system and can be published as it is. Nothing is fetched from elsewhere, and
nothing of the building machine's file system goes in (`public.py`): data are named by their file name and
fingerprint, runs by their id."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from uxbench.data.model_meta import ModelTable
from uxbench.fileio import atomic_write_bytes
from uxbench.metrics.proportions import DEFAULT_N_BOOT
from uxbench.report.discover import discover
from uxbench.report.leaderboard import leaderboard
from uxbench.runs.store import RunStore
from uxbench.web.pages.runs import headline, headline_corrected, headline_why
from uxbench.web.public import Publisher, short_fingerprint
from uxbench.web.render import board_filters, breakable, cell_text, pct

STATIC = Path(__file__).parent / "static"


def _runs(paths: Sequence[str | Path]) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                list[tuple[Path, dict[str, Any]]]]:
    """Each task run's headline row, each simulated-session run's row (as the view's start page lists it), and
    (directory, manifest) of every run."""
    from uxbench.sim.store import SimStore, is_sim_run
    from uxbench.web.pages.sim import sim_row

    rows, sims, dirs = [], [], []
    for path in discover([str(p) for p in paths]).runs:
        if is_sim_run(path):
            store = SimStore(path)
            try:
                summary, manifest = store.read_summary() or {}, store.read_manifest() or {}
            finally:
                store.close()
            dirs.append((path, manifest))
            sims.append(sim_row(str(manifest.get("run_id") or path.name), summary))
            continue
        with RunStore(path) as run_store:
            summary = run_store.read_summary() or {}
            manifest = run_store.read_manifest() or {}
        name, cell = headline(summary)
        data = summary.get("data") or {}
        run_id = str(manifest.get("run_id") or path.name)
        dirs.append((path, manifest))
        rows.append({"run_id": run_id, "task": summary.get("task"), "model": summary.get("model"),
                     "n_samples": summary.get("n_samples"), "figure": name, "cell": cell,
                     "why": headline_why(summary),
                     "corrected": headline_corrected(summary),
                     "data": data.get("description"), "data_fingerprint": short_fingerprint(data.get("fingerprint")),
                     "demo_data": bool(summary.get("demo_data"))})
    return rows, sims, dirs


def _sim_json(row: dict[str, Any]) -> dict[str, Any]:
    """A simulated-session run in runs.json, with the keys of the task runs where they mean the same."""
    return {"run_id": row["id"], "task": "sim", "model": row["model"], "simulator": row["simulator"],
            "mode": row["mode"], "n_sessions": row["n"], "figure": "Task success %", "cell": row["success"],
            "flagged_sessions": row["flagged"], "demo_data": row["demo"]}


def _public(board: dict[str, Any], publisher: Publisher) -> dict[str, Any]:
    """The leaderboard as published: without run directories, skipped paths or any other local path."""
    out: dict[str, Any] = json.loads(json.dumps(board, default=str))
    for task in out.get("tasks", {}).values():
        for row in task.get("rows", []):
            row.pop("run_dir", None)
            if row.get("fingerprint"):
                row["fingerprint"] = short_fingerprint(row["fingerprint"])
            for entry in (row.get("corrected"), *(row.get("corrected") or {}).values()):
                if isinstance(entry, dict) and isinstance(entry.get("calibration"), dict):
                    entry["calibration"].pop("source", None)
    out.pop("skipped", None)
    out.pop("calibration", None)
    out.pop("ignored_pairwise", None)
    cleaned: dict[str, Any] = publisher.clean(out)
    return cleaned


def build_site(paths: Sequence[str | Path], out: str | Path, *, judge: str | None = None,
               calibration: Sequence[str | Path] = (), n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
               table: ModelTable | None = None, title: str = "UXBench leaderboard") -> Path:
    """Write the site into `out` (created; files there of the same names are replaced). Returns index.html. The
    figures are `report.leaderboard`'s, with the same `n_boot` and `seed` as `uxbench leaderboard`."""
    runs, sims, dirs = _runs(paths)
    publisher = Publisher(dirs)
    board = _public(leaderboard(paths, judge=judge, calibration=calibration, n_boot=n_boot, seed=seed, table=table),
                    publisher)
    runs, sims = publisher.clean(runs), publisher.clean(sims)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    env = Environment(loader=PackageLoader("uxbench.web", "templates"), autoescape=select_autoescape(default=True))
    env.filters.update(pct=pct, cell=cell_text, breakable=breakable, **board_filters())
    html = env.get_template("site.html").render(title=title, board=board, runs=runs, sims=sims)
    for name in ("style.css", "app.js"):
        shutil.copyfile(STATIC / name, target / name)
    atomic_write_bytes(target / "leaderboard.json", json.dumps(board, ensure_ascii=False, indent=2).encode("utf-8"))
    atomic_write_bytes(target / "runs.json", json.dumps(runs + [_sim_json(s) for s in sims],
                                                                ensure_ascii=False, indent=2).encode("utf-8"))
    atomic_write_bytes(target / "index.html", html.encode("utf-8"))
    for name in ("index.html", "leaderboard.json", "runs.json", "style.css", "app.js"):
        (target / name).chmod(0o644)  # published as it is: readable by the web server
    return target / "index.html"

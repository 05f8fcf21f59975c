"""What `uxbench --help` and `uxbench run --help` import, in a fresh process: an import budget written as the modules
they must not load, not as a wall-clock limit (start-up time is measured by `python bench/startup.py`).

Measured (valgrind's instruction counts, one fresh import each, Python 3.11): aiohttp 1,057 M instructions,
pyarrow 467 M, scipy 387 M, numpy 337 M, markdown-it 220 M, pydantic 215 M, asyncio 199 M, tenacity 144 M, PyYAML
124 M, orjson 95 M; torch and transformers seconds. The whole of `uxbench run --help` is about 840 M (0.2 s on an
idle core): any one of them would be a large share of it. A help page needs typer and rich's console, tables and
panels, and the module of the command it describes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import uxbench

FORBIDDEN = ("torch", "transformers", "numpy", "scipy", "pyarrow", "pydantic", "aiohttp", "asyncio", "markdown_it",
             "pygments", "yaml", "tenacity", "orjson", "httpx", "jinja2", "sklearn", "datasets", "matplotlib")
"""Third-party and standard-library packages a help page has no use for (with everything they bring)."""

OWN = {
    (): {"uxbench", "uxbench.errors", "uxbench.cli", "uxbench.cli.main", "uxbench.cli.lazy_group",
         "uxbench.cli.startup", "uxbench.cli.help_format", "uxbench.cli.help_columns",
         # light, needed before any command: the command line recorded for a run's summary, the extras table
         # that names a missing extra in one line (standard library only; checked by the list above)
         "uxbench.runs", "uxbench.runs.command", "uxbench.extras"},
}
OWN[("run",)] = OWN[()] | {"uxbench.cli.run_cmd", "uxbench.cli.options"}
"""The uxbench modules each help page may import: the entry point and the module of the command shown."""

_PROBE = """
import contextlib, io, json, runpy, sys
sys.argv = ["uxbench", *json.loads(sys.argv[1])]
with contextlib.redirect_stdout(io.StringIO()) as shown:
    try:
        runpy.run_module("uxbench", run_name="__main__")
    except SystemExit as stop:
        code = stop.code
print(json.dumps({"code": code, "help": shown.getvalue(), "modules": sorted(sys.modules)}))
"""


def _modules_at(*args: str) -> dict[str, object]:
    """Run `uxbench ARGS` in a fresh interpreter; its exit code, what it printed and every module it imported."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(uxbench.__file__).parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(list(args))], capture_output=True, text=True,
                          env=env, timeout=120, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("command", list(OWN), ids=lambda c: " ".join((*c, "--help")))
def test_a_help_page_imports_nothing_heavy(command: tuple[str, ...]) -> None:
    result = _modules_at(*command, "--help")
    assert result["code"] in (0, None) and "Usage:" in str(result["help"]), result["help"]
    modules = set(result["modules"])  # type: ignore[call-overload]
    heavy = sorted({m.split(".")[0] for m in modules} & set(FORBIDDEN))
    assert not heavy, f"`uxbench {' '.join(command)} --help` imports {heavy} (import them inside the command)"
    own = sorted(m for m in modules if m.startswith("uxbench") and m not in OWN[command])
    assert not own, f"`uxbench {' '.join(command)} --help` imports {own} (only the shown command's module belongs)"


def test_the_probe_sees_an_import_when_a_command_runs() -> None:
    """The probe itself can fail: a command that runs (not its help) does import what it needs."""
    result = _modules_at("data", "validate", "demo")
    modules = set(result["modules"])  # type: ignore[call-overload]
    assert "pydantic" in modules and "uxbench.cli.data_cmd" in modules, sorted(modules)[:20]


def test_rich_markdown_and_tracebacks_still_work_after_a_help_page() -> None:
    """Typer's rich_utils loaded without rich.markdown and rich.traceback still renders both when asked."""
    code = """
import contextlib, io, sys
from uxbench.cli.startup import help_without_markdown
help_without_markdown()
import typer.rich_utils as ru
assert "rich.markdown" not in sys.modules and "markdown_it" not in sys.modules
md = ru.Markdown("**bold**")
import rich.markdown
assert type(md) is rich.markdown.Markdown, type(md)
try:
    1 / 0
except ZeroDivisionError as exc:
    tb = ru.Traceback.from_exception(type(exc), exc, exc.__traceback__)
import rich.traceback
assert type(tb) is rich.traceback.Traceback
print("ok")
"""
    env = {**os.environ, "PYTHONPATH": str(Path(uxbench.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


@pytest.mark.parametrize("before", ["enabled", "disabled"])
def test_the_garbage_collector_is_as_it_was_once_the_command_line_is_loaded(before: str) -> None:
    """main.py pauses the collector while the command line's modules load and then freezes them: it must resume
    (a run keeps its collector, collecting its youngest generation less often), and stay off for a caller that had
    turned it off."""
    code = f"""
import gc
{"gc.disable()" if before == "disabled" else ""}
import uxbench.cli.main
print(gc.isenabled(), gc.get_freeze_count() > 1000, gc.get_threshold()[0])
"""
    env = {**os.environ, "PYTHONPATH": str(Path(uxbench.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    # the young generation is collected every GC_YOUNG allocations, not every 700 (a run's event loop pauses less)
    assert done.stdout.split() == [str(before == "enabled"), "True", "20000"], done.stderr


def test_run_options_are_not_parsed_from_strings() -> None:
    """run_cmd.py has no `from __future__ import annotations`: typer would parse and evaluate each of `run`'s
    option annotations twice on every `uxbench run --help` (about 50 M instructions, 6% of it)."""
    import inspect

    from uxbench.cli.run_cmd import run

    parameters = inspect.signature(run).parameters.values()
    assert len(parameters) > 40
    assert not [p.name for p in parameters if isinstance(p.annotation, str)]

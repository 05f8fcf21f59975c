"""Skipping the tests of an extra that is not installed: one declaration per test, module or fixture.

- a test or a class: `@pytest.mark.extra("web")` (several names: every one is needed);
- a whole module that imports the extra at its top: `require_extra("web")` before those imports;
- inside a fixture or a test body: `require_extra("plot")` as well.

Each skip names the extra and the install line. An extra counts as installed when every module of its own is
importable (`uxbench.extras.EXTRAS`), so a module that another extra also brings (jinja2 comes with torch) never
lets a test of the web extra run without it.

This module is also the pytest plugin behind those declarations (tests/conftest.py loads it): the `extra` marker,
and `--record-skips FILE`, which writes the node id of every test (or whole module) that was skipped, one per
line. CI's first stage (the README's install, nothing else) records them; its second stage installs every extra,
the browser, the model and the real-data sets, and runs exactly those ids: no test runs twice and none is left
out (.ci/run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from uxbench.extras import EXTRAS, missing_modules

_GIVEN: set[str] = set()
"""Every skip reason given here in this process: a skip for a missing extra is one of these, exactly."""


def skip_reason(*names: str) -> str | None:
    """Why a test needing `names` cannot run here, or None when every extra is installed."""
    for name in names:
        if name not in EXTRAS:
            raise ValueError(f"unknown extra {name!r}; known: {', '.join(EXTRAS)}")
    absent = [name for name in names if missing_modules(name)]
    if not absent:
        return None
    detail = "; ".join(f"{name}: {', '.join(missing_modules(name))} not installed" for name in absent)
    reason = f"needs the {', '.join(absent)} extra ({detail}): pip install -e '.[{','.join(absent)}]'"
    _GIVEN.add(reason)
    return reason


def require_extra(*names: str) -> None:
    """Skip the calling test, fixture or (at module level) the whole module unless every extra is installed."""
    reason = skip_reason(*names)
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)


# -- the plugin ---------------------------------------------------------------------------------------------
_RECORDED: dict[str, bool] = {}
"""Node id of each test (or module) skipped in this session -> whether it was skipped for a missing extra."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-skips", metavar="FILE", default=None,
                     help="Write the node ids of the skipped tests (and modules) to FILE, one per line.")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "extra(name, ...): needs these extras of pyproject.toml; skipped with the install line without them")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("extra"):
        reason = skip_reason(*mark.args)
        if reason is not None:
            pytest.skip(reason)


def _note(nodeid: str, longrepr: object) -> None:
    """pytest keeps a skip as (path, line, "Skipped: why")."""
    why = str(longrepr[2]).removeprefix("Skipped: ") if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
    _RECORDED[nodeid] = why in _GIVEN


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped and report.nodeid:  # a module that called require_extra at its top: its path
        _note(report.nodeid, report.longrepr)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _note(report.nodeid, report.longrepr)


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = session.config.getoption("--record-skips")
    if target:
        Path(target).write_text("".join(f"{nodeid}\n" for nodeid in _RECORDED), encoding="utf-8")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    target = config.getoption("--record-skips")
    if target:
        extras = sum(_RECORDED.values())
        terminalreporter.write_line(f"{len(_RECORDED)} skipped tests and modules listed in {target} ({extras} for a "
                                    f"missing extra, {len(_RECORDED) - extras} for another reason)")

"""Skipping the tests of an extra that is not installed: one declaration per test, module or fixture.

- a test or a class: `@pytest.mark.extra("web")` (several names: every one is needed);
- a whole module that imports the extra at its top: `require_extra("web")` before those imports;
- inside a fixture or a test body: `require_extra("plot")` as well.

Each skip names the extra and the install line. An extra counts as installed when every module of its own is
importable (`uxbench.extras.EXTRAS`), so a module that another extra also brings (jinja2 comes with torch) never
lets a test of the web extra run without it.
"""

from __future__ import annotations

import pytest

from uxbench.extras import EXTRAS, missing_modules


def skip_reason(*names: str) -> str | None:
    """Why a test needing `names` cannot run here, or None when every extra is installed."""
    for name in names:
        if name not in EXTRAS:
            raise ValueError(f"unknown extra {name!r}; known: {', '.join(EXTRAS)}")
    absent = [name for name in names if missing_modules(name)]
    if not absent:
        return None
    detail = "; ".join(f"{name}: {', '.join(missing_modules(name))} not installed" for name in absent)
    return f"needs the {', '.join(absent)} extra ({detail}): pip install -e '.[{','.join(absent)}]'"


def require_extra(*names: str) -> None:
    """Skip the calling test, fixture or (at module level) the whole module unless every extra is installed."""
    reason = skip_reason(*names)
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)

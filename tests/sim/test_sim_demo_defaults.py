"""The default `uxbench sim run` is a demo of a few minutes: with the embedded simulator, the first 4 personas of
the language and 3 replies each; `--full-panel` runs every persona. (Timed by `bench/demo.py --defaults`.)"""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

import uxbench.cli.sim_cmd as sim_cmd
from uxbench.cli.main import app
from uxbench.sim.spec import SimSpec, prepare


class _Stop(Exception):
    pass


def _spec_of(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[SimSpec, str]:
    seen: dict[str, Any] = {}

    def capture(console: Any, spec: SimSpec, quiet: bool) -> Any:
        seen["spec"] = spec
        raise _Stop

    monkeypatch.setattr(sim_cmd, "_execute", capture)
    result = CliRunner().invoke(app, ["sim", "run", *args])
    assert isinstance(result.exception, _Stop), result.output
    return seen["spec"], result.output


@pytest.mark.extra("local")  # the embedded model's extra is checked before the banner
def test_the_embedded_demo_is_small_and_full_panel_is_everyone(monkeypatch: pytest.MonkeyPatch) -> None:
    spec, output = _spec_of(monkeypatch)
    assert (spec.max_personas, spec.max_turns, spec.lang) == (4, 3, "en")
    assert "the first 4 English personas, --full-panel runs every one" in " ".join(output.split())
    plans = prepare(spec).plans
    assert len(plans) == 4 and all(p.persona.lang == "en" and p.max_turns == 3 for p in plans)
    full, _ = _spec_of(monkeypatch, "--full-panel")
    assert full.max_personas is None and len(prepare(full).plans) == 12


def test_real_models_run_every_persona(monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _ = _spec_of(monkeypatch, "--model", "scripted:echo", "--simulator", "scripted:user")
    assert spec.max_personas is None and spec.max_turns == 8 and len(prepare(spec).plans) == 24

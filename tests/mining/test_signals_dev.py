"""The signals on real follow-ups: the development set (240 ShareGPT follow-ups labelled by reading them,
`../shared/data/signals_dev/`), its text rebuilt from PyPI (`signals_dev_support`). Every label must find its
reply in the pipeline's signal table, and the figures must not fall below the floors (measured figure minus a
small margin; the measured figures are in the README and bench/RESULTS.md). Skipped, with the reason, where
the set is not available."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from signals_dev_support import signals_dev

from extra_skip import require_extra
from uxbench.mining.deid import SALT_ENV
from uxbench.mining.eval_signals import evaluate_signals
from uxbench.mining.pipeline.mined import mined_run

# part -> signal -> (precision floor, recall floor); measured at 0f917c0 under the split the rules were tuned
# with (README, bench/RESULTS.md), the floors leave about two items of margin
FLOORS: dict[str, dict[str, tuple[float, float]]] = {
    "held-out": {"dissatisfied": (0.60, 0.44)},   # measured 0.68 (15/22), 0.52 (15/29)
    "dev": {"dissatisfied": (0.84, 0.76)},        # measured 0.92 (22/24), 0.85 (22/26)
    "all": {"dissatisfied": (0.75, 0.62),         # measured 0.80 (37/46), 0.67 (37/55)
            "complaint": (0.74, 0.76)},           # measured 0.79 (31/39), 0.82 (31/38)
}
GOAL = (0.6, 0.4)
"""Issue 8's goal for `dissatisfied` on the held-out part: precision >= 0.6 at recall >= 0.4."""
LEARNED_HELD_OUT_F1 = 0.47
"""The learned classifier trained on dev, on held-out: measured F1 0.55 (P 13/18, R 13/29)."""


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    dev = signals_dev()
    out = tmp_path_factory.mktemp("signals-dev") / "mined"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "signals-dev-salt")
        mined_run(dev.log, out, workers=1)
    return dev.labels, out


def _result(mined: tuple[Path, Path], split: str) -> dict[str, Any]:
    labels, out = mined
    return evaluate_signals(labels, out, split=split)  # type: ignore[arg-type]


def test_every_label_finds_its_reply(mined: tuple[Path, Path]) -> None:
    r = _result(mined, "all")
    assert r["n"] == 240 and r["n_dissatisfied"] == 55
    assert r["n_missing"] == 0, r["missing"][:5]
    assert {s: part["n"] for s, part in r["by_stratum"].items()} == {"negative": 60, "random": 120, "similar": 60}


@pytest.mark.parametrize("split", list(FLOORS))
def test_figures_stay_above_their_floors(mined: tuple[Path, Path], split: str) -> None:
    r = _result(mined, split)
    for name, (p_floor, r_floor) in FLOORS[split].items():
        m = r["signals"][name]
        assert m["precision"] is not None and m["precision"] >= p_floor, (split, name, m)
        assert m["recall"] is not None and m["recall"] >= r_floor, (split, name, m)


def test_held_out_and_dev_parts_are_disjoint_and_cover_the_set(mined: tuple[Path, Path]) -> None:
    held, dev = _result(mined, "held-out"), _result(mined, "dev")
    assert (held["n"], dev["n"]) == (131, 109)
    assert (held["n_dissatisfied"], dev["n_dissatisfied"]) == (29, 26)


def test_operating_point_chosen_on_dev_meets_the_goal_on_held_out(mined: tuple[Path, Path]) -> None:
    r = _result(mined, "held-out")
    op = r["operating_point"]
    assert op["chosen_on"] == "dev" and op["tuned_on_reported"] is False and op["threshold"] is not None
    assert op["reported"]["precision"] >= GOAL[0] and op["reported"]["recall"] >= GOAL[1], op
    flag = r["signals"]["dissatisfied"]
    assert flag["precision"] >= GOAL[0] and flag["recall"] >= GOAL[1], flag


def test_learned_classifier_trained_on_dev_holds_on_held_out(mined: tuple[Path, Path], tmp_path: Path) -> None:
    require_extra("learn")
    from uxbench.mining.train_signals import train_signals

    labels, out = mined
    report = train_signals(labels, out, tmp_path / "model", split="dev")
    held = report["held_out"]
    assert held["learned"]["n"] == 131 and held["learned"]["f1"] >= LEARNED_HELD_OUT_F1, held["learned"]

"""The recovery-strategy rules (`scoring/strategies.py`): cue matching details, and their accuracy on a small
labelled set of openings written for this project (`strategy_openings.jsonl`, never used to tune the cues)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from uxbench.metrics.proportions import wilson_ci
from uxbench.scoring.strategies import STRATEGIES, classify_opening

LABELLED = Path(__file__).with_name("strategy_openings.jsonl")


@pytest.mark.parametrize(("reply", "cue"), [
    ("I apologize for the mix-up; the shop opens at nine.", "apologi"),
    ("Apologies, the shop opens at nine.", "apologi"),
    ("We apologise: the shop opens at nine.", "apologi"),
])
def test_a_stem_cue_matches_every_ending(reply: str, cue: str) -> None:
    # Regression: "apologi" was compiled with a word boundary after it, so it matched no English word.
    assert classify_opening(reply) == ("apology", cue)


def test_curly_apostrophes_read_as_straight_ones() -> None:
    # Regression: models often write ’ (U+2019); "you’re right" missed the cue "you're right".
    assert classify_opening("You\u2019re right, the shop opens at nine.") == ("agreement", "you're right")


def test_a_stem_does_not_turn_whole_words_into_prefixes() -> None:
    assert classify_opening("Lollipops are sold at the corner shop.") == ("direct_fix", None)  # not "lol"


def _rows() -> list[dict[str, str]]:
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_labelled_set_is_what_it_claims() -> None:
    rows = _rows()
    assert len(rows) == 80
    assert {r["gold"] for r in rows} == set(STRATEGIES)
    assert Counter(r["lang"] for r in rows) == {"zh": 40, "en": 40}


def rules_accuracy() -> dict[str, tuple[int, int]]:
    """(correct, n) per language and overall."""
    out: dict[str, tuple[int, int]] = {}
    rows = _rows()
    for lang in ("zh", "en", "all"):
        chosen = [r for r in rows if lang in ("all", r["lang"])]
        correct = sum(classify_opening(r["text"])[0] == r["gold"] for r in chosen)
        out[lang] = (correct, len(chosen))
    return out


def test_rules_accuracy_on_the_labelled_set(capsys: pytest.CaptureFixture[str]) -> None:
    """A floor, not a target: the set was written by someone who had read the cue lists, so it flatters them.
    Printed with `pytest -s` for the record."""
    accuracy = rules_accuracy()
    with capsys.disabled():
        for lang, (k, n) in accuracy.items():
            low, high = wilson_ci(k, n)
            print(f"\nrules accuracy {lang}: {k}/{n} = {k / n:.1%} [95% CI {low:.1%}, {high:.1%}]", end="")
    k, n = accuracy["all"]
    assert k / n >= 0.6


def test_the_note_users_see_states_the_measured_accuracy() -> None:
    from uxbench.report.strategies import RULES_NOTE

    k, n = rules_accuracy()["all"]
    assert f"{k / n:.0%} agreement with hand labels on the project's own {n} test openings" in RULES_NOTE

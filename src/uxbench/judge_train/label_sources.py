"""Where each training label came from, how often such a label is right, and the precision floor.

A judge trained from a mining output learns the signals that labelled it. Each signal used as a label
(`dissatisfied_by` of a bad label, `satisfied_by` of a good one) has a measured precision *as a label*: of the
real, labelled replies whose mined label this signal made, the share whose label agrees with a person's reading
of the user's next message (`../shared/data/signals_dev`: 240 real ShareGPT follow-ups; a dissatisfied
follow-up means the reply before it was bad). The figures shipped in `label_precision.json` are measured by
`python bench/label_precision.py` on both parts of the fixed split; the rules' authors tuned them on the dev
part (which therefore flatters them), so the card quotes and the floor reads the held-out figures. A test
recomputes the table from the real set when it is on the machine.

Precision alone flatters a "good" signal: most replies are good anyway. The table also gives the base rate
(the share of labelled replies that are good), so the card can say how much a signal adds over guessing.

The floor (`--min-label-precision`, default `DEFAULT_FLOOR`: a label right at least 3 times in 5, set before
looking, not tuned): a mined row is kept when one of its label's signals has a held-out precision at or above
the floor, or none of them was measured (an
explicit thumbs-up/down, a regeneration or a copy is the user's own act, absent from the ShareGPT set; they
are kept and the card says "not measured"). Rows of Task 1 files (`file:...`) are always kept.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from uxbench.judge_train.data import TrainRow

DEFAULT_FLOOR = 0.6
PRECISION_FILE = "label_precision.json"
EXPLICIT = frozenset({"thumbs_down", "thumbs_up", "regenerate", "copied"})
"""Signals that are a user's own act, not an inference from text."""
PARTS = ("dev", "held-out")


def signals_of(source: str) -> list[str]:
    """The signals behind a label source: `signals:complaint,rephrase` -> [complaint, rephrase]; `thumbs_down`
    -> [thumbs_down]; a file's labels -> []."""
    if source.startswith("file:"):
        return []
    if source.startswith("signals:"):
        return [s for s in source.removeprefix("signals:").split(",") if s]
    return [source]


@cache
def shipped_precision() -> dict[str, Any]:
    """The measured table shipped with uxbench (`bench/label_precision.py` writes it)."""
    text = resources.files("uxbench.judge_train").joinpath(PRECISION_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _entry(fired: int, agree: int) -> dict[str, Any]:
    from uxbench.metrics.proportions import wilson_ci

    low, high = wilson_ci(agree, fired) if fired else (None, None)
    return {"fired": fired, "agree": agree, "precision": agree / fired if fired else None,
            "ci_low": low, "ci_high": high}


def measure(labelled: Iterable[tuple[str, str, bool]]) -> dict[str, Any]:
    """Precision of each signal as a label from (part, mined label source with its label as `good|...` or
    `bad|...`, gold dissatisfied) triples; a reply the rules left unlabelled has source `none`."""
    fired: dict[tuple[str, str, str], int] = Counter()
    agree: dict[tuple[str, str, str], int] = Counter()
    n: Counter[str] = Counter()
    good: Counter[str] = Counter()
    for part, source, dissatisfied in labelled:
        n[part] += 1
        good[part] += not dissatisfied
        if source == "none":
            continue
        label, _, name = source.partition("|")
        right = (label == "bad") == dissatisfied
        for signal in signals_of(name):
            fired[(part, label, signal)] += 1
            agree[(part, label, signal)] += right
        fired[(part, label, "*")] += 1
        agree[(part, label, "*")] += right
    keys = sorted({(label, signal) for _, label, signal in fired})
    return {
        "base_rate_good": {p: _entry(n[p], good[p]) for p in PARTS},
        "signals": [{"signal": signal, "label": label,
                     **{p: _entry(fired[(p, label, signal)], agree[(p, label, signal)]) for p in PARTS}}
                    for label, signal in keys],
    }


def _by_signal(table: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["label"], e["signal"]): e for e in table.get("signals", [])}


def row_keeps(row: TrainRow, floor: float, table: Mapping[str, Any]) -> bool:
    """Whether a row passes the floor (see the module docstring)."""
    names = signals_of(row.label_source)
    if not names or floor <= 0.0:
        return True
    measured = _by_signal(table)
    found = [measured[(row.label, s)]["held-out"]["precision"] for s in names if (row.label, s) in measured]
    found = [p for p in found if p is not None]
    return not found or max(found) >= floor


def apply_floor(rows: Sequence[TrainRow], floor: float,
                table: Mapping[str, Any] | None = None) -> tuple[list[TrainRow], Counter[str]]:
    """The rows that pass the floor, and the label sources left out with their counts."""
    table = table if table is not None else shipped_precision()
    kept: list[TrainRow] = []
    dropped: Counter[str] = Counter()
    for row in rows:
        if row_keeps(row, floor, table):
            kept.append(row)
        else:
            dropped[row.label_source] += 1
    return kept, dropped


def describe(rows_by_source: Mapping[str, int], labels_by_source: Mapping[str, str], dropped: Mapping[str, int],
             floor: float, table: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The card's account of the labels: each source with its count, label, kept or left out, and each of its
    signals' measured precision (held-out, with its Wilson CI and n) or why there is none."""
    table = table if table is not None else shipped_precision()
    measured = _by_signal(table)
    sources = []
    for source in sorted(set(rows_by_source) | set(dropped), key=lambda s: -(rows_by_source.get(s, 0)
                                                                              + dropped.get(s, 0))):
        label = labels_by_source.get(source, "?")
        signals = []
        for name in signals_of(source):
            entry = measured.get((label, name))
            if entry is None or not entry["held-out"]["fired"]:
                why = ("the user's own act; not in the development set" if name in EXPLICIT
                       else "never made a label on the development set's replies")
                signals.append({"signal": name, "precision": None, "why_not_measured": why})
            else:
                signals.append({"signal": name, "held_out": entry["held-out"], "dev": entry["dev"]})
        sources.append({"source": source, "label": label, "rows": rows_by_source.get(source, 0),
                        "left_out_by_floor": dropped.get(source, 0), "signals": signals})
    return {
        "floor": floor,
        "measured_on": table.get("measured_on"),
        "command": table.get("command"),
        "base_rate_good": table.get("base_rate_good"),
        "all_rules": {label: measured.get((label, "*")) for label in ("good", "bad")},
        "sources": sources,
        "from_rules": sum(n for s, n in rows_by_source.items() if s.startswith("signals:")),
        "note": ("held-out agreement of a judge trained on labels from rules measures agreement with those rules, "
                 "not with users: read it beside each signal's precision, and measure the judge on labels "
                 "people gave (`uxbench judge eval --data FILE`)"),
    }


def labelled_replies(labels: str, log: str, *, workdir: str | None = None) -> list[tuple[str, str, bool]]:
    """(part, `label|source` of the mined label or `none`, gold dissatisfied) of every labelled follow-up: the
    deterministic stages of `uxbench mine run` on `log`, read back with the label rule of `judge train`."""
    from pathlib import Path

    from uxbench.judge_train.mined import label_of
    from uxbench.mining.pipeline.mined import mine_for_eval
    from uxbench.mining.signals.real_eval import load_labels
    from uxbench.mining.signals.split import split_of

    items = load_labels(labels)
    mined = mine_for_eval(Path(log), {it.conversation_id for it in items},
                          workdir=Path(workdir) if workdir else None)
    out: list[tuple[str, str, bool]] = []
    for it in items:
        row = mined.rows.get((it.conversation_id, it.reply_turn))
        got = label_of(row) if row is not None and row.get("next_user_turn") == it.u2_turn_index else "missing"
        source = "none" if isinstance(got, str) else f"{got[0]}|{got[1]}"
        out.append((split_of(it.conversation_id), source, it.dissatisfied))
    return out

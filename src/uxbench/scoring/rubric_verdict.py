"""Read a judge's rubric answer: one integer (or N/A) per dimension, then the rubric's good / bad rule.

Order of evidence, in the answer with <think> blocks removed (the provider's separate reasoning is read only
when the answer is empty):
1. the last flat JSON object that names at least one dimension (lenient: single quotes, a trailing comma,
   an unquoted N/A; "4/5" is 4 when 5 is the dimension's top);
2. otherwise, per dimension, its last `key: 4` / `Name = 4` line (key, English or Chinese name).
A dimension left unanswered, a score off its scale, or N/A on a required dimension leaves the reply unscored,
with a note naming the dimension: a verdict is never guessed from part of a rubric.
"""

from __future__ import annotations

import json
import re
from typing import Any

from uxbench.scoring._text import normalize, split_thinking
from uxbench.scoring.rubric import Rubric, RubricScore, aggregate

_OBJECT_RE = re.compile(r"\{[^{}]*\}", re.S)
_NA_RE = re.compile(r"^\s*(?:n\s*/?\s*a|none|null|不适用|无)\s*$", re.I)
_VALUE = r"(n\s*/?\s*a|不适用|[+-]?\d+(?:\.\d+)?(?:\s*/\s*\d+)?)"


def _value(raw: Any, high: int) -> int | str | None:
    """An integer, None (N/A), or a string saying why the value cannot be read."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        return "true/false is not a score"
    if isinstance(raw, (int, float)):
        return int(raw) if float(raw).is_integer() else f"{raw} is not an integer"
    text = str(raw).strip()
    if _NA_RE.match(text):
        return None
    match = re.fullmatch(r"([+-]?\d+(?:\.\d+)?)(?:\s*/\s*(\d+))?", text)
    if match is None:
        return f"'{text[:20]}' is not a score"
    if match.group(2) is not None and int(match.group(2)) != high:
        return f"given out of {match.group(2)}, expected out of {high}"
    number = float(match.group(1))
    return int(number) if number.is_integer() else f"{match.group(1)} is not an integer"


def _repair(block: str) -> str:
    block = re.sub(r",\s*}", "}", block)
    block = re.sub(r":\s*(n\s*/?\s*a)\s*([,}])", r': "N/A"\2', block, flags=re.I)
    if '"' not in block:
        block = block.replace("'", '"')
    return block


def _from_json(answer: str, rubric: Rubric) -> dict[str, Any] | None:
    keys = {d.key for d in rubric.dimensions}
    for block in reversed(_OBJECT_RE.findall(answer)):
        for text in (block, _repair(block)):
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if isinstance(data, dict) and keys & set(data):
                return data
    return None


def _from_lines(answer: str, rubric: Rubric) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for dim in rubric.dimensions:
        names = "|".join(re.escape(n) for n in (dim.key, dim.name.en, dim.name.zh))
        hits = re.findall(rf"(?<![\w])(?:{names})(?![\w])[^\n:：=]{{0,30}}[:：=]\s*{_VALUE}", answer, re.I)
        if hits:
            found[dim.key] = hits[-1]
    return found


def parse_rubric(text: str, rubric: Rubric, *, reasoning: str | None = None) -> tuple[RubricScore | None, str]:
    """The rubric score of a judge's output, or None with the reason."""
    answer, thinking = split_thinking(normalize(text or ""))
    source, how = answer, "answer"
    if not answer:
        source = "\n".join(p for p in (thinking, normalize(reasoning or "").strip()) if p)
        how = "reasoning (answer empty)"
        if not source:
            return None, "empty output"
    data = _from_json(source, rubric)
    where = f"JSON object in the {how}"
    if data is None:
        data = _from_lines(source, rubric)
        where = f"'dimension: score' lines in the {how}"
        if not data:
            return None, f"no rubric scores found in the {how}"
    scores: dict[str, int | None] = {}
    for dim in rubric.dimensions:
        if dim.key not in data:
            return None, f"{where}: no score for '{dim.key}'"
        value = _value(data[dim.key], dim.high)
        if isinstance(value, str):
            return None, f"{where}: '{dim.key}': {value}"
        scores[dim.key] = value
    try:
        result = aggregate(rubric, scores)
    except ValueError as err:
        return None, f"{where}: {err}"
    if result.value is None:
        return None, f"{where}: every weighted dimension is N/A"
    return result, f"{where}; {result.value:.3f} {'>' if result.label == 'good' else '<='} {rubric.threshold}"

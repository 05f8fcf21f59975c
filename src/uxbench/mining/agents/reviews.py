"""Checking the judge's scores and the QA reviews, and the keep rule (applied here, not by a model)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from uxbench.mining.agents.jsonout import extract_json
from uxbench.mining.agents.models import AXES

Verdict = Literal["keep", "downgrade", "reject"]
_VERDICTS: dict[str, Verdict] = {
    "keep": "keep", "pass": "keep", "保留": "keep",
    "downgrade": "downgrade", "降级": "downgrade",
    "reject": "reject", "delete": "reject", "remove": "reject", "删除": "reject", "拒绝": "reject",
}
UNSAFE_ISSUES = frozenset({"unsafe", "unsafe_content", "personal_data"})


@dataclass(frozen=True)
class Scores:
    values: dict[str, int]
    notes: str | None = None

    @property
    def mean(self) -> float:
        return round(sum(self.values.values()) / len(self.values), 3)


@dataclass(frozen=True)
class Review:
    verdict: Verdict
    issues: list[str] = field(default_factory=list)
    needs_context: bool = False
    corrected_dimension: str | None = None
    notes: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "issues": list(self.issues),
            "needs_context": self.needs_context,
            "corrected_dimension": self.corrected_dimension,
            "notes": self.notes,
        }


def keep_decision(scores: Scores, keep_mean: float, keep_min: int) -> str | None:
    """None when the case is kept; else why not. The model's own opinion plays no part."""
    low = [axis for axis in AXES if scores.values[axis] < keep_min]
    if low:
        return f"judge: {', '.join(low)} below {keep_min}"
    if scores.mean < keep_mean:
        return f"judge: mean {scores.mean:.2f} below {keep_mean:g}"
    return None


def _score(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and float(value).is_integer() and 1 <= value <= 5:
        return int(value)
    return None


def _entries(obj: dict[str, Any], key: str) -> list[dict[str, Any]] | None:
    """The per-case entries: a list of objects with `index`, or an object keyed by index."""
    raw = obj[key]
    if isinstance(raw, dict):
        return [{**v, "index": k} for k, v in raw.items() if isinstance(v, dict)]
    if isinstance(raw, list) and all(isinstance(v, dict) for v in raw):
        return list(raw)
    return None


def _index(entry: dict[str, Any], n: int) -> int | None:
    raw = entry.get("index", entry.get("candidate_index"))
    if isinstance(raw, bool):
        return None
    try:
        i = int(str(raw).strip())
    except ValueError:
        return None
    return i if 0 <= i < n else None


def _parse_entries(
    text: str, key: str, n: int, check: Callable[[dict[str, Any]], tuple[Any, list[str]]]
) -> tuple[dict[int, Any] | None, list[str]]:
    """Entries by index; problems for entries that do not check and for indices without an entry.
    The valid entries are returned even when there are problems (the caller merges two attempts)."""
    obj = extract_json(text, key)
    if obj is None:
        return None, [f'no JSON object with a "{key}" list was found']
    entries = _entries(obj, key)
    if entries is None:
        return None, [f'"{key}" must be a list of objects']
    found: dict[int, Any] = {}
    problems: list[str] = []
    for entry in entries:
        i = _index(entry, n)
        if i is None:
            problems.append(f"an entry has no valid index (0 to {n - 1}): {str(entry)[:80]}")
            continue
        value, bad = check(entry)
        if bad:
            problems.extend(f"index {i}: {b}" for b in bad)
        elif i not in found:
            found[i] = value
    problems.extend(f"no entry for index {i}" for i in range(n) if i not in found and not any(
        p.startswith(f"index {i}:") for p in problems))
    return found, problems


def _check_scores(entry: dict[str, Any]) -> tuple[Scores | None, list[str]]:
    flat = {**entry, **entry["scores"]} if isinstance(entry.get("scores"), dict) else entry
    values: dict[str, int] = {}
    bad = []
    for axis in AXES:
        value = _score(flat.get(axis))
        if value is None:
            bad.append(f"{axis} must be an integer from 1 to 5 (got {flat.get(axis)!r})")
        else:
            values[axis] = value
    if bad:
        return None, bad
    notes = flat.get("notes")
    return Scores(values, str(notes) if notes is not None else None), []


def parse_scores(text: str, n: int) -> tuple[dict[int, Scores] | None, list[str]]:
    """The judge's scores per candidate index."""
    return _parse_entries(text, "scores", n, _check_scores)


def _flag(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    text = str(value).strip().lower()
    return True if text in {"true", "yes", "1"} else False if text in {"false", "no", "0", ""} else None


def review_checker(
    mapper: Callable[[object], str | None],
) -> Callable[[dict[str, Any]], tuple[Review | None, list[str]]]:
    """A checker for QA entries whose corrected dimension must map through `mapper`."""

    def check(entry: dict[str, Any]) -> tuple[Review | None, list[str]]:
        bad = []
        verdict = _VERDICTS.get(str(entry.get("verdict", "")).strip().lower())
        if verdict is None:
            bad.append(f"verdict must be keep, downgrade or reject (got {entry.get('verdict')!r})")
        raw_issues = entry.get("issues") or []
        issues = [raw_issues] if isinstance(raw_issues, str) else raw_issues
        if not isinstance(issues, list):
            bad.append("issues must be a list")
            issues = []
        issues = [str(x).strip().lower() for x in issues if str(x).strip()]
        needs = _flag(entry.get("needs_context"))
        if needs is None:
            bad.append("needs_context must be true or false")
        corrected_raw = entry.get("corrected_dimension")
        corrected = None
        if corrected_raw not in (None, "", "null", "none"):
            corrected = mapper(corrected_raw)
            if corrected is None:
                bad.append(f"corrected_dimension {corrected_raw!r} is not one of the listed keys")
        if bad or verdict is None:
            return None, bad
        notes = entry.get("notes")
        return Review(
            verdict=verdict,
            issues=issues,
            needs_context=bool(needs) or "needs_context" in issues,
            corrected_dimension=corrected,
            notes=str(notes) if notes is not None else None,
        ), []

    return check


def parse_reviews(
    text: str, n: int, mapper: Callable[[object], str | None]
) -> tuple[dict[int, Review] | None, list[str]]:
    """The QA reviews per candidate index."""
    return _parse_entries(text, "reviews", n, review_checker(mapper))

"""UXBench taxonomies (failure / success dimensions, scenarios, recovery strategies, signals, difficulty).

The taxonomies are data (`taxonomy.json` next to this file). The dataset's own labels come from several
conflicting vocabularies (Chinese 14-name and 18-name lists, the miner's 10, English release names);
`map_*` turns any of them into one stable English key. Lookups ignore case, spacing, punctuation,
"and"/"&" and the traditional forms of the characters the labels use.

Deliberate choices (also recorded in the JSON): 其他, 需求澄清不足 and 对话管理不当 map to None (no released
slot); 上下文遗漏/记忆 -> intent_misunderstanding; 服务恢复失败 -> task_incomplete; 风格/受众不匹配 ->
emotional_tone; 预期落差 -> safety_refusal; scenario 其他 -> None.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

TaxonomyKind = Literal[
    "failure_dimensions",
    "success_dimensions",
    "scenarios",
    "recovery_strategies",
    "signal_types",
    "difficulties",
]

_DATA_FILE = Path(__file__).with_name("taxonomy.json")
_AND_WORD = re.compile(r"\band\b")


class TaxonomyEntry(BaseModel):
    """One category of a taxonomy."""

    model_config = ConfigDict(frozen=True)

    key: str
    """Stable English identifier (snake_case), used in records and breakdowns."""
    en: str
    """English display name."""
    zh: str
    """Chinese display name."""
    aliases: tuple[str, ...] = ()
    """Other names for the same category found in the dataset's vocabularies."""
    description: str = ""
    """One-line meaning, in our own words."""
    released_share: float | None = None
    """Share (%) reported for the released dataset, where the paper gives one."""


class _Taxonomy:
    """Entries of one kind plus a normalised-name -> key index."""

    def __init__(self, entries: tuple[TaxonomyEntry, ...], unmapped: tuple[str, ...], t2s: dict[int, str]):
        self.entries = entries
        self.by_key = {e.key: e for e in entries}
        self.unmapped = frozenset(normalize_name(n, t2s) for n in unmapped)
        index: dict[str, str] = {}
        for e in entries:
            for name in (e.key, e.en, e.zh, *e.aliases):
                norm = normalize_name(name, t2s)
                if not norm:
                    continue
                if index.get(norm, e.key) != e.key:
                    raise ValueError(f"taxonomy.json: name {name!r} maps to {index[norm]} and {e.key}")
                index[norm] = e.key
        self.index = index


def normalize_name(name: str, t2s: dict[int, str] | None = None) -> str:
    """The lookup form of a label: NFKC, lower case, simplified characters, no spaces or punctuation."""
    text = unicodedata.normalize("NFKC", name).lower()
    text = text.translate(t2s if t2s is not None else _tables().t2s)
    text = _AND_WORD.sub("", text.replace("&", ""))
    return "".join(ch for ch in text if ch.isalnum())


class _Tables:
    def __init__(self, raw: dict[str, Any]) -> None:
        pairs = str(raw.get("traditional_to_simplified", ""))
        self.t2s: dict[int, str] = {ord(pairs[i]): pairs[i + 1] for i in range(0, len(pairs) - 1, 2)}
        self.kinds: dict[str, _Taxonomy] = {}
        for kind in (
            "failure_dimensions",
            "success_dimensions",
            "scenarios",
            "recovery_strategies",
            "signal_types",
            "difficulties",
        ):
            entries = tuple(TaxonomyEntry.model_validate(e) for e in raw[kind])
            unmapped = tuple(raw.get(f"{kind}_unmapped", {}).get("names", ()))
            self.kinds[kind] = _Taxonomy(entries, unmapped, self.t2s)


@lru_cache(maxsize=1)
def _tables() -> _Tables:
    # Read once per process; the file ships inside the package.
    with _DATA_FILE.open(encoding="utf-8") as fh:
        return _Tables(json.load(fh))


def entries(kind: TaxonomyKind) -> list[TaxonomyEntry]:
    """All entries of one taxonomy, in the canonical order."""
    return list(_tables().kinds[kind].entries)


def failure_dimensions() -> list[TaxonomyEntry]:
    """The 10 released failure dimensions (bad replies), largest share first."""
    return entries("failure_dimensions")


def success_dimensions() -> list[TaxonomyEntry]:
    """The 8 success dimensions (liked replies)."""
    return entries("success_dimensions")


def scenarios() -> list[TaxonomyEntry]:
    """The paper's 8 interaction scenarios."""
    return entries("scenarios")


def recovery_strategies() -> list[TaxonomyEntry]:
    """The 6 opening strategies of recovery replies (Task 3)."""
    return entries("recovery_strategies")


def signal_types() -> list[TaxonomyEntry]:
    """Behavioural signals that mark a reply as disliked or liked."""
    return entries("signal_types")


def difficulties() -> list[TaxonomyEntry]:
    """Difficulty levels: easy, medium, hard, very_hard."""
    return entries("difficulties")


def get_entry(kind: TaxonomyKind, key: str) -> TaxonomyEntry | None:
    """The entry with this key, or None."""
    return _tables().kinds[kind].by_key.get(key)


def map_name(kind: TaxonomyKind, name: object) -> str | None:
    """The taxonomy key for any known name (key, English, Chinese, alias); None when unknown or empty."""
    if not isinstance(name, str):
        return None
    return _map_str(kind, name)


@lru_cache(maxsize=4096)  # a dataset repeats a few dozen names over every row
def _map_str(kind: TaxonomyKind, name: str) -> str | None:
    tables = _tables()
    norm = normalize_name(name, tables.t2s)
    if not norm:
        return None
    tax = tables.kinds[kind]
    if norm in tax.unmapped:
        return None
    return tax.index.get(norm)


def is_known_unmapped(kind: TaxonomyKind, name: str) -> bool:
    """True for names that are known but deliberately have no slot (e.g. 其他)."""
    tables = _tables()
    return normalize_name(name, tables.t2s) in tables.kinds[kind].unmapped


def map_failure_dimension(name: object) -> str | None:
    """Failure-dimension key for a name from any vocabulary (其他 / 需求澄清不足 -> None)."""
    return map_name("failure_dimensions", name)


def map_success_dimension(name: object) -> str | None:
    """Success-dimension key for a name, or None."""
    return map_name("success_dimensions", name)


def map_scenario(name: object) -> str | None:
    """Scenario key for a name from the 7-, 8- or English lists (私密与生活决策辅助 -> private_daily_life)."""
    return map_name("scenarios", name)


def map_recovery_strategy(name: object) -> str | None:
    """Recovery-strategy key for a name, or None."""
    return map_name("recovery_strategies", name)


def map_signal_type(name: object) -> str | None:
    """Signal-type key (repeat -> repeat_query, no_followup -> conversation_end, ...), or None."""
    return map_name("signal_types", name)


def map_difficulty(name: object) -> str | None:
    """Difficulty key (easy / medium / hard / very_hard), or None for empty or unknown values."""
    return map_name("difficulties", name)

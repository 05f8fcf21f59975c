"""The agents' prompt files (`prompts/{en,zh}/*.txt`, written for this project) and their fill-ins.

Templates use `string.Template` placeholders (`$name`), so the JSON examples in them need no escaping.
Taxonomy lists are generated from `uxbench.data.taxonomy`, so prompts and validation use the same keys.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from string import Template
from typing import Literal

from uxbench.data.taxonomy import TaxonomyKind, entries
from uxbench.errors import ConfigError
from uxbench.mining.signals.similarity import cjk_share
from uxbench.mining.types import Session

Lang = Literal["zh", "en"]
PROMPT_DIR = Path(__file__).with_name("prompts")
_ZH_SHARE = 0.3
_SAMPLE_CHARS = 2000


@lru_cache(maxsize=64)
def template(lang: Lang, name: str) -> Template:
    """The template `prompts/<lang>/<name>.txt`."""
    path = PROMPT_DIR / lang / f"{name}.txt"
    try:
        return Template(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"missing prompt file {path}") from None


def render(lang: Lang, name: str, **values: object) -> str:
    """Fill a template; every placeholder must be given."""
    try:
        return template(lang, name).substitute({k: str(v) for k, v in values.items()}).strip()
    except KeyError as err:
        raise ConfigError(f"prompt {lang}/{name}.txt needs a value for {err}") from None


@lru_cache(maxsize=1)
def _zh_labels() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = json.loads((PROMPT_DIR / "zh" / "labels.json").read_text("utf-8"))
    return data


@lru_cache(maxsize=16)
def taxonomy_list(kind: TaxonomyKind, lang: Lang) -> str:
    """One line per category: key, names and meaning (Chinese meanings from zh/labels.json)."""
    lines = []
    zh = _zh_labels().get(kind, {}) if lang == "zh" else {}
    for e in entries(kind):
        if lang == "zh":
            lines.append(f"- {e.key}（{e.zh}）：{zh.get(e.key, e.description)}")
        else:
            lines.append(f"- {e.key} ({e.en}): {e.description}")
    return "\n".join(lines)


def session_lang(session: Session, setting: Literal["auto", "zh", "en"]) -> Lang:
    """The prompt language for a session: the setting, or by the share of CJK in the user turns."""
    if setting != "auto":
        return setting
    text = "".join(t.content for t in session.turns if t.role == "user")[:_SAMPLE_CHARS]
    if not text.strip():
        text = "".join(t.content for t in session.turns)[:_SAMPLE_CHARS]
    return "zh" if cjk_share(text) >= _ZH_SHARE else "en"

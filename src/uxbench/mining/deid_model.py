"""The optional model pass of de-identification (`uxbench mine run --deid-model PROVIDER:MODEL`), as the
method's pipeline runs a locally deployed LLM after its rules.

It reads what the rules left (the model never sees a value the rules found: it gets the text with their
placeholders), asks for the personal data still in it as JSON, and trusts nothing it says: a proposed value
is replaced only where it occurs in the text exactly (and, for a value that starts or ends with a letter or
digit, not inside a longer word: "Ann" never cuts "Annual"), and a value that does not occur, holds a
placeholder, is shorter than two characters or is not text is dropped and counted. Calls go through the
project's model layer (`models.model.create_model`: adaptive limiter, retries) without a response cache, which
would keep the texts with the values found; each batch's checkpoint is what a rerun reuses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from uxbench.data.schema import Message
from uxbench.mining.agents.jsonout import extract_json
from uxbench.mining.deid_rules import PII_TYPES
from uxbench.mining.deid_types import PiiSpan
from uxbench.mining.llm import ask
from uxbench.models.api import GenerateConfig
from uxbench.models.model import Model

MAX_TOKENS = 300
"""A list of the few values one message holds fits in this; a model that rambles stops here."""
MIN_CHARS = 2
_PLACEHOLDER = re.compile(r"\[[A-Z]+_\d+\]")
_WORD = re.compile(r"[A-Za-z0-9]")
SYSTEM = (
    "You find personal data in a chat message so that it can be removed: names of real people, phone numbers, "
    "e-mail addresses, street addresses, ID, passport and card numbers, account names and handles. Copy each "
    "value exactly as it is written in the message. Text in square brackets such as [PHONE_1] is already "
    "removed: leave it. Famous people, companies, places on their own and fictional characters are not "
    'personal data. Answer with JSON only: {"items": [{"text": "<exact value>", "type": "NAME|PHONE|EMAIL|'
    'ADDRESS|ID|CARD|HANDLE"}]}, and {"items": []} when there is none.'
)
_TYPES = {"HANDLE": "NAME", "PASSPORT": "ID", "ACCOUNT": "NAME"}


@dataclass
class ModelPassCounts:
    """What the model proposed and what the code kept (a proposal not in the text is never applied)."""

    calls: int = 0
    failed: int = 0
    proposed: int = 0
    kept: int = 0
    not_in_text: int = 0
    rejected_other: int = 0
    by_type: dict[str, int] = field(default_factory=dict)

    def as_counts(self) -> dict[str, int]:
        out = {"model_calls": self.calls, "model_failed_calls": self.failed, "model_proposed": self.proposed,
               "model_kept": self.kept, "model_not_in_text": self.not_in_text,
               "model_rejected_other": self.rejected_other}
        out.update({f"model_pii_{k}": v for k, v in sorted(self.by_type.items())})
        return out


def parse_items(answer: str) -> tuple[list[dict[str, Any]] | None, list[str]]:
    """The model's items, or the problems of an answer that is not the asked JSON."""
    found = extract_json(answer, "items")
    data = found.get("items") if found is not None else None
    if not isinstance(data, list):
        return None, ['answer with {"items": [...]} only']
    return [item for item in data if isinstance(item, dict)], []


def checked_spans(text: str, items: list[dict[str, Any]], counts: ModelPassCounts) -> list[PiiSpan]:
    """Spans of the proposed values that occur in `text` exactly (every occurrence); the rest is counted."""
    spans: list[PiiSpan] = []
    for item in items:
        counts.proposed += 1
        value, kind = item.get("text"), str(item.get("type") or "NAME").upper()
        if not isinstance(value, str) or len(value.strip()) < MIN_CHARS:
            counts.rejected_other += 1
            continue
        value = value.strip()
        if _PLACEHOLDER.search(value):
            counts.rejected_other += 1  # it would swallow what the rules already replaced
            continue
        # The code's check: a model that invents or rewrites a value changes nothing.
        found = _occurrences(text, value)
        if not found:
            counts.not_in_text += 1
            continue
        kind = _TYPES.get(kind, kind if kind in PII_TYPES else "NAME")
        counts.kept += 1
        counts.by_type[kind] = counts.by_type.get(kind, 0) + 1
        spans += [PiiSpan(kind, start, start + len(value), " ".join(value.lower().split())) for start in found]
    return spans


def _occurrences(text: str, value: str) -> list[int]:
    """Starts of `value` in `text`, except where a word character of its edge continues a longer word."""
    starts: list[int] = []
    start = text.find(value)
    while start != -1:
        end = start + len(value)
        cut_before = start > 0 and _WORD.match(value[0]) and _WORD.match(text[start - 1])
        cut_after = end < len(text) and _WORD.match(value[-1]) and _WORD.match(text[end])
        if not (cut_before or cut_after):
            starts.append(start)
        start = text.find(value, start + 1)
    return starts


async def propose(text: str, model: Model, counts: ModelPassCounts) -> list[PiiSpan]:
    """The checked spans the model proposes for one text (none when the call fails: the rules' text stands)."""
    if len(text.strip()) < MIN_CHARS:
        return []
    messages = [Message(role="system", content=SYSTEM), Message(role="user", content=text)]

    def retry(request: list[Message], answer: str, problems: list[str]) -> list[Message]:
        return [*request, Message(role="assistant", content=answer or "(empty)"),
                Message(role="user", content="; ".join(problems))]

    ex = await ask(model, messages, GenerateConfig(temperature=0.0, max_tokens=MAX_TOKENS), parse_items, retry)
    counts.calls += ex.attempts
    if not ex.ok or ex.value is None:
        counts.failed += 1
        return []
    return checked_spans(text, ex.value, counts)

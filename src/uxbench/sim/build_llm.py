"""The LLM extraction of `uxbench personas build`: profile, goal items and facts of one mined user, as a JSON
object validated against a schema (`Extracted`). An unusable answer is sent back once with its problems
(`mining.llm.ask`); a second one counts as a failed extraction and the conversation gets no persona.

The model reads only the user's own messages (de-identified), never the assistant's replies, and whatever it
says is checked by code afterwards (`sim.build`): a fact whose value does not occur in those messages is dropped
and counted, never kept on the model's word."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from uxbench.data.schema import Message
from uxbench.mining.llm import Exchange, ask, correction_turns
from uxbench.models.api import GenerateConfig
from uxbench.models.model import Model
from uxbench.scoring.prompts.files import PackageTemplates

TEMPLATES = PackageTemplates("uxbench.sim", "Persona build")
MAX_MESSAGE_CHARS = 1500
"""Each user message shown to the extraction model is cut to this many characters."""
_OBJECT_RE = re.compile(r"\{.*\}", re.S)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExtractedGoal(_Strict):
    request: str = Field(min_length=1, max_length=600)
    check_question: str = Field(min_length=1, max_length=400)


class ExtractedFact(_Strict):
    label: str = Field(min_length=1, max_length=80)
    value: str = Field(min_length=1, max_length=200)


class Extracted(_Strict):
    """What the extraction model must answer."""

    description: str = Field(default="", max_length=600)
    expertise: Literal["novice", "intermediate", "expert"] = "intermediate"
    tone: str = Field(default="neutral", max_length=80)
    goal: list[ExtractedGoal] = Field(min_length=1, max_length=5)
    facts: list[ExtractedFact] = Field(default_factory=list, max_length=10)


def prompt_digest() -> str:
    """sha256 of the extraction templates (both languages): recorded with every mined persona."""
    names = [f"build/{lang}/{part}.txt" for lang in ("en", "zh") for part in ("extract", "extract_retry")]
    joined = "".join(f"{n}:{h}" for n, h in sorted(TEMPLATES.hashes(names).items()))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


def extraction_messages(user_texts: list[str], lang: str) -> list[Message]:
    numbered = "\n".join(f"{i}. {text[:MAX_MESSAGE_CHARS]}" for i, text in enumerate(user_texts, start=1))
    return [Message(role="user", content=TEMPLATES.text(f"build/{lang}/extract.txt", {"messages": numbered}))]


def parse_extraction(text: str) -> tuple[Extracted | None, list[str]]:
    """(the extraction, []) or (None, its problems)."""
    from uxbench.scoring._text import strip_reasoning

    answer = strip_reasoning(text or "")
    match = _OBJECT_RE.search(answer)
    if match is None:
        return None, ["no JSON object in the answer"]
    try:
        data = json.loads(match.group())
    except (ValueError, RecursionError) as err:  # an answer nested past Python's recursion limit too
        return None, [f"the JSON does not parse: {err}"]
    try:
        return Extracted.model_validate(data), []
    except ValidationError as err:
        return None, [f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in err.errors()[:5]]


async def extract(model: Model, user_texts: list[str], lang: str, *, max_tokens: int = 800) -> Exchange[Extracted]:
    """Ask the model for the user's profile, goal and facts (two requests at most)."""

    def correction(problems: list[str]) -> str:
        return TEMPLATES.text(f"build/{lang}/extract_retry.txt", {"problems": "; ".join(problems)})

    return await ask(model, extraction_messages(user_texts, lang), GenerateConfig(temperature=0.0,
                     max_tokens=max_tokens), parse_extraction, correction_turns(correction))

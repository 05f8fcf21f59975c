"""Optional LLM check of follow-up messages: which kind of reaction is the user's next message?

String rules cannot always tell a rephrase from a continuation; a model reads the three messages and
answers one label of `FOLLOWUP_LABELS` as strict JSON. An output that cannot be read is asked for once
more (`uxbench.mining.llm.ask`; the request repeated with a reminder in front); a second unreadable output,
or a model error, is recorded as `failed`, never guessed. The prompt is in Chinese when the conversation
is mostly Chinese.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from uxbench.data.schema import Message
from uxbench.mining.llm import Tick, ask, map_bounded
from uxbench.mining.signals.followup import FOLLOWUP_LABELS, FollowupLabel, rule_label
from uxbench.mining.signals.similarity import cjk_share
from uxbench.models.api import GenerateConfig
from uxbench.models.model import Model

__all__ = [
    "PROMPT_FILES", "FollowupPair", "FollowupVerdict", "classify_followups", "parse_label", "prompt_sha256",
    "rule_label",
]


class FollowupPair(BaseModel):
    prev_user: str | None
    """The user message the reply answered (None when the reply opened the conversation)."""
    assistant: str
    next_user: str


class FollowupVerdict(BaseModel):
    label: FollowupLabel | Literal["failed"]
    reason: str | None = None
    attempts: int = 0
    raw: list[str] = Field(default_factory=list)
    """The model's raw outputs, one per attempt."""
    error: str | None = None


PROMPT_DIR = Path(__file__).with_name("prompts")
PROMPT_FILES = {"en": PROMPT_DIR / "followup_en.txt", "zh": PROMPT_DIR / "followup_zh.txt"}
"""The system prompts (our own files): their hash goes into the outputs that used them."""


@lru_cache(maxsize=2)
def system_prompt(lang: str) -> str:
    return PROMPT_FILES[lang].read_text(encoding="utf-8").strip()


def prompt_sha256() -> str:
    """SHA-256 over both prompt files (English, then Chinese), so any edit to either changes it."""
    digest = hashlib.sha256()
    for lang in ("en", "zh"):
        digest.update(PROMPT_FILES[lang].read_bytes())
    return digest.hexdigest()


_USER_EN = (
    "Previous user message:\n<<<{prev}>>>\n\nAssistant reply:\n<<<{reply}>>>\n\n"
    "Next user message:\n<<<{next}>>>"
)
_USER_ZH = "用户上一条消息：\n<<<{prev}>>>\n\n助手回复：\n<<<{reply}>>>\n\n用户下一条消息：\n<<<{next}>>>"
_RETRY_EN = (
    "Your previous answer could not be read. "
    "Reply with only the JSON object, e.g. {\"label\": \"other\"}.\n\n"
)
_RETRY_ZH = "上一次的回答无法解析。请只输出 JSON 对象，例如 {\"label\": \"other\"}。\n\n"
_MAX_REPLY_CHARS = 3000

_SYNONYMS: dict[str, FollowupLabel] = {
    "topic change": "topic_change", "topic-change": "topic_change", "topicchange": "topic_change",
    "continuation": "continue", "continued": "continue", "follow_up": "continue", "followup": "continue",
    "praise": "other", "thanks": "other", "neutral": "other",
    "重复": "repeat", "改述": "rephrase", "换个说法": "rephrase", "抱怨": "complaint", "投诉": "complaint",
    "放弃": "dismiss", "换话题": "topic_change", "转移话题": "topic_change", "继续": "continue",
    "其他": "other",
}
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


def build_messages(pair: FollowupPair, retry: bool = False) -> list[Message]:
    """The chat request for one follow-up (Chinese prompt when the texts are mostly Chinese)."""
    texts = f"{pair.prev_user or ''}{pair.next_user}"
    zh = cjk_share(texts) >= 0.3
    reply = pair.assistant
    if len(reply) > _MAX_REPLY_CHARS:
        reply = reply[:_MAX_REPLY_CHARS] + " …"
    body = (_USER_ZH if zh else _USER_EN).format(prev=pair.prev_user or "", reply=reply, next=pair.next_user)
    if retry:
        body = (_RETRY_ZH if zh else _RETRY_EN) + body
    system = Message(role="system", content=system_prompt("zh" if zh else "en"))
    return [system, Message(role="user", content=body)]


def parse_label(text: str) -> tuple[FollowupLabel, str | None] | None:
    """(label, reason) from a model output holding one JSON object (fences and prose around it are
    tolerated); None when no object with a known label is found."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for chunk in candidates:
        for start in (i for i, ch in enumerate(chunk) if ch == "{"):
            try:
                obj, _ = decoder.raw_decode(chunk, start)
            except json.JSONDecodeError:
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("label"), str):
                continue
            raw = obj["label"].strip().lower()
            label = raw if raw in FOLLOWUP_LABELS else _SYNONYMS.get(raw)
            if label is None:
                continue
            reason = obj.get("reason")
            return label, str(reason) if reason is not None else None
    return None


async def classify_followup(pair: FollowupPair, model: Model,
                            config: GenerateConfig | None = None) -> FollowupVerdict:
    """One follow-up: up to two attempts (the second repeats the request with a reminder), then `failed`."""
    cfg = config or GenerateConfig(temperature=0.0, max_tokens=120)

    def parse(text: str) -> tuple[tuple[FollowupLabel, str | None] | None, list[str]]:
        parsed = parse_label(text)
        return parsed, [] if parsed is not None else ["no readable label"]

    ex = await ask(model, build_messages(pair), cfg, parse, lambda *_: build_messages(pair, retry=True))
    if ex.value is not None:
        label, reason = ex.value
        return FollowupVerdict(label=label, reason=reason, attempts=ex.attempts, raw=ex.raws)
    error = ex.error.removeprefix("model error: ") if ex.error else "no readable label in two attempts"
    return FollowupVerdict(label="failed", attempts=ex.attempts, raw=ex.raws, error=error)


async def classify_followups(
    pairs: Sequence[FollowupPair | tuple[str | None, str, str]],
    model: Model,
    *,
    config: GenerateConfig | None = None,
    tick: Tick | None = None,
) -> list[FollowupVerdict]:
    """Label each (previous user message, reply, next user message), in input order. As many at once
    as the model's concurrency ceiling; its adaptive limiter decides how many calls are in flight."""

    async def one(item: FollowupPair | tuple[str | None, str, str]) -> FollowupVerdict:
        pair = item if isinstance(item, FollowupPair) else FollowupPair(
            prev_user=item[0], assistant=item[1], next_user=item[2])
        return await classify_followup(pair, model, config)

    return await map_bounded(pairs, one, model.limiter.max_concurrency, tick)

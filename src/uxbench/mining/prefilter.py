"""Prefilter: drop conversations that cannot yield a test case, and count why.

Rules, first match wins:
1. `empty`: no turns, or every message is blank;
2. `no_reply`: no assistant turn at all;
3. `too_short`: fewer than `min_turns` messages (default 2: one question, one answer);
4. `all_interrupted`: every assistant reply is blank, shorter than `min_reply_chars` (4) after stripping,
   or a system marker such as "answer interrupted" / "回答已中断" / "(no output)".
A pure function of (sessions, config): safe in-process and in Ray `map_batches`.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from uxbench.mining.types import Session

DropReason = Literal["empty", "no_reply", "too_short", "all_interrupted"]

DEFAULT_MARKERS: tuple[str, ...] = (
    "answer interrupted", "回答已中断", "回答中断", "已中断", "generation paused", "已停止生成", "停止生成",
    "(no output)", "no output", "无输出", "video generation failed", "视频生成失败",
    "no related image found", "未找到相关图片", "image download failed", "图片下载失败",
    "content review not passed", "内容审核未通过", "interrupted", "用户已取消",
)


class PrefilterConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    min_turns: int = Field(default=2, ge=1)
    """Conversations with fewer messages are too short."""
    min_reply_chars: int = Field(default=4, ge=0)
    """A reply shorter than this (after stripping) counts as interrupted (method notes: 4)."""
    markers: tuple[str, ...] = DEFAULT_MARKERS
    """System texts that stand in for a reply that never came; matched on the whole reply, ignoring case,
    spaces, brackets and punctuation."""


_NOISE = re.compile(r"[\W_]+")


def _norm(text: str) -> str:
    return _NOISE.sub("", unicodedata.normalize("NFKC", text).casefold())


_HEAD_CHARS = 256


@lru_cache(maxsize=16)
def _marker_set(markers: tuple[str, ...]) -> frozenset[str]:
    return frozenset(_norm(m) for m in markers)


def is_interrupted(text: str, config: PrefilterConfig | None = None) -> bool:
    """True when a reply is blank, too short, or only a system marker."""
    cfg = config or PrefilterConfig()
    stripped = text.strip()
    if len(stripped) < cfg.min_reply_chars:
        return True
    markers = _marker_set(cfg.markers)
    if len(stripped) > _HEAD_CHARS and stripped.isascii():
        # ASCII normalises character by character, so the opening's normal form opens the whole reply's: once
        # that is longer than every marker the reply is none of them (a long reply, not normalised whole)
        if len(_norm(stripped[:_HEAD_CHARS])) > max(map(len, markers), default=0):
            return False
    return _norm(stripped) in markers


def drop_reason(session: Session, config: PrefilterConfig | None = None) -> DropReason | None:
    """Why `session` is dropped, or None to keep it."""
    cfg = config or PrefilterConfig()
    turns = session.turns
    if not turns or all(not t.content.strip() for t in turns):
        return "empty"
    replies = [t for t in turns if t.role == "assistant"]
    if not replies:
        return "no_reply"
    if len(turns) < cfg.min_turns:
        return "too_short"
    if all(is_interrupted(t.content, cfg) for t in replies):
        return "all_interrupted"
    return None


@dataclass
class PrefilterResult:
    kept: list[Session]
    dropped: list[tuple[str, DropReason]] = field(default_factory=list)
    """(conversation_id, reason) for each dropped conversation, in input order."""

    @property
    def counts(self) -> dict[str, int]:
        """Dropped conversations per reason."""
        return dict(Counter(reason for _, reason in self.dropped))


def prefilter(sessions: Iterable[Session], config: PrefilterConfig | None = None) -> PrefilterResult:
    """Split a batch into kept sessions and dropped (id, reason) pairs."""
    cfg = config or PrefilterConfig()
    result = PrefilterResult(kept=[])
    for session in sessions:
        reason = drop_reason(session, cfg)
        if reason is None:
            result.kept.append(session)
        else:
            result.dropped.append((session.conversation_id, reason))
    return result

"""Answers read from a JSONL file: `replay:/path/answers.jsonl`.

Each row names its prompt by `messages` (hashed), `prompt_hash` (from `messages_hash`) or `match`
(a substring of the last user message), and gives `text` plus optional `reasoning`, `logprobs`
(list of {token, logprob, top: [{token, logprob}]}), `usage` and `finish_reason`.
Lookup: exact hash first, then the first `match` row in file order, then the `default` arg.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from uxbench.data import user_files
from uxbench.data.schema import Message
from uxbench.errors import ConfigError, DataError, FatalModelError
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput, ProviderArgs, TokenLogprobs, Usage
from uxbench.models.providers._args import parse_provider_args
from uxbench.models.registry import register_provider


def messages_hash(messages: Sequence[Message | Mapping[str, Any]]) -> str:
    """Stable hash of a conversation's roles and texts (timestamps and reasoning excluded)."""
    pairs: list[list[str]] = []
    for m in messages:
        if isinstance(m, Message):
            pairs.append([m.role, m.content])
        else:
            pairs.append([str(m.get("role", "")), str(m.get("content", ""))])
    return hashlib.sha256(orjson.dumps(pairs)).hexdigest()[:16]


def _last_user(messages: list[Message]) -> str:
    for m in reversed(messages):
        if m.role == "user":
            return m.content
    return ""


class _Answer:
    __slots__ = ("finish_reason", "logprobs", "reasoning", "text", "usage")

    def __init__(self, row: dict[str, Any], source: str, line: int) -> None:
        text = row.get("text")
        if not isinstance(text, str):
            raise DataError("every row needs a string 'text'", source=source, line=line, field="text")
        self.text = text
        reasoning = row.get("reasoning")
        self.reasoning = reasoning if isinstance(reasoning, str) else None
        try:
            raw_lp = row.get("logprobs")
            self.logprobs = [TokenLogprobs.model_validate(x) for x in raw_lp] if raw_lp else None
            self.usage = Usage.model_validate(row["usage"]) if row.get("usage") else None
        except (ValidationError, TypeError) as err:
            raise DataError(f"invalid logprobs or usage: {err}", source=source, line=line) from None
        self.finish_reason = row.get("finish_reason") or "stop"


class ReplayArgs(ProviderArgs):
    keep_blank = frozenset({"default"})

    default: str | None = None
    """Answer for a prompt no row matches (default: that prompt fails)."""


@register_provider("replay")
class ReplayModel(ModelAPI):
    """Answers read from a JSONL file: replay:/path/answers.jsonl."""

    args_model = ReplayArgs
    default_max_concurrency = 256

    def __init__(self, model_name: str, args: dict[str, str] | None = None) -> None:
        super().__init__(model_name, args)
        self.params = parse_provider_args(ReplayArgs, self.args, provider="replay")
        self.path = Path(model_name).expanduser()
        if not self.path.is_file():
            raise ConfigError(f"Replay file '{self.path}' does not exist (replay:PATH names a JSONL file)")
        raw = user_files.read_bytes(self.path, f"replay file {self.path}")
        self._digest = hashlib.sha256(raw).hexdigest()[:16]
        self.default = self.params.default
        self._by_hash: dict[str, _Answer] = {}
        self._matches: list[tuple[str, _Answer]] = []
        self._load(raw)

    def _load(self, raw: bytes) -> None:
        source = str(self.path)
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            row = user_files.parse_json(line, source, line=number)
            if not isinstance(row, dict):
                raise DataError("each line must be a JSON object", source=source, line=number)
            answer = _Answer(row, source, number)
            if isinstance(row.get("messages"), list):
                self._by_hash.setdefault(messages_hash(row["messages"]), answer)
            elif isinstance(row.get("prompt_hash"), str):
                self._by_hash.setdefault(row["prompt_hash"], answer)
            elif isinstance(row.get("match"), str):
                self._matches.append((row["match"], answer))
            else:
                raise DataError(
                    "a row needs 'messages', 'prompt_hash' or 'match' to say which prompt it answers",
                    source=source,
                    line=number,
                )

    def cache_identity(self) -> dict[str, Any]:
        return {
            "provider": "replay",
            "model": str(self.path),
            "content": self._digest,
            "default": self.default,
        }

    def lookup(self, messages: list[Message]) -> _Answer | None:
        found = self._by_hash.get(messages_hash(messages))
        if found is not None:
            return found
        last = _last_user(messages)
        for needle, answer in self._matches:
            if needle in last:
                return answer
        return None

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        answer = self.lookup(messages)
        if answer is None:
            if self.default is None:
                raise FatalModelError(
                    f"No answer for prompt hash {messages_hash(messages)} in replay file {self.path} "
                    "(add a row with this prompt_hash or a 'match', or set --model-arg default=...)"
                )
            return ModelOutput(text=self.default, finish_reason="stop", model=str(self.path))
        logprobs = None
        if config.top_logprobs is not None and answer.logprobs:
            k = config.top_logprobs
            logprobs = [
                lp.model_copy(update={"top": lp.top[:k]})
                for lp in answer.logprobs[: max(1, config.logprob_tokens)]
            ]
        return ModelOutput(
            text=answer.text,
            reasoning=answer.reasoning,
            usage=answer.usage or Usage(),
            logprobs=logprobs,
            finish_reason=answer.finish_reason,
            model=str(self.path),
        )

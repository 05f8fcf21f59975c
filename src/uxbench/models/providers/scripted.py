"""Deterministic fake models for tests and demos, no network: `scripted:SCRIPT`.

Scripts: `always-good` (好 for a Chinese prompt, else good), `always-bad` (差 / bad), `echo` (the
last user message), `oracle` (the verdict hidden in the prompt as `[[GOLD:good]]`), and
`file:/path/rules.json` (a list of {"pattern": regex, "response": text}, or {"rules": [...],
"default": text}; the first pattern found in the last user message wins).

Tools (`GenerateConfig.tools`): `[[CALL:name {"k": "v"}]]` in the last user message makes any script call that tool,
and a conversation ending with tool results gets them quoted back (`_tools.scripted_tool_reply`: a scripted
tool agent for tests). `[[SAY:x]]` in the last user message overrides every script; `[[P:0.8]]` sets the first token's
probability in fabricated logprobs. Model args: latency_ms, fail_first_n (TransientModelError for
the first n calls of each distinct prompt), reasoning (fixed reasoning text), default.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from pydantic import NonNegativeFloat, NonNegativeInt

from uxbench.data import user_files
from uxbench.data.schema import Message, ToolCall
from uxbench.errors import ConfigError, DataError, FatalModelError, TransientModelError
from uxbench.models.api import (
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ProviderArgs,
    TokenLogprobs,
    TopLogprob,
    Usage,
)
from uxbench.models.providers._args import parse_provider_args
from uxbench.models.providers._markers import (
    GOLD_RE,
    SAY_RE,
    fake_logprobs,
    fake_tokens,
    is_chinese,
    marker_probability,
    verdict_word,
)
from uxbench.models.providers._plan_agent import plan_reply
from uxbench.models.providers._tools import openai_message, scripted_tool_reply
from uxbench.models.providers.replay import messages_hash
from uxbench.models.registry import register_provider

SCRIPTS = ("always-good", "always-bad", "echo", "oracle", "file:PATH", "reference-agent", "weak-agent")
PLAN_AGENTS = {"reference-agent": "reference", "weak-agent": "weak"}
"""Scripted tool agents that follow the resolution steps of their system prompt (`_plan_agent`)."""


def _last_user(messages: list[Message]) -> str:
    for m in reversed(messages):
        if m.role == "user":
            return m.content
    return messages[-1].content if messages else ""


def load_rules(path: Path) -> tuple[list[tuple[re.Pattern[str], str]], str | None]:
    """Read a rules file: a list of {pattern, response}, or {"rules": [...], "default": ...}."""
    source = f"scripted rules file {path}"
    try:
        data = user_files.parse_json(user_files.read_bytes(path, source), source)
    except FileNotFoundError:
        raise ConfigError(f"Scripted rules file '{path}' does not exist") from None
    except DataError as err:
        raise ConfigError(str(err)) from None
    default = None
    if isinstance(data, dict):
        default = data.get("default")
        data = data.get("rules", [])
    if not isinstance(data, list):
        raise ConfigError(f"Scripted rules file '{path}' must hold a list of {{pattern, response}} objects")
    rules: list[tuple[re.Pattern[str], str]] = []
    for i, rule in enumerate(data):
        if not isinstance(rule, dict) or not isinstance(rule.get("pattern"), str):
            raise ConfigError(f"{path}: rule {i} needs a string 'pattern' and a 'response'")
        try:
            rules.append((re.compile(rule["pattern"]), str(rule.get("response", ""))))
        except re.error as err:
            raise ConfigError(f"{path}: rule {i} has a bad regex {rule['pattern']!r}: {err}") from None
    return rules, default if isinstance(default, str) else None


class ScriptedArgs(ProviderArgs):
    keep_blank = frozenset({"default", "reasoning"})

    latency_ms: NonNegativeFloat = 0.0
    """Delay of every answer."""
    fail_first_n: NonNegativeInt = 0
    """Fail the first n calls of each distinct prompt (a retryable error)."""
    reasoning: str | None = None
    """Fixed reasoning text returned with every answer."""
    default: str | None = None
    """Answer when the script has none for a prompt."""


@register_provider("scripted")
class ScriptedModel(ModelAPI):
    """Deterministic fake models for tests and demos: always-good, always-bad, echo, oracle, file:PATH."""

    args_model = ScriptedArgs
    default_max_concurrency = 256
    total_calls: ClassVar[int] = 0
    """Calls across all instances (tests use it to check that caching avoided a call)."""

    def __init__(self, model_name: str, args: dict[str, str] | None = None) -> None:
        super().__init__(model_name, args)
        p = self.params = parse_provider_args(ScriptedArgs, self.args, provider="scripted")
        self.script = model_name.strip()
        self.latency_s = p.latency_ms / 1000.0
        self.fail_first_n = p.fail_first_n
        self.reasoning = p.reasoning or None
        self.default: str | None = p.default
        self.rules: list[tuple[re.Pattern[str], str]] = []
        self._rules_digest: str | None = None
        if self.script.startswith("file:"):
            path = Path(self.script[len("file:") :]).expanduser()
            self.rules, file_default = load_rules(path)
            self._rules_digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            self.default = self.default if self.default is not None else file_default
        elif self.script not in SCRIPTS or self.script == "file:PATH":
            raise ConfigError(f"Unknown scripted model '{self.script}'. Scripts: {', '.join(SCRIPTS)}")
        self.calls = 0
        self.calls_by_prompt: Counter[str] = Counter()

    def cache_identity(self) -> dict[str, Any]:
        return {
            "provider": "scripted",
            "model": self.script,
            "rules": self._rules_digest,
            "reasoning": self.reasoning,
            "default": self.default,
        }

    def answer(self, messages: list[Message]) -> str:
        last = _last_user(messages)
        said = SAY_RE.search(last)
        if said:
            return said.group(1)
        chinese = is_chinese(last)
        if self.script == "always-good":
            return verdict_word("good", chinese)
        if self.script == "always-bad":
            return verdict_word("bad", chinese)
        if self.script == "echo":
            return last
        if self.script == "oracle":
            for m in reversed(messages):
                gold = GOLD_RE.search(m.content)
                if gold:
                    return verdict_word(gold.group(1), chinese)
            if self.default is not None:
                return self.default
            raise FatalModelError(
                "scripted:oracle found no [[GOLD:good]] / [[GOLD:bad]] marker in the prompt"
            )
        for pattern, response in self.rules:
            if pattern.search(last):
                return response
        if self.default is not None:
            return self.default
        raise FatalModelError(f"No rule of {self.script} matches the last user message and no default is set")

    def _plan_answer(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        wire = [openai_message(m) if (m.tool_calls or m.role == "tool") else {"role": m.role, "content": m.content}
                for m in messages]
        reply = plan_reply(wire, [t.name for t in config.tools], PLAN_AGENTS[self.script])  # type: ignore[arg-type]
        calls = [ToolCall(id=cid, name=name, arguments=args) for cid, name, args in reply.calls]
        usage = Usage(input_tokens=sum(len(fake_tokens(m.content)) for m in messages),
                      output_tokens=len(fake_tokens(reply.text)) + sum(len(fake_tokens(str(c.arguments))) + 1
                                                                       for c in calls))
        return ModelOutput(text=reply.text, usage=usage, finish_reason="tool_calls" if calls else "stop",
                           model=f"scripted:{self.script}", tool_calls=calls)

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        self.calls += 1
        ScriptedModel.total_calls += 1
        key = messages_hash(messages)
        self.calls_by_prompt[key] += 1
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if self.calls_by_prompt[key] <= self.fail_first_n:
            raise TransientModelError(
                f"scripted:{self.script} injected failure {self.calls_by_prompt[key]} of {self.fail_first_n}"
            )
        if self.script in PLAN_AGENTS:
            return self._plan_answer(messages, config)
        tool_reply = None
        if config.tools or (messages and messages[-1].role == "tool"):
            tool_reply = scripted_tool_reply([{"role": m.role, "content": m.content, "name": m.name}
                                              for m in messages], [t.name for t in config.tools])
        if tool_reply is not None and tool_reply.calls:
            calls = [ToolCall(id=f"call_{self.calls}_{i}", name=name, arguments=args)
                     for i, (name, args) in enumerate(tool_reply.calls)]
            usage = Usage(input_tokens=sum(len(fake_tokens(m.content)) for m in messages),
                          output_tokens=sum(len(fake_tokens(str(c.arguments))) + 1 for c in calls))
            return ModelOutput(text="", usage=usage, finish_reason="tool_calls", model=f"scripted:{self.script}",
                               tool_calls=calls)
        text = tool_reply.text if tool_reply is not None else self.answer(messages)
        finish = "stop"
        if config.max_tokens is not None:
            tokens = fake_tokens(text)
            if len(tokens) > config.max_tokens:
                text, finish = "".join(tokens[: config.max_tokens]), "length"
        for stop in config.stop or ():
            if stop and stop in text:
                text, finish = text[: text.index(stop)], "stop"
        logprobs = None
        if config.top_logprobs is not None:
            probability = marker_probability(_last_user(messages))
            logprobs = [
                TokenLogprobs(token=tok, logprob=lp, top=[TopLogprob(token=t, logprob=v) for t, v in top])
                for tok, lp, top in fake_logprobs(
                    text, config.top_logprobs, config.logprob_tokens, probability
                )
            ]
        usage = Usage(
            input_tokens=sum(len(fake_tokens(m.content)) for m in messages),
            output_tokens=len(fake_tokens(text))
            + (len(fake_tokens(self.reasoning)) if self.reasoning else 0),
            reasoning_tokens=len(fake_tokens(self.reasoning)) if self.reasoning else 0,
        )
        return ModelOutput(
            text=text,
            reasoning=self.reasoning,
            usage=usage,
            logprobs=logprobs,
            finish_reason=finish,
            model=f"scripted:{self.script}",
        )

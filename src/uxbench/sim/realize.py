"""Realisers: the words of a user turn (step 3), from the realiser's view only (`sim.projection`).

- `ModelRealiser`: a model through the model layer, with this project's zh and en templates
  (`sim/templates/{zh,en}/`); in structured mode it writes the act the policy chose, in free mode it plays the
  whole persona from one prompt (the tau-bench family's setup, kept for comparison).
- `ScriptedRealiser` (`--simulator scripted:user`): deterministic wording written for this project, for tests and
  benchmarks; `scripted:user-leaky` states every fact in its first message (the fidelity checks must catch it):
  in structured mode the session's opening decision names every fact the persona may not open with, and the
  policy is the faithful one from then on (premature disclosure is the only difference); in free mode it plays
  the scripted free user with every fact in its opener.

The `repeat` act is never given to a model: `repeat_text` repeats the earlier request near-verbatim in code.
A realiser returns raw text; the session loop checks it (`markers.output_problem`) and regenerates once, never
editing it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from functools import cache
from string import Template
from typing import Any, Protocol

from uxbench.data.schema import Message
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.scoring.prompts.files import PackageTemplates, fill
from uxbench.sim.persona import Profile
from uxbench.sim.projection import FactView, FreeView, RealiserView, render_transcript

TEMPLATES = PackageTemplates("uxbench.sim", "Simulator")
TEMPLATE_FILES = tuple(f"{lang}/{name}" for lang in ("en", "zh") for name in (
    "realise.txt", "realise_turn.txt", "open_turn.txt", "free.txt", "free_turn.txt", "acts.json", "assess.txt",
    "judge_satisfaction.txt"))
LEAKY = "scripted:user-leaky"
SCRIPTED_SPECS = ("scripted:user", LEAKY, "scripted:user-uncooperative")
Record = Callable[[ModelOutput], None]


class Realiser(Protocol):
    spec: str

    async def realise(self, view: RealiserView, *, attempt: int, record: Record) -> str:
        """A structured-mode user message for `view.act` (never `repeat`, which is code)."""
        ...

    async def speak_free(self, view: FreeView, *, attempt: int, record: Record) -> str:
        """A free-mode user message (it may be a stop marker)."""
        ...


def template_digests() -> dict[str, str]:
    """sha256 of every simulator template (the run manifest records them; editing one gives another run id)."""
    return TEMPLATES.hashes(TEMPLATE_FILES)


@cache
def _acts(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads(TEMPLATES.read(f"{lang}/acts.json").decode("utf-8"))
    return data


def _act_line(lang: str, key: str, **values: str) -> str:
    return fill(Template(_acts(lang)[key]), values, f"Simulator act text '{lang}/{key}'")


_EN_EXPERTISE = {"novice": "You are a beginner in this topic and do not know its technical terms.",
                 "intermediate": "You know the basics of this topic.",
                 "expert": "You are an expert in this topic and use its terms."}
_ZH_EXPERTISE = {"novice": "你对这个话题是外行，不懂专业术语。", "intermediate": "你对这个话题有基本了解。",
                 "expert": "你是这方面的专家，会用专业术语。"}
_EN_VERBOSITY = {"terse": "You write very short messages.", "normal": "You write messages of normal length.",
                 "verbose": "You write long, detailed messages."}
_ZH_VERBOSITY = {"terse": "你的消息很短。", "normal": "你的消息长度一般。", "verbose": "你的消息很长、很详细。"}
_EN_TYPING = {"short_messages": "short messages", "no_punctuation": "no punctuation", "lowercase": "all lower case",
              "typos": "some typos", "emoji": "emoji now and then"}
_ZH_TYPING = {"short_messages": "消息短", "no_punctuation": "不打标点", "lowercase": "全用小写",
              "typos": "偶尔有错别字", "emoji": "偶尔用表情"}
_EN_TRAITS = {"impatience": "impatient", "skepticism": "skeptical", "confusion": "easily confused"}
_ZH_TRAITS = {"impatience": "没耐心", "skepticism": "爱怀疑", "confusion": "容易糊涂"}


def profile_text(profile: Profile, lang: str) -> str:
    """The public profile in words, for the realiser's prompt."""
    zh = lang == "zh"
    parts = [profile.description] if profile.description else []
    parts.append((_ZH_EXPERTISE if zh else _EN_EXPERTISE)[profile.expertise])
    parts.append((_ZH_VERBOSITY if zh else _EN_VERBOSITY)[profile.verbosity])
    if profile.tone and profile.tone != "neutral":
        parts.append(f"语气：{profile.tone}。" if zh else f"Your tone: {profile.tone}.")
    if profile.typing:
        habits = [(_ZH_TYPING if zh else _EN_TYPING)[h] for h in profile.typing]
        parts.append(f"打字习惯：{'，'.join(habits)}。" if zh else f"Typing habits: {', '.join(habits)}.")
    strong = [name for name, value in profile.traits.model_dump().items() if value >= 0.5]
    if strong:
        words = [(_ZH_TRAITS if zh else _EN_TRAITS)[name] for name in strong]
        parts.append(f"性格：{'、'.join(words)}。" if zh else f"You are {' and '.join(words)}.")
    return "\n".join(parts)


def _facts_text(facts: tuple[FactView, ...], lang: str) -> str:
    sep = "；" if lang == "zh" else "; "
    return sep.join(f"{f.label}{'：' if lang == 'zh' else ': '}{f.value}" for f in facts)


def instruction_text(view: RealiserView) -> tuple[str, str]:
    """(what to do, which facts) for the realiser's prompt: only the facts of the view, nothing else."""
    lang, request = view.lang, view.request or ""
    key: str = view.act
    if key == "follow_up":
        key = "follow_up_same" if view.same_item else "follow_up_new"
    lines = [_act_line(lang, key, request=request)]
    if view.declined:
        lines.append(_act_line(lang, "declined", labels=("、" if lang == "zh" else ", ").join(view.declined)))
    if view.unknown_asked:
        lines.append(_act_line(lang, "unknown"))
    facts = []
    if view.state_facts:
        facts.append(_act_line(lang, "state", facts=_facts_text(view.state_facts, lang)))
    if view.allowed_facts:
        facts.append(_act_line(lang, "may", facts=_facts_text(view.allowed_facts, lang)))
    if not facts:
        facts.append(_act_line(lang, "none"))
    return "\n".join(lines), "\n".join(facts)


def realiser_messages(view: RealiserView) -> list[Message]:
    """The structured-mode prompt: rules, profile and this turn's act (system), then the transcript (user)."""
    instruction, facts = instruction_text(view)
    system = TEMPLATES.text(f"{view.lang}/realise.txt", {
        "profile": profile_text(view.profile, view.lang), "instruction": instruction, "facts": facts})
    if view.transcript:
        turn = TEMPLATES.text(f"{view.lang}/realise_turn.txt",
                              {"transcript": render_transcript(view.transcript, view.lang)})
    else:
        turn = TEMPLATES.text(f"{view.lang}/open_turn.txt")
    return [Message(role="system", content=system), Message(role="user", content=turn)]


_EN_RULES = {"opening": "you may say it any time", "on_request": "say it only when the assistant asks for it",
             "volunteer_if_adjacent": "say it when you ask about the thing it concerns", "never": "never say it"}
_ZH_RULES = {"opening": "随时可以说", "on_request": "只有助手问起时才说",
             "volunteer_if_adjacent": "问到相关的事时顺带说出", "never": "绝对不要说"}


def free_messages(view: FreeView) -> list[Message]:
    """The free-mode prompt: the whole persona, facts and their rules in words (as the tau-bench family does).
    A tool task's baseline proxy gets the benchmark's own user-simulator prompt and the conversation as that
    simulator sees it (its words as the assistant's, the agent's as the user's, opening with the agent's
    greeting)."""
    if view.system_prompt is not None:
        flipped = [Message(role="user", content=view.greeting or "Hi! How can I help you today?")]
        flipped += [Message(role="assistant" if line.role == "user" else "user", content=line.text)
                    for line in view.transcript]
        return [Message(role="system", content=view.system_prompt), *flipped]
    zh = view.lang == "zh"
    goal = "\n".join(f"{i}. {request}" for i, (_id, request) in enumerate(view.goal, start=1))
    lines = []
    for fact in view.facts:
        mode, _, k = fact.disclose.partition(":")
        rule = (f"从你的第{k}条消息起才知道" if zh else f"you only know it from your message {k} on") if k else \
            (_ZH_RULES if zh else _EN_RULES)[mode]
        lines.append(f"- {fact.label}：{fact.value}（{rule}）" if zh else f"- {fact.label}: {fact.value} ({rule})")
    system = TEMPLATES.text(f"{view.lang}/free.txt", {
        "profile": profile_text(view.profile, view.lang), "goal": goal, "facts": "\n".join(lines) or "-"})
    if view.transcript:
        turn = TEMPLATES.text(f"{view.lang}/free_turn.txt", {"transcript": render_transcript(view.transcript,
                                                                                            view.lang)})
    else:
        turn = TEMPLATES.text(f"{view.lang}/open_turn.txt")
    return [Message(role="system", content=system), Message(role="user", content=turn)]


class ModelRealiser:
    """A realiser backed by a model (any provider). Each attempt has its own cache salt, so a regeneration is a
    fresh sample, and the session's seed goes to the provider."""

    def __init__(self, model: Any, *, temperature: float | None = 0.7, max_tokens: int | None = 256) -> None:
        self.model = model
        self.spec = str(model.spec)
        self.temperature = temperature
        self.max_tokens = max_tokens

    async def _generate(self, messages: list[Message], seed: int, turn: int, attempt: int, record: Record) -> str:
        config = GenerateConfig(temperature=self.temperature, max_tokens=self.max_tokens, seed=seed)
        out: ModelOutput = await self.model.generate(messages, config, cache_salt=f"{seed}:{turn}:{attempt}")
        record(out)
        return out.text  # a provider's separate reasoning field is never part of the message

    async def realise(self, view: RealiserView, *, attempt: int, record: Record) -> str:
        return await self._generate(realiser_messages(view), view.seed, view.turn, attempt, record)

    async def speak_free(self, view: FreeView, *, attempt: int, record: Record) -> str:
        return await self._generate(free_messages(view), view.seed, view.turn, attempt, record)


def repeat_text(previous: str, seed: int, turn: int) -> str:
    """The earlier request again, near-verbatim: only its final punctuation changes (code, not a model)."""
    rng = random.Random(f"{seed}:{turn}:repeat")
    stem = previous.rstrip(" .!?。！？")
    zh = any("\u3400" <= ch <= "\u9fff" for ch in stem)
    endings = ["？", "。", "", "？？"] if zh else ["?", ".", "", "??"]
    current = previous[len(stem):].strip()
    choices = [e for e in endings if e != current] or endings
    return stem + rng.choice(choices)

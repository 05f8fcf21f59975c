"""The scripted realiser (`--simulator scripted:user`): deterministic zh and en wording, written for this project,
for tests, benchmarks and offline demos. It sees exactly what a model realiser sees (`RealiserView`, `FreeView`).

Its phrasings are this project's own and were not taken from the mining detectors' pattern lists; how well the
detectors recover its acts is measured, not built in (`uxbench sim signals`).

`scripted:user-leaky` states every fact of the persona in its first message (the premature-disclosure checks
must catch it): in structured mode the session's opening decision gives it every fact the persona may not open
with, and it is `scripted:user` from then on; in free mode it opens with every fact.
`scripted:user-uncooperative` (structured mode) declines every fact it is asked for, the confirmation included:
the fact-accuracy checks must catch it, and an agent that needs the user's answers gets less done.
"""

from __future__ import annotations

import random

from uxbench.sim.asks import asks_for
from uxbench.sim.markers import STOP
from uxbench.sim.projection import FactView, FreeView, RealiserView
from uxbench.sim.realize import Record

_EN = {
    "open": ["Hi. I need help with this: {request}.", "Hello, can you help me with this: {request}?",
             "Hi there. Question: {request}?"],
    "follow_up_new": ["Thanks, that helps. Next: {request}?", "Great, thank you. Also: {request}?",
                      "OK, got it. One more thing: {request}?"],
    "follow_up_same": ["OK, and the rest of it: {request}?", "Right. So: {request}?"],
    "rephrase": ["What I mean is this: {request}.", "Let me put it differently. My question: {request}."],
    "complain": ["That's not what I asked. I need this: {request}.", "This doesn't help at all. I asked: {request}.",
                 "You're not listening. My question was: {request}.", "That's useless. I still need this: {request}."],
    "dismiss": ["forget it", "never mind", "ok whatever, forget it", "no, forget it"],
    "abandon_topic": ["Fine, forget that. Something else then: {request}?", "Never mind that one. Different "
                      "question: {request}?"],
    "stop_success": ["Great, that's everything I needed. Thanks!", "Perfect, thank you. Bye!"],
    "fact": "My {label} is {value}.",
    "declined": "I'd rather not give my {label}.",
    "unknown": "I don't know that, sorry.",
}
_ZH = {
    "open": ["你好，想请你帮个忙：{request}。", "你好，请问：{request}？", "在吗？想问一下：{request}"],
    "follow_up_new": ["好的，谢谢。还有：{request}？", "明白了，谢谢。再问一下：{request}？",
                      "好，下一个问题：{request}？"],
    "follow_up_same": ["好的，那剩下的呢：{request}？", "嗯，那：{request}？"],
    "rephrase": ["我的意思是：{request}。", "换个说法，我想问的是：{request}。"],
    "complain": ["这不是我问的，我要的是：{request}。", "答非所问，我问的是：{request}。",
                 "你根本没看懂，我的问题是：{request}。", "说了半天没用，我还是要：{request}。"],
    "dismiss": ["算了", "不用了", "算了算了", "行吧 算了"],
    "abandon_topic": ["那个算了，换个问题：{request}？", "先不说那个了，另外：{request}？"],
    "stop_success": ["好的，都解决了，谢谢！", "明白了，谢谢，再见！"],
    "fact": "{label}是{value}。",
    "declined": "{label}不方便告诉你。",
    "unknown": "这个我不清楚。",
}


def _bank(lang: str) -> dict[str, object]:
    return _ZH if lang == "zh" else _EN  # type: ignore[return-value]


def _pick(options: object, rng: random.Random, used: frozenset[str] = frozenset(), **values: str) -> str:
    """A phrasing (filled with `values`) not yet said in the session when one is left: a scripted user does not
    loop by accident."""
    assert isinstance(options, list)
    order = list(options)
    rng.shuffle(order)
    first = None
    for option in order:  # filled one by one: the first unsaid one is usually the first
        text = str(option).replace("{request}", values.get("request", ""))
        if text not in used:
            return text
        first = text if first is None else first
    assert first is not None
    return first


def _facts(facts: tuple[FactView, ...], lang: str) -> list[str]:
    template = str(_bank(lang)["fact"])
    return [template.format(label=f.label, value=f.value) for f in facts]


def _join(parts: list[str], lang: str) -> str:
    return ("" if lang == "zh" else " ").join(p for p in parts if p)


class ScriptedRealiser:
    def __init__(self, spec: str = "scripted:user") -> None:
        self.spec = spec
        self.leaky = spec.endswith("-leaky")
        self.uncooperative = spec.endswith("-uncooperative")

    async def realise(self, view: RealiserView, *, attempt: int, record: Record) -> str:
        if self.uncooperative and view.act == "answer":
            bank = _bank(view.lang)
            labels = [f.label for f in view.state_facts] + list(view.declined)
            return _join([str(bank["declined"]).format(label=label) for label in labels] or [str(bank["unknown"])],
                         view.lang)
        return scripted_text(view)

    async def speak_free(self, view: FreeView, *, attempt: int, record: Record) -> str:
        return scripted_free_text(view, leaky=self.leaky)


def scripted_text(view: RealiserView) -> str:
    """The structured-mode message for the view's act (pure; the same view gives the same text)."""
    lang, bank = view.lang, _bank(view.lang)
    request = (view.request or "").rstrip(" .?!。？！")
    act = view.act
    if act == "answer":  # no draw: its random source is not made (seeding one is most of a message's cost)
        parts = _facts(view.state_facts, lang)
        parts += [str(bank["declined"]).format(label=label) for label in view.declined]
        if view.unknown_asked or not parts:
            parts.append(str(bank["unknown"]))
        return _join(parts, lang)
    used = frozenset(line.text for line in view.transcript if line.role == "user")
    rng = random.Random(f"{view.seed}:{view.turn}:scripted")
    if act == "rephrase" and view.rephrasings:
        text = _pick(list(view.rephrasings), rng, used)
    elif act == "follow_up":
        text = _pick(bank["follow_up_same" if view.same_item else "follow_up_new"], rng, used, request=request)
    else:
        text = _pick(bank[act], rng, used, request=request)
    if act in ("open", "follow_up", "abandon_topic", "rephrase") and view.state_facts:
        text = _join([text, *_facts(view.state_facts, lang)], lang)
    return text


def _has_it(disclose: str, turn: int) -> bool:
    """An after_turn:K fact is the user's only from their K-th message on."""
    return not disclose.startswith("after_turn:") or turn >= int(disclose.split(":", 1)[1])


def scripted_free_text(view: FreeView, *, leaky: bool = False) -> str:
    """Free mode: raise the goal items in order, one per message, answering any fact the assistant's last reply
    asks for (`sim.asks`; the rules in its prompt are ignored when `leaky`); then ###STOP###."""
    lang, bank = view.lang, _bank(view.lang)
    rng = random.Random(f"{view.seed}:{view.turn}:scripted-free")
    facts = [f for f in view.facts if f.disclose == "opening"]
    if not any(line.role == "user" for line in view.transcript):
        request = view.goal[0][1].rstrip(" .?!。？！")
        parts = [view.opener or _pick(bank["open"], rng, request=request)]
        if leaky:
            parts += _facts(tuple(view.facts), lang)
        elif not view.opener:
            parts += _facts(tuple(facts), lang)
        return _join(parts, lang)
    last = view.transcript[-1].text if view.transcript else ""
    said = " ".join(line.text for line in view.transcript if line.role == "user").lower()
    asked = [f for f in view.facts if f.disclose != "never" and _has_it(f.disclose, view.turn)
             and ((f.value or "").lower() not in said or f.disclose == "opening")  # an opening fact: any time
             and asks_for(last, f.label, f.patterns)]
    if asked:
        return _join(_facts(tuple(asked), lang), lang)
    for _id, request in view.goal[1:]:
        stem = request.rstrip(" .?!。？！")
        if stem.lower() not in said:
            return _pick(bank["follow_up_new"], rng, request=stem)
    return STOP

"""The independent satisfaction judge: a model that rates each assistant reply 1-5 from the conversation (the
reply and the user's next message), USS-style. It sees only the transcript (`projection.project("judge")`),
never the persona, the acts or the simulator's state, so its curve is a check on the simulator's own."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from uxbench.data.schema import Message
from uxbench.errors import ModelError
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.sim.persona import Persona
from uxbench.sim.projection import SessionView, project, render_transcript
from uxbench.sim.realize import TEMPLATES
from uxbench.sim.session import Ledger
from uxbench.sim.types import SessionRecord

_DIGIT = re.compile(r"[1-5]")
EXAMPLE_CHARS = 200
"""How much of an unusable answer (or of a failed call's error) a judgement keeps, to say why it was unusable."""
_ZH_DIGITS = {"一": "1", "二": "2", "三": "3", "四": "4", "五": "5"}


def parse_rating(text: str) -> int | None:
    """The first rating 1-5 in a judge's answer (a Chinese numeral counts), else None."""
    for ch in text.strip():
        ch = _ZH_DIGITS.get(ch, ch)
        if _DIGIT.fullmatch(ch):
            return int(ch)
    return None


def judge_prompt(persona_lang: str, transcript: str, next_user: str | None) -> str:
    if next_user is None:
        nxt = "（用户之后没有再发消息。）" if persona_lang == "zh" else "(The user sent no further message.)"
    else:
        nxt = (f"用户的下一条消息：{next_user}" if persona_lang == "zh" else f"The user's next message: {next_user}")
    return TEMPLATES.text(f"{persona_lang}/judge_satisfaction.txt", {"transcript": transcript, "next": nxt})


async def judge_session(record: SessionRecord, persona: Persona, model: Any, price: Any) -> dict[str, Any]:
    """{"turns": {turn_index: 1-5 or None}, "unparsed": n, "errors": n, "unparsed_example", "error_example",
    "usage"} for one session: the answers with no rating 1-5 and the failed calls are counted, and the first of each
    kept (cut to `EXAMPLE_CHARS`), so a judge that never answered usably says why."""
    ledger = Ledger({"judge": price})
    config = GenerateConfig(temperature=0.0, max_tokens=8, seed=record.seed)

    async def rate(turn_index: int) -> tuple[int, int | None, str | None, str | None]:
        """(turn, rating, the answer when it held no rating, the error when the call failed)."""
        view = project("judge", SessionView(persona=persona, turns=record.turns, reply_turn=turn_index))
        transcript = render_transcript(view.transcript, view.lang, mark_last=True)
        messages = [Message(role="user", content=judge_prompt(view.lang, transcript, view.next_user))]
        try:
            out: ModelOutput = await model.generate(messages, config)
        except ModelError as err:
            return turn_index, None, None, f"{type(err).__name__}: {err}"[:EXAMPLE_CHARS]
        ledger.add("judge", out)
        rating = parse_rating(out.text)
        return turn_index, rating, None if rating is not None else out.text[:EXAMPLE_CHARS], None

    results = await asyncio.gather(*(rate(t.turn_index) for t in record.turns if t.role == "assistant"))
    usage = ledger.usage.get("judge")
    return {
        "turns": {str(i): score for i, score, _a, _e in results},
        "unparsed": sum(1 for _i, score, _a, err in results if score is None and err is None),
        "errors": sum(1 for *_x, err in results if err is not None),
        "unparsed_example": next((answer for _i, _s, answer, _e in results if answer is not None), None),
        "error_example": next((err for *_x, err in results if err is not None), None),
        "usage": usage.model_dump() if usage is not None else None,
    }

"""Replay (mirror) validation: the simulator answers real assistant replies, turn by turn, and its reactions are
compared with the real user's (§3.6 of SIMULATORS.md).

For each persona built from a real conversation (`personas build --holdout prefix:F`, so it never saw the turns it
is tested on), the conversation is walked with the real texts: every real assistant reply is assessed and the
policy reacts, as in a session (`sim.session`), so patience and satisfaction follow the real conversation. On the
held-out replies the simulator also writes its message for the act it chose (the realiser, `repeat` by code, a
`leave` as no message); then the real user's message is put in the transcript (teacher forcing) and the walk goes
on. When the policy ends the session, the rest of that conversation is not replayed (counted).

Both messages, simulated and real, are classified by the same mining rules (`analyse_followup` on the previous
user message, the reply and the message; no message = `end`), giving pairs of reaction labels: Cohen's kappa
and the confusion matrix over them, the rates and their ratio sim / real, the cooperativeness gap and the
Jensen-Shannon distance (`metrics.sim_real`), and the real thumbs against the simulated like / dislike."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from uxbench.metrics.agreement import cohen_kappa
from uxbench.metrics.sim_real import compare_reactions
from uxbench.mining.signals.followup import analyse_followup
from uxbench.sim import markers
from uxbench.sim.mined import MinedConversation
from uxbench.sim.persona import Persona
from uxbench.sim.policy import initial_state, open_session, react
from uxbench.sim.projection import SessionView, project
from uxbench.sim.reactions import DISSATISFIED, REACTIONS, Reaction, thumbs_of
from uxbench.sim.realize import Realiser, repeat_text
from uxbench.sim.session import Ledger
from uxbench.sim.types import Assessment, Decision, SimTurn

_LABELS: dict[str, Reaction] = {"repeat": "repeat", "rephrase": "rephrase", "complaint": "complain",
                                "dismiss": "dismiss", "topic_change": "abandon_topic", "continue": "continue",
                                "other": "continue"}


def classify(previous_user: str | None, reply: str, message: str | None) -> Reaction:
    """A user message's reaction to a reply by the mining rules (`end` when there is no message)."""
    if message is None or not message.strip():
        return "end"
    return _LABELS.get(analyse_followup(previous_user, reply, message).label, "continue")


@dataclass
class ReplayStep:
    conversation: str
    turn_index: int
    """The real assistant reply answered."""
    act: str
    sim_text: str | None
    sim_reaction: Reaction
    real_reaction: Reaction
    sim_feedback: str | None
    real_feedback: str | None


@dataclass
class ReplayResult:
    steps: list[ReplayStep] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    usage: Ledger | None = None


async def _realise(realiser: Realiser, persona: Persona, turns: list[SimTurn], decision: Decision, seed: int,
                   state: Any, completed: tuple[str, ...], ledger: Ledger) -> str | None:
    if decision.act == "leave":
        return None
    view = project("realiser", SessionView(persona=persona, turns=turns, seed=seed, decision=decision,
                                           completed=completed, disclosed=state.disclosed))
    if decision.act == "repeat" and view.previous_request:
        return repeat_text(view.previous_request, seed, view.turn)
    for attempt in range(2):
        text = await realiser.realise(view, attempt=attempt, record=ledger.recorder("simulator"))
        if markers.output_problem(text) is None:
            return text.strip()
    raise ValueError("the simulator's output was unusable twice")


async def replay_conversation(persona: Persona, conv: MinedConversation, realiser: Realiser, assessor: Any, *,
                              seed: int, max_turns: int = 200, ledger: Ledger) -> tuple[list[ReplayStep], str]:
    """The held-out steps of one conversation, and how the walk ended (`complete`, `policy ended`, ...)."""
    split = persona.meta.get("holdout") if isinstance(persona.meta, dict) else None
    start = split.get("held_out_from_turn_index") if isinstance(split, dict) else None
    if start is None:
        return [], "no held-out turns"
    real = [t for t in conv.turns if t.text.strip()]
    first_user = next((i for i, t in enumerate(real) if t.role == "user"), None)
    if first_user is None:
        return [], "no user message"
    real = real[first_user:]
    state = initial_state(persona)
    state, decision = open_session(persona, state, seed)
    turns = [SimTurn(turn_index=0, role="user", text=real[0].text, created_at="", act=decision.act,
                     item=decision.item)]
    completed: tuple[str, ...] = ()
    steps: list[ReplayStep] = []
    replies = 0
    for pos in range(1, len(real)):
        turn = real[pos]
        if turn.role == "user":  # two user messages in a row: keep the real one, no reply to react to
            turns.append(SimTurn(turn_index=len(turns), role="user", text=turn.text, created_at="", act="free"))
            continue
        turns.append(SimTurn(turn_index=len(turns), role="assistant", text=turn.text, created_at=""))
        replies += 1
        view = project("assessor", SessionView(persona=persona, turns=turns, seed=seed, completed=completed,
                                               disclosed=state.disclosed))
        assessment: Assessment = await assessor.assess(view, seed=seed, record=ledger.recorder("assessor"))
        turns[-1].assessment = assessment
        completed = tuple(dict.fromkeys(completed + tuple(assessment.completed)))
        state, decision = react(persona, state, assessment, seed, reply_turn=turns[-1].turn_index, replies=replies,
                                max_turns=max_turns)
        nxt = real[pos + 1] if pos + 1 < len(real) and real[pos + 1].role == "user" else None
        previous_user = next((t.text for t in reversed(turns[:-1]) if t.role == "user"), None)
        if turn.turn_index >= int(start):
            sim_text = await _realise(realiser, persona, turns, decision, seed, state, completed, ledger)
            row = conv.signals.get(turn.turn_index) or {}
            steps.append(ReplayStep(
                conv.digest, turn.turn_index, decision.act, sim_text, classify(previous_user, turn.text, sim_text),
                classify(previous_user, turn.text, nxt.text if nxt else None), decision.feedback, thumbs_of(row)))
        if decision.end is not None or decision.act == "leave":
            more = any(t.role == "assistant" for t in real[pos + 1:])
            return steps, "the simulated user ended it before the real one" if more else "complete"
        if nxt is None:
            return steps, "complete"
        turns.append(SimTurn(turn_index=len(turns), role="user", text=nxt.text, created_at="", act=decision.act,
                             item=decision.item))
    return steps, "complete"


def replay_report(steps: list[ReplayStep], counts: Counter[str], *, n_boot: int = 2000, seed: int = 0
                  ) -> dict[str, Any]:
    """Kappa and the confusion matrix of the paired labels, rates, ratios, the gap, the JS distance, thumbs."""
    by_conv: dict[str, tuple[list[str], list[str]]] = {}
    thumbs: dict[str, tuple[list[str], list[str]]] = {}
    for s in steps:
        real, sim = by_conv.setdefault(s.conversation, ([], []))
        real.append(s.real_reaction)
        sim.append(s.sim_reaction)
        rt, st = thumbs.setdefault(s.conversation, ([], []))
        rt.append(s.real_feedback or "none")
        st.append(s.sim_feedback or "none")
    kappa = cohen_kappa([s.sim_reaction for s in steps], [s.real_reaction for s in steps], n_boot=n_boot, seed=seed)
    real_sessions = [v[0] for v in by_conv.values()]
    sim_sessions = [v[1] for v in by_conv.values()]
    real_has_thumbs = any(s.real_feedback for s in steps)
    return {
        "kind": "uxbench.sim.validate", "mode": "replay", "n_steps": len(steps), "n_conversations": len(by_conv),
        "walks": dict(counts),
        "agreement": {**kappa, "rows": "simulated reaction", "columns": "real reaction"},
        "reactions": compare_reactions(real_sessions, sim_sessions, REACTIONS, DISSATISFIED, n_boot=n_boot,
                                       seed=seed),
        "thumbs": {**compare_reactions([v[0] for v in thumbs.values()], [v[1] for v in thumbs.values()],
                                       ("like", "dislike", "none"), {"dislike"}, n_boot=n_boot, seed=seed),
                   "note": None if real_has_thumbs else "the real logs carry no thumbs: nothing to compare"},
        "acts": dict(Counter(s.act for s in steps)),
        "n_boot": n_boot, "seed": seed,
    }


async def run_replay(source: Any, personas: list[Persona], realiser: Realiser, assessor: Any, *, seed: int = 0,
                     width: int = 8, ledger: Ledger | None = None, tick: Any = None) -> ReplayResult:
    """Replay every persona's held-out turns of its real conversation in the mining output `source`."""
    from uxbench.errors import ConfigError
    from uxbench.mining.llm import map_bounded
    from uxbench.sim.mined import iter_mined

    result = ReplayResult(usage=ledger or Ledger({}))
    by_digest: dict[str, Persona] = {}
    for p in personas:
        split = p.meta.get("holdout") if isinstance(p.meta, dict) else None
        if not p.source.startswith("mined:"):
            result.counts["persona not mined"] += 1
        elif not isinstance(split, dict) or split.get("rule") != "prefix":
            result.counts["persona not built with --holdout prefix:F (replay would measure memorisation)"] += 1
        else:
            by_digest[p.source.split(":", 1)[1]] = p
    pairs = [(by_digest[c.digest], c) for c in iter_mined(source) if c.digest in by_digest]
    result.counts["source conversation not found"] += len(by_digest) - len(pairs)
    if not pairs:
        raise ConfigError(f"No persona matches a conversation of {source} ({dict(result.counts)}): build them from "
                          "this mining output with `uxbench personas build --from MINE_RUN --holdout prefix:0.5`.")
    done = 0

    async def one(pair: tuple[Persona, MinedConversation]) -> list[ReplayStep]:
        nonlocal done
        persona, conv = pair
        try:
            steps, how = await replay_conversation(persona, conv, realiser, assessor, seed=seed,
                                                   ledger=result.usage or Ledger({}))
        except Exception as err:  # a model error or an unusable output ends this walk, counted
            from uxbench.errors import ModelError
            from uxbench.sim.assess import AssessorFailed

            if not isinstance(err, (ModelError, AssessorFailed, ValueError)):
                raise
            steps, how = [], f"error: {type(err).__name__}"
        result.counts[how] += 1
        done += 1
        if tick is not None:
            tick(done, len(pairs))
        return steps

    for steps in await map_bounded(pairs, one, width):
        result.steps.extend(steps)
    return result

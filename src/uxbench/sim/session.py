"""One simulated session: assess -> policy -> realise, turn after turn, one async loop for both modes.

Within a session turns are sequential (the user's message, the model under test's reply, the assessment);
sessions run concurrently (`sim.run`). Every party's prompt comes from `projection.project`.

Endings (`Termination.reason`): the policy's (`goal_complete`, `patience_exhausted`, `max_turns`,
`out_of_scope`), or `error`: the model under test failed after its retries, the assessor's answer was unusable
twice, or the simulator's output was unusable twice (empty, reasoning text, a stop marker inside a message, its
own state, a fact it may not say). An unusable output is discarded and regenerated once, never edited; the
reasons are kept on the turn (`SimTurn.discarded`). A session is never dropped: an error is one more outcome.

Free mode: the simulator ends the session with a message that is exactly `###STOP###` (`goal_complete` when the
assessor found every goal item complete; otherwise `error`, a premature stop), `###LEAVE###`
(`patience_exhausted`) or `###OUT_OF_SCOPE###`. A marker inside a message is accepted only as a goodbye once
every item is complete (tau2-bench#182: a stop in the same turn as a confirmation); otherwise it is discarded
and regenerated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from uxbench.errors import ModelError
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.sim import markers
from uxbench.sim.assess import Assessor, AssessorFailed
from uxbench.sim.persona import Persona
from uxbench.sim.policy import PolicyState, initial_state, open_session, react
from uxbench.sim.projection import AssistantTranscript, Line, SessionView, project
from uxbench.sim.realize import LEAKY, Realiser, repeat_text
from uxbench.sim.said import facts_said, states_hidden
from uxbench.sim.store import MUT_ERROR, UNUSABLE
from uxbench.sim.tooltask import AgentPrompt, Ending, TaskSource, ToolStep, ToolTask
from uxbench.sim.types import Assessment, Decision, Mode, Reason, SessionRecord, SimTurn, Termination, Usage, replaced

EPOCH = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)
"""The synthetic clock's start; session i starts i hours later (timestamps are synthetic, marked so)."""
TYPING_CPS = 4.0
"""Synthetic typing speed of the simulated user (characters per second)."""


_SILENT_END: dict[str, str] = {
    "patience_exhausted": "the user left without a message", "max_turns": "the turn limit was reached",
    "out_of_scope": "the assistant handed the user off", "goal_complete": "", "error": "",
}


class _Unusable(Exception):
    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass
class Parties:
    """Who takes part: the model under test (a `Model`), the realiser, the assessor; `prices` by party."""

    assistant: Any
    realiser: Realiser
    assessor: Assessor
    assistant_config: GenerateConfig = field(default_factory=GenerateConfig)
    prices: dict[str, Any] = field(default_factory=dict)
    """party -> `runtime.cost.Price` (None: unknown price; a missing party is free: code)."""
    on_turn: Callable[[], None] | None = None
    """Called after every message of a session (the progress display's turn count while sessions run)."""
    tasks: TaskSource | None = None
    """Where the plans' tool tasks come from: their environments, prompts and evaluator."""
    max_tool_calls: int = 30
    """Tool calls the agent may make before one reply to the user."""


@dataclass(frozen=True)
class SessionPlan:
    session_id: str
    index: int
    persona: Persona
    persona_hash: str
    trial: int
    seed: int
    mode: Mode = "structured"
    max_turns: int = 8
    task: ToolTask | None = None
    """A tool task (the persona is compiled from its scenario): the model under test is its agent."""
    agent_prompt: AgentPrompt = "policy"


_NOTHING = Usage()


class Ledger:
    """Calls and tokens per party for one session."""

    def __init__(self, prices: dict[str, Any]) -> None:
        self.prices = prices
        self.usage: dict[str, Usage] = {}

    def recorder(self, party: str) -> Callable[[ModelOutput], None]:
        def record(out: ModelOutput) -> None:
            self.add(party, out)

        return record

    def add(self, party: str, out: ModelOutput) -> None:
        u = out.usage
        held = self.usage.get(party)
        if held is None:
            held = _NOTHING  # Usage().add(one) is one
        cost: float | None = 0.0
        if out.cached:
            cached_in, cached_out, fresh_in, fresh_out = u.input_tokens, u.output_tokens, 0, 0
        else:
            cached_in, cached_out, fresh_in, fresh_out = 0, 0, u.input_tokens, u.output_tokens
            price = self.prices.get(party)
            cost = None if price is None else price.cost(u.input_tokens, u.output_tokens)
        # Usage.add of the call's own Usage, summed here: one Usage made per call, not two
        self.usage[party] = Usage(
            calls=held.calls + 1, cached_calls=held.cached_calls + (1 if out.cached else 0),
            input_tokens=held.input_tokens + fresh_in, output_tokens=held.output_tokens + fresh_out,
            cached_input_tokens=held.cached_input_tokens + cached_in,
            cached_output_tokens=held.cached_output_tokens + cached_out,
            cost_usd=None if held.cost_usd is None or cost is None else held.cost_usd + cost)


class _Clock:
    def __init__(self, index: int, reading_cps: float) -> None:
        self.now = (EPOCH + timedelta(hours=index)).replace(tzinfo=None)  # UTC, naive: no offset to format
        self.reading_cps = reading_cps

    def stamp(self) -> str:
        return self.now.isoformat(timespec="milliseconds") + "Z"

    def assistant_reply(self, text: str) -> str:
        self.now += timedelta(seconds=2.0 + len(text) / 200.0)
        return self.stamp()

    def user_message(self, reply: str, text: str, skim: bool) -> str:
        reading = (0.3 + 0.005 * len(reply)) if skim else len(reply) / self.reading_cps
        self.now += timedelta(seconds=reading + 1.0 + len(text) / TYPING_CPS)
        return self.stamp()


class _Session:
    def __init__(self, plan: SessionPlan, parties: Parties) -> None:
        self.plan = plan
        self.parties = parties
        self.persona = plan.persona
        self.turns: list[SimTurn] = []
        self.ledger = Ledger(parties.prices)
        self.clock = _Clock(plan.index, plan.persona.reactions.reading_cps)
        self.completed: tuple[str, ...] = ()
        self.state: PolicyState = initial_state(plan.persona)
        self.extra: dict[str, str] = {}
        self.env = None
        self.steps: list[ToolStep] = []
        self.transcript = AssistantTranscript()
        self.lines: list[Line] = []
        self.user_messages = 0
        if plan.task is not None:
            tasks = parties.tasks
            if tasks is None:
                raise ValueError("a tool task's session needs the parties' task source")
            self.env = tasks.environment(plan.task)
            self.extra = {"agent_system": tasks.agent_prompt(plan.task, plan.agent_prompt),
                          "greeting": getattr(tasks, "greeting", lambda: "")() or ""}
            if plan.mode == "free":
                self.extra["user_system"] = tasks.user_prompt(plan.task)
            self.extra = {k: v for k, v in self.extra.items() if v}
        # the transcript reads only the turns (this list, extended) and the extras: one view for the session
        self._turns_view = SessionView(persona=self.persona, turns=self.turns, extra=self.extra)

    # -- the parties ----------------------------------------------------------------------
    def view(self, decision: Decision | None = None) -> SessionView:
        return SessionView(persona=self.persona, turns=self.turns, seed=self.plan.seed, decision=decision,
                           completed=self.completed, disclosed=self.state.disclosed, extra=self.extra,
                           user_messages=self.user_messages, lines=self.lines)

    async def reply(self) -> str:
        messages = self.transcript.messages(self._turns_view)
        if self.env is not None:
            from uxbench.sim.tool_turns import agent_turn

            config = self.parties.assistant_config.model_copy(update={
                "tools": self.plan.task.tools if self.plan.task is not None else (), "seed": self.plan.seed})
            text, self.steps = await agent_turn(self.parties.assistant, messages, config, self.env,
                                                max_calls=self.parties.max_tool_calls,
                                                record=self.ledger.recorder("assistant"))
            return text
        out: ModelOutput = await self.parties.assistant.generate(messages, self.parties.assistant_config)
        self.ledger.add("assistant", out)
        return out.text

    async def assess(self) -> Assessment:
        view = project("assessor", self.view())
        assessment = await self.parties.assessor.assess(view, seed=self.plan.seed,
                                                        record=self.ledger.recorder("assessor"))
        if self.plan.task is not None and self.parties.assessor.spec == "rules":
            from uxbench.sim.tool_turns import tool_task_reading

            return tool_task_reading(assessment, view.reply)
        return assessment

    async def realise(self, decision: Decision) -> tuple[str, int, tuple[str, ...]]:
        """The user's message for a decision: code for `repeat`, else the realiser, checked and regenerated once."""
        view = project("realiser", self.view(decision))
        if decision.act == "repeat" and view.previous_request:
            return repeat_text(view.previous_request, self.plan.seed, view.turn), 1, ()
        allowed = set(decision.allowed_facts) | set(decision.state_facts)
        hidden = [f.value for f in self.persona.facts if f.id not in allowed]
        shown = [f.value for f in self.persona.facts if f.id in allowed]
        reasons: list[str] = []
        for attempt in range(2):
            text = await self.parties.realiser.realise(view, attempt=attempt,
                                                       record=self.ledger.recorder("simulator"))
            problem = markers.output_problem(text) or states_hidden(text, hidden, shown)
            if problem is None:
                return text.strip(), attempt + 1, tuple(reasons)
            reasons.append(problem)
        raise _Unusable(reasons)

    async def agent_reply(self) -> SessionRecord | None:
        """The model under test's next reply, added to the turns; the session's record when it ended the session
        (its endpoint failed after the retries; too many tool calls in one reply)."""
        from uxbench.sim.tool_turns import ToolLimit

        try:
            self.add_assistant(await self.reply())
        except ModelError as err:
            return self.record("error", f"{MUT_ERROR} {err}")
        except ToolLimit as err:
            self.steps = err.steps
            self.add_assistant("")
            return self.record("max_turns", str(err))
        return None

    # -- the turns ------------------------------------------------------------------------
    def add_user(self, text: str, decision: Decision | None, *, attempts: int = 1, discarded: tuple[str, ...] = (),
                 skim: bool = False) -> None:
        reply = self.turns[-1].text if self.turns else ""
        stamp = self.clock.user_message(reply, text, skim) if self.turns else self.clock.stamp()
        stated = facts_said(text, self.persona.facts)
        if decision is not None:  # what the text says, not what the policy asked it to say, counts as said
            kept = tuple(f for f in self.state.disclosed if f not in decision.state_facts or f in stated)
            self.state = replaced(self.state, {"disclosed": tuple(dict.fromkeys(kept + stated))})
        free = decision is None
        self.user_messages += 1
        self.turns.append(SimTurn(
            turn_index=len(self.turns), role="user", text=text, created_at=stamp,
            act="free" if decision is None else decision.act, item=None if decision is None else decision.item,
            facts_stated=stated, satisfaction=None if free else self.state.satisfaction,
            patience_left=None if free else round(self.state.patience_left, 4), skim=skim, attempts=attempts,
            discarded=discarded,
        ))
        self._turn_done()

    def add_assistant(self, text: str) -> None:
        steps, self.steps = self.steps, []
        self.turns.append(SimTurn(turn_index=len(self.turns), role="assistant", text=text,
                                  created_at=self.clock.assistant_reply(text), tool_steps=steps))
        self._turn_done()

    def _turn_done(self) -> None:
        if self.parties.on_turn is not None:
            self.parties.on_turn()

    def record(self, reason: Reason, detail: str = "") -> SessionRecord:
        plan = self.plan
        return SessionRecord(
            session_id=plan.session_id, index=plan.index, persona_id=self.persona.id, persona_hash=plan.persona_hash,
            lang=self.persona.lang, trial=plan.trial, seed=plan.seed, mode=plan.mode, turns=self.turns,
            termination=Termination(reason=reason, detail=detail), completed=self.completed,
            abandoned=self.state.abandoned, goal_items=tuple(g.id for g in self.persona.goal),
            chains=list(self.state.chains), usage=self.ledger.usage,
            final_satisfaction=self.state.satisfaction if plan.mode == "structured" else None,
            task_id=plan.task.id if plan.task is not None else None,
        )

    # -- structured mode ------------------------------------------------------------------
    async def structured(self) -> SessionRecord:
        persona, plan = self.persona, self.plan
        self.state, decision = open_session(persona, self.state, plan.seed)
        if self.parties.realiser.spec == LEAKY:  # every fact the persona may not open with, in the first message
            leaked = tuple(f.id for f in persona.facts if f.disclose != "opening")
            decision = decision.model_copy(update={"state_facts": tuple(dict.fromkeys(decision.state_facts + leaked))})
        try:
            if persona.opener:  # authored: sent verbatim, no model rewrites it
                self.add_user(persona.opener, decision)
            else:
                text, attempts, discarded = await self.realise(decision)
                self.add_user(text, decision, attempts=attempts, discarded=discarded)
        except _Unusable as err:
            return self.record("error", f"{UNUSABLE} ({err})")
        replies = 0
        while True:
            ended = await self.agent_reply()
            if ended is not None:
                return ended
            replies += 1
            try:
                assessment = await self.assess()
            except AssessorFailed as err:
                return self.record("error", str(err))
            reply = self.turns[-1]
            reply.assessment = assessment
            if assessment.completed:  # else the same items (self.completed holds each once)
                self.completed = tuple(dict.fromkeys(self.completed + tuple(
                    i for i in assessment.completed if i in {g.id for g in persona.goal})))
            self.state, decision = react(persona, self.state, assessment, plan.seed, reply_turn=reply.turn_index,
                                         replies=replies, max_turns=plan.max_turns)
            reply.feedback = decision.feedback
            if decision.act == "leave":
                reason = decision.end or "patience_exhausted"
                return self.record(reason, _SILENT_END[reason])
            try:
                text, attempts, discarded = await self.realise(decision)
            except _Unusable as err:
                return self.record("error", f"{UNUSABLE} ({err})")
            self.add_user(text, decision, attempts=attempts, discarded=discarded, skim=decision.skim)
            if decision.end is not None:
                return self.record(decision.end, f"closing act: {decision.act}")

    # -- free mode ------------------------------------------------------------------------
    async def free(self) -> SessionRecord:
        persona, plan = self.persona, self.plan
        replies = 0
        while True:
            if replies == 0 and persona.opener:
                self.add_user(persona.opener, None)
            else:
                ending = await self.free_user_turn()
                if ending is not None:
                    return ending
            ended = await self.agent_reply()
            if ended is not None:
                return ended
            replies += 1
            try:
                assessment = await self.assess()
            except AssessorFailed as err:
                return self.record("error", str(err))
            self.turns[-1].assessment = assessment
            self.completed = tuple(dict.fromkeys(self.completed + tuple(
                i for i in assessment.completed if i in {g.id for g in persona.goal})))
            if replies >= plan.max_turns:
                return self.record("max_turns")

    async def free_user_turn(self) -> SessionRecord | None:
        """One free-mode user message, or the session's record when the simulator ended it."""
        view = project("free", self.view())
        done = set(self.completed) >= {g.id for g in self.persona.goal}
        reasons: list[str] = []
        for attempt in range(2):
            text = await self.parties.realiser.speak_free(view, attempt=attempt,
                                                          record=self.ledger.recorder("simulator"))
            problem = markers.output_problem(text, allow_markers=True)
            found = markers.markers_in(text)
            if problem is None and found and self.plan.task is not None:
                return self._benchmark_stop(text, found[0], attempt, reasons)
            if problem is None and found:
                meaning = markers.marker_meaning(found[0])
                alone = not markers.MARKER_RE.sub("", text).strip()
                if meaning == markers.STOP and done:
                    return self.record("goal_complete", "###STOP###" + ("" if alone else " with a goodbye"))
                if not alone or meaning is None:
                    problem = "stop marker inside a message" if meaning else f"unknown marker {found[0]}"
                elif meaning == markers.STOP:
                    pending = [g.id for g in self.persona.goal if g.id not in self.completed]
                    return self.record("error", f"premature stop: ###STOP### with goal items pending "
                                                f"({', '.join(pending)})")
                elif meaning == markers.LEAVE:
                    return self.record("patience_exhausted", "###LEAVE###")
                else:
                    return self.record("out_of_scope", "###OUT_OF_SCOPE###")
            if problem is None:
                self.add_user(text.strip(), None, attempts=attempt + 1, discarded=tuple(reasons))
                return None
            reasons.append(problem)
        return self.record("error", f"simulator output unusable twice ({'; '.join(reasons)})")


    def _benchmark_stop(self, text: str, marker: str, attempt: int, reasons: list[str]) -> SessionRecord:
        """A tool task's baseline proxy stops as the benchmark's own user simulator does: a marker anywhere in
        its message ends the session (the words before it are its last message); the evaluator then scores the
        session. A stop with goal items pending is kept, and the corruption gate flags it (`premature_end`)."""
        words = markers.MARKER_RE.sub("", text).strip()
        if words:
            self.add_user(words, None, attempts=attempt + 1, discarded=tuple(reasons))
        meaning = markers.marker_meaning(marker)
        if meaning == markers.STOP:
            return self.record("goal_complete", marker)
        if meaning == markers.LEAVE:
            return self.record("patience_exhausted", marker)
        return self.record("out_of_scope", marker)


_ENDING: dict[str, Ending] = {"goal_complete": "user_stop", "patience_exhausted": "user_stop",
                              "out_of_scope": "user_stop", "max_turns": "max_steps", "error": "error"}
"""How each ending reads in the benchmark's terms: a user who ended the session (done, leaving, handed off) is a
user stop, which the evaluator scores; the turn limit and errors score 0."""


async def run_session(plan: SessionPlan, parties: Parties) -> SessionRecord:
    """Run one session to its end; model errors and unusable outputs end it with reason `error`. A tool task's
    session is then scored by the task's own evaluator."""
    session = _Session(plan, parties)
    record = await (session.structured() if plan.mode == "structured" else session.free())
    if plan.task is not None and parties.tasks is not None and not record.termination.detail.startswith(MUT_ERROR):
        from uxbench.sim.tooltask import trajectory

        ending = _ENDING[record.termination.reason]
        try:
            reward = parties.tasks.evaluate(plan.task, trajectory(record.turns, session.extra.get("greeting")),
                                            ending, session.env)
        except Exception as err:  # the evaluator's own failure: an unscored session, counted, never dropped
            record.reward_detail = {"note": f"evaluation failed: {type(err).__name__}: {err}"[:500], "ending": ending}
        else:
            record.reward = reward.reward
            record.reward_breakdown = dict(reward.breakdown)
            record.reward_detail = {**reward.detail, "note": reward.note, "ending": ending}
    return record

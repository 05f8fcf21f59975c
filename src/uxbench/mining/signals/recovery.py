"""Recovery chains: what happened after each dissatisfied reply.

From the failed reply, walk the following messages (at most `recovery_max_turns`):
- the user's reaction to the failure is a give-up, or nothing follows at all -> `user_gave_up`;
- each later assistant reply is a retry; the first retry whose own reaction is not dissatisfied
  -> `recovered` (at that retry); a retry met by a give-up -> `user_gave_up`;
- the conversation ends right after a retry with no reaction and no positive signal -> `unknown`;
- dissatisfaction goes on until the chain or the conversation runs out -> `failed`.
"""

from __future__ import annotations

from uxbench.mining.signals.results import RecoveryChain, TurnSignals


def _reaction(s: TurnSignals) -> str:
    """The user's action after reply `s`, as one word."""
    if s.complaint.fired:
        return "complain"
    if s.dismiss.fired:
        return "dismiss"
    if s.repeat.fired:
        return "repeat"
    if s.rephrase.fired:
        return "rephrase"
    return "followup" if s.dissatisfied else "satisfied"


def recovery_chain(signals: list[TurnSignals], i: int, max_turns: int) -> RecoveryChain:
    """The chain that starts at the dissatisfied reply `signals[i]` (the turns of one conversation)."""
    failed = signals[i]
    turns, actions = [failed.turn_index], ["failure"]
    if failed.next_user_turn is not None:
        turns.append(failed.next_user_turn)
        actions.append(_reaction(failed))
    if failed.dismiss.fired or failed.conversation_end.fired:
        return RecoveryChain(outcome="user_gave_up", turns=turns, actions=actions)
    for retry in signals[i + 1 :]:
        if len(turns) - 1 >= max_turns:
            break
        turns.append(retry.turn_index)
        actions.append("retry")
        if retry.next_user_turn is not None:
            turns.append(retry.next_user_turn)
            actions.append(_reaction(retry))
        if retry.dismiss.fired:
            return RecoveryChain(outcome="user_gave_up", turns=turns, actions=actions)
        if not retry.dissatisfied:
            if retry.next_user_turn is None and not retry.satisfied:
                return RecoveryChain(outcome="unknown", turns=turns, actions=actions)
            return RecoveryChain(outcome="recovered", turns=turns, actions=actions,
                                 recovered_at=retry.turn_index)
        if retry.next_user_turn is None:
            break
    return RecoveryChain(outcome="failed", turns=turns, actions=actions)


def attach_recovery(signals: list[TurnSignals], max_turns: int) -> None:
    """Set `recovery` on every dissatisfied turn of one conversation (in place)."""
    for i, s in enumerate(signals):
        if s.dissatisfied:
            s.recovery = recovery_chain(signals, i, max_turns)


def recovery_chains(signals: list[TurnSignals]) -> list[RecoveryChain]:
    """The chains of a conversation's dissatisfied turns, in order."""
    return [s.recovery for s in signals if s.recovery is not None]

"""A tool task's user scenario compiled, by code, into a persona: what each user proxy needs.

- **facts** from `known_info`: names, user ids, e-mail addresses, zip codes, reservation and confirmation numbers
  (each a regular expression over the benchmark's sentences), said only when asked (`on_request`), or `opening`
  when the reason for the call states the value anyway. In a free-text scenario (tau2's mock domain) a fact is a
  value of a gold action's argument that the text states and that looks like a value (it has a digit or an
  underscore, or the text quotes it), labelled by the argument's name.
- **goal items** from the reason for the call (one per paragraph, in order) and from the task instructions that
  say what the user wants ("You also want ..."); the other task instructions (conditions, manner) go to the
  realiser's description and to the persona's rubric, where the UFS judge reads them.
- **the confirmation** (`confirm`, value "yes", `opening`): a protocol answer every proxy may give when the agent
  asks to proceed, not a scenario value (so the one fact exempt from the occurrence check; no disclosure item).

Every compiled value is checked to occur in the scenario text (`check_facts`): a value that does not is refused,
naming the task and the fact. What is not compiled (a city, a date in a sentence) stays in the description, where
no code holds it back: only the compiled facts are disclosure-controlled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from uxbench.errors import DataError
from uxbench.sim.disclosure import mentions
from uxbench.sim.markers import normalize
from uxbench.sim.persona import Fact, GoalCheck, GoalItem, Patience, Persona, Profile, RubricItem
from uxbench.sim.tooltask import ToolTask

CONFIRM_FACT = "confirm"
DONE_PATTERN = r"(?i)\b(all done|is done|has been|have been|successfully|is now)\b"
"""A reply that says the request was carried out (the rules assessor's check of a compiled goal item)."""
DONE_QUESTION = "Does the reply say that this request was carried out, or answer it for good?"
_NAME = r"([A-Z][a-z]+(?: [A-Z][a-z]+)?)"
_PATTERNS: tuple[tuple[str, str, str, str], ...] = (
    # (fact id, label, regex over known_info, ask pattern)
    ("user_id", "user id", r"\b([a-z]+_[a-z]+_\d{3,5})\b", r"(?i)\buser ?(id|name)\b|\busername\b"),
    ("email", "email", r"\b([\w.+-]+@[\w-]+\.[\w.]+\w)\b", r"(?i)\be-?mail\b"),
    ("zip", "zip code", r"\b(\d{5})\b", r"(?i)\bzip\b|\bpost(al)? ?code\b"),
    ("reservation", "reservation number", r"(?i)(?:reservation|confirmation) number is ([A-Z0-9]{6})\b",
     r"(?i)\breservation\b|\bconfirmation (number|code)\b|\bbooking\b"),
    ("name", "name", r"(?:\bYou are|\bYour? name is|\bcalled|\bYou are user) " + _NAME + r"\b",
     r"(?i)\bname\b"),
)
_CONFIRM_ASK = r"(?i)\bconfirm|\bproceed\b|\bgo ahead\b"
_WANT_RE = re.compile(r"^\s*You (also )?(want|would like|need|wish)\b")
_NOT_A_NAME = {"Your", "You", "The", "User", "An", "A"}


def _paragraphs(text: str | None) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text or "") if p.strip() and p.strip() != "."]


def first_person(text: str) -> str:
    """The benchmark's second person ("You want to cancel your trip") in the user's first person, for the
    scripted realiser's wording (a model realiser also gets the original in its description)."""
    rules = ((r"\bYou are\b", "I am"), (r"\byou are\b", "I am"), (r"\bYou're\b", "I'm"), (r"\byou're\b", "I'm"),
             (r"\bYourself\b", "Myself"), (r"\byourself\b", "myself"), (r"\bYour\b", "My"), (r"\byour\b", "my"),
             (r"\bYou\b", "I"), (r"\byou\b(?=\s+(want|would|need|have|had|were|will|can|could|do|did|don't|"
                                r"recently|received|also|just|wish|live|only|are|think|may|might|should))", "I"),
             (r"\byou\b", "me"))
    for pattern, repl in rules:
        text = re.sub(pattern, repl, text)
    return text


def compile_facts(task: ToolTask) -> list[Fact]:
    """The facts of the task's user (before the disclosure rule is set)."""
    scenario = task.scenario
    facts: list[Fact] = []
    if scenario.known_info:
        seen: set[str] = set()
        for fid, label, regex, ask in _PATTERNS:
            values = [m.group(1) for m in re.finditer(regex, scenario.known_info)]
            values = [v for v in dict.fromkeys(values) if v.split()[0] not in _NOT_A_NAME and v not in seen]
            for n, value in enumerate(values):
                seen.add(value)
                facts.append(Fact(id=fid if n == 0 else f"{fid}_{n + 1}", label=label if n == 0 else
                                  f"{label} {n + 1}", value=value, ask_patterns=(ask,)))
    elif scenario.free_text:
        text = scenario.free_text
        seen = set()
        for action in task.gold:
            for name, value in action.arguments.items():
                if not isinstance(value, str) or value in seen or not _value_like(value, text):
                    continue
                seen.add(value)
                label = name.replace("_", " ")
                facts.append(Fact(id=re.sub(r"[^A-Za-z0-9_]", "_", name)[:60] or "value", label=label,
                                  value=value, ask_patterns=(rf"(?i)\b{re.escape(label)}\b",)))
    return facts


def _value_like(value: str, text: str) -> bool:
    if value not in text:
        return False
    quoted = any(f"{q}{value}{q}" in text for q in ("'", '"'))
    return quoted or bool(re.search(r"[\d_]", value))


def check_facts(task_id: str, facts: Iterable[Fact], scenario_text: str) -> None:
    """Refuse a compiled fact whose value the scenario does not state (the confirmation is exempt)."""
    for fact in facts:
        if fact.id == CONFIRM_FACT:
            continue
        if fact.value not in scenario_text and not mentions(fact.value, scenario_text):
            raise DataError(f"task {task_id}: the compiled fact '{fact.id}' ({fact.label} = {fact.value!r}) does "
                            "not occur in the task's user scenario; a proxy may only be given what the scenario "
                            "says.", field=f"facts.{fact.id}")


def _mask(text: str, facts: list[Fact]) -> str:
    for fact in facts:
        text = text.replace(fact.value, f"[{fact.label}]")
    return text


def compile_persona(task: ToolTask) -> Persona:
    """The persona every proxy of this task is built from (its content hash identifies the task's user)."""
    scenario = task.scenario
    facts = compile_facts(task)
    if scenario.free_text is not None:
        sentences = re.split(r"(?<=[.!?])\s+", scenario.free_text.strip())
        kept = [s for s in sentences if not any(normalize(f.value) in normalize(s) for f in facts)]
        reasons = [" ".join(kept) or "I need help with a task."]
        wants: list[str] = []
        notes: list[str] = []
    else:
        reasons = _paragraphs(scenario.reason_for_call) or ["I need help."]
        wants = [p for p in _paragraphs(scenario.task_instructions) if _WANT_RE.match(p)]
        notes = [p for p in _paragraphs(scenario.task_instructions) if p not in wants]
    requests = [first_person(r) for r in reasons + wants]
    stated = normalize(" ".join(requests))
    facts = [f.model_copy(update={"disclose": "opening" if normalize(f.value) in stated else "on_request"})
             for f in facts]
    check_facts(task.id, facts, scenario.text())
    hidden = [f for f in facts if f.disclose != "opening"]
    goal = []
    for i, request in enumerate(requests):
        goal.append(GoalItem(id=f"g{i + 1}", request=_mask(request, hidden), after=(f"g{i}",) if i else (),
                             check=GoalCheck(pattern=DONE_PATTERN, question=DONE_QUESTION)))
    description = "\n".join(x for x in (
        scenario.persona, _labelled("What you know you do not know", scenario.unknown_info),
        _labelled("How to behave", "\n".join(notes))) if x)
    facts.append(Fact(id=CONFIRM_FACT, label="confirmation", value="yes", disclose="opening",
                      ask_patterns=(_CONFIRM_ASK,)))
    rubric = tuple(RubricItem(id=f"instruction_{i + 1}", text=_mask(note, hidden),
                              provenance="derived:task_instructions") for i, note in enumerate(notes))
    return Persona(
        id=_persona_id(task), lang="en",
        profile=Profile(description=_mask(description, hidden), tone="neutral", message_chars=(1, 2000)),
        goal=tuple(goal), facts=tuple(facts), rubric=rubric, patience=Patience(session=4.0),
        meta={"task": task.id, "task_digest": task.digest, "compiled_from": "tool task scenario"},
    )


def _labelled(label: str, text: str | None) -> str | None:
    return f"{label}: {text.strip()}" if text and text.strip() else None


def _persona_id(task: ToolTask) -> str:
    raw = re.sub(r"[^A-Za-z0-9_.:-]", "_", task.id.replace("/", "."))
    return raw[:80]

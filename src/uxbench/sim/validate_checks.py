"""Like with like: does a free-run validation compare comparable conversations? Counted on both sides, said in the
report (warnings with counts), refused where nothing is comparable.

- **language**: the language of each conversation's user turns; a simulated side in another language mix than
  the real one (24 Chinese personas against English logs) compares languages, not users. Refused when the two
  sides share no language.
- **task vs chit-chat**: the share of conversations that open with a request (a question, an instruction); the
  personas pursue goals, so logs of small talk (persona chat) are not what they simulate, and the reverse.
- **mining drops**: conversations the deterministic mining stages left out before the signal stage (prefilter:
  empty, no reply, too short, every reply interrupted: a one-character reply such as "好" counts as interrupted),
  by reason and, on a simulated side, by the personas' language: they are missing from the figures.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from uxbench.errors import ConfigError
from uxbench.sim.validate_data import Side

LANGUAGE_GAP = 0.2
"""Warn when a language's share of conversations differs by this much between the sides."""
TASK_GAP = 0.3
"""Warn when the share of conversations that open with a request differs by this much."""
_GREETING_RE = re.compile(r"^\W*(hi+|hello|hey|yo|good (morning|afternoon|evening)|how are you|how'?s it going|"
                          r"what'?s up|nice to meet you|你好|您好|嗨|哈喽|在吗|早上好|晚上好)\b", re.IGNORECASE)
_REQUEST_RE = re.compile(
    r"[?？]|^\W*(please|can|could|would|will|how|what|why|when|where|which|who|is|are|do|does|write|explain|give|"
    r"make|create|generate|tell|list|help|fix|translate|summari[sz]e|show|find|compare|draft|suggest|rewrite|"
    r"i need|i want|i'?d like|i have)\b|帮|请|怎么|如何|为什么|什么|能不能|可以|吗|写|翻译|解释|推荐|需要",
    re.IGNORECASE,
)


def opens_with_request(text: str) -> bool:
    """The first user message asks for something (task-oriented), rather than greeting or chatting."""
    words = text.split()
    if _GREETING_RE.match(text) and len(words) <= 8 and len(text) <= 40:
        return False
    return bool(_REQUEST_RE.search(text))


def profile(side: Side) -> dict[str, Any]:
    """Language mix and request share of one side, with counts."""
    n = len(side.langs)
    langs = Counter(side.langs)
    tasks = sum(opens_with_request(t) for t in side.openers)
    return {"n_conversations": n, "languages": dict(sorted(langs.items())),
            "opens_with_request": {"k": tasks, "n": n, "share": round(tasks / n, 4) if n else None}}


def mining_drops(mined: Path, lang_of: dict[str, str] | None = None) -> dict[str, Any]:
    """Conversations the mining stages read and those they left out before the signal stage, by reason."""
    counts_file, dropped_file = mined / "stage_counts.json", mined / "dropped.jsonl"
    counts = orjson.loads(counts_file.read_bytes()) if counts_file.is_file() else {}
    read = (counts.get("sessions") or {}).get("sessions")
    reached = (counts.get("signals") or {}).get("sessions")
    by_reason: Counter[str] = Counter()
    by_lang: Counter[str] = Counter()
    if dropped_file.is_file():
        for line in dropped_file.read_bytes().splitlines():
            row = orjson.loads(line)
            if row.get("stage") == "dedup":  # near-duplicates stay in the signals (marked), so they count
                continue
            by_reason[f"{row.get('stage')}: {row.get('reason')}"] += 1
            if lang_of is not None:
                by_lang[lang_of.get(str(row.get("conversation_id")), "unknown")] += 1
    out: dict[str, Any] = {"read": read, "reached_signals": reached, "dropped": sum(by_reason.values()),
                           "by_reason": dict(sorted(by_reason.items()))}
    if lang_of is not None:
        out["dropped_by_language"] = dict(sorted(by_lang.items()))
    return out


def like_with_like(real: tuple[str, Side, dict[str, Any]], sims: list[tuple[str, Side, dict[str, Any]]]
                   ) -> list[dict[str, Any]]:
    """The warnings of the three checks, each with its counts; ConfigError when the sides share no language."""
    real_name, real_side, real_drops = real
    real_profile = profile(real_side)
    checks: list[dict[str, Any]] = []
    for name, side, drops in [(real_name, real_side, real_drops), *sims]:
        if not side.sessions:
            reasons = ", ".join(f"{k} {v}" for k, v in drops.get("by_reason", {}).items()) or "none recorded"
            raise ConfigError(f"nothing of {name} reached the signal stage: the mining prefilter left out "
                              f"{drops.get('dropped', 0)} of {drops.get('read')} conversations ({reasons}; a reply "
                              "shorter than 4 characters, such as '好', counts as interrupted). Nothing to compare.")
    for name, side, _drops in sims:
        sim_profile = profile(side)
        common = set(real_profile["languages"]) & set(sim_profile["languages"])
        if not common:
            raise ConfigError(
                f"{name} and the real logs share no language: simulated {_langs(sim_profile)}, real "
                f"{_langs(real_profile)}. Validate against logs in the personas' language (or run the personas of "
                "the logs' language: `uxbench sim run --lang`).")
        shares = {lang: (_share(real_profile, lang), _share(sim_profile, lang))
                  for lang in set(real_profile["languages"]) | set(sim_profile["languages"])}
        if any(abs(r - s) >= LANGUAGE_GAP for r, s in shares.values()):
            checks.append({"check": "language", "run": name, "level": "warning", "message": (
                f"{name} is {_langs(sim_profile)}; the real logs are {_langs(real_profile)}: the comparison mixes "
                "languages (compare like with like: `uxbench sim run --lang`, or logs of the personas' language)")})
        r_task, s_task = real_profile["opens_with_request"], sim_profile["opens_with_request"]
        if r_task["share"] is not None and s_task["share"] is not None and \
                abs(r_task["share"] - s_task["share"]) >= TASK_GAP:
            kind = "chit-chat" if r_task["share"] < s_task["share"] else "task-oriented"
            checks.append({"check": "task", "run": name, "level": "warning", "message": (
                f"{s_task['k']} of {s_task['n']} simulated conversations open with a request, {r_task['k']} of "
                f"{r_task['n']} real ones: the real logs look {kind} and the personas do not, so reaction rates "
                "compare different kinds of conversation")})
    for name, drops in [(real_name, real_drops), *[(n, d) for n, _, d in sims]]:
        if drops.get("dropped"):
            reasons = ", ".join(f"{k} {v}" for k, v in drops["by_reason"].items())
            langs = drops.get("dropped_by_language")
            extra = f" (by language: {', '.join(f'{k} {v}' for k, v in langs.items())})" if langs else ""
            checks.append({"check": "mining_drops", "run": name, "level": "warning", "message": (
                f"{name}: the mining prefilter left out {drops['dropped']} of {drops.get('read')} conversations "
                f"before the signal stage ({reasons}){extra}; they are in no figure (a reply shorter than 4 "
                "characters, such as '好', counts as interrupted)")})
    return checks


def _share(p: dict[str, Any], lang: str) -> float:
    n = p["n_conversations"]
    return p["languages"].get(lang, 0) / n if n else 0.0


def _langs(p: dict[str, Any]) -> str:
    n = p["n_conversations"]
    return ", ".join(f"{lang} {k} of {n}" for lang, k in p["languages"].items()) or "empty"

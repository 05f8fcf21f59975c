"""Text checks shared by the session loop (which discards and regenerates a bad simulator output) and the
corruption gate (which flags a finished session): stop markers, reasoning text, policy state, role flips, and
the normalisation and content tokens used to compare user messages. Wording lists are this project's own."""

from __future__ import annotations

import functools
import re
import unicodedata

STOP = "###STOP###"
LEAVE = "###LEAVE###"
OUT_OF_SCOPE = "###OUT_OF_SCOPE###"
MARKER_RE = re.compile(r"#{2,}\s*[A-Za-z][A-Za-z_\- ]{1,30}\s*#{2,}")
"""A stop-like marker anywhere in a text (###STOP###, ###TRANSFER###, ## OUT-OF-SCOPE ## ...)."""
_MARKER_MEANING = {"STOP": STOP, "LEAVE": LEAVE, "OUT_OF_SCOPE": OUT_OF_SCOPE, "OUTOFSCOPE": OUT_OF_SCOPE,
                   "TRANSFER": OUT_OF_SCOPE}

REASONING_RE = re.compile(
    r"</?think(ing)?>|<\|?(reasoning|scratchpad)\|?>|^\s*(thought|thoughts|reasoning|analysis|inner monologue|"
    r"internal note|plan)\s*[:：]|^\s*(思考|分析|推理|内心独白|心理活动)\s*[:：]|^\s*[(（\[]\s*(thinking|思考)",
    re.IGNORECASE | re.MULTILINE,
)
"""Private reasoning that leaked into a message (tau-bench's `Thought:` split; tolokaforge#1076)."""

POLICY_RE = re.compile(
    r"\bact\s*[:=]|patience_left|patience\s*[:=]|satisfaction\s*(state|[:=])|\bon_request\b|\bafter_turn\b|"
    r"volunteer_if_adjacent|\bgoal item|\bpersona\b|simulated user|\bsimulator\b|role-?play|\[\[|\{\s*\"act\"|"
    r"满意度\s*[:：=]|耐心值|用户画像|模拟用户|目标项|扮演",
    re.IGNORECASE,
)
"""The simulator's own machinery named in a user message (acts, states, persona fields)."""

ROLE_FLIP_RE = re.compile(
    r"how (can|may) i (help|assist)|is there anything else i can|i'?d be (happy|glad) to help|i'?m (happy|glad) "
    r"to help|\bas an ai\b|\bi am an ai\b|let me know if you (need|have) any|feel free to ask|"
    r"有什么(可以|能)帮|很高兴为(您|你)|请问(您|你)(有什么|需要)|我(可以|来)帮(您|你)|作为(一个)?(AI|人工智能)|"
    r"还有(什么|其他)(可以|需要)(帮|为)",
    re.IGNORECASE,
)
"""A user message that talks as the assistant would."""

_EN_STOP = frozenset(
    "the and for you your with that this have what how can please want need would could about from there "
    "just like get not but are was will does did any all one also into them they when which who why".split()
)
_CJK = re.compile(r"[\u3400-\u9fff]+")
_WORD = re.compile(r"[a-z0-9]+")
_PUNCT = re.compile(r"[\W_]+", re.UNICODE)


@functools.lru_cache(maxsize=4096)  # a persona's facts and requests are compared with every message of a session
def normalize(text: str) -> str:
    """NFKC (full-width -> half-width), lower case, punctuation and spaces removed: for "the same text"."""
    return _PUNCT.sub("", unicodedata.normalize("NFKC", text).lower())


@functools.lru_cache(maxsize=4096)
def content_tokens(text: str) -> frozenset[str]:
    """Content words (Latin, 3+ letters, no stop words) and CJK character bigrams."""
    folded = unicodedata.normalize("NFKC", text).lower()
    tokens = {w for w in _WORD.findall(folded) if len(w) >= 3 and w not in _EN_STOP}
    for run in _CJK.findall(folded):
        tokens.update(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            tokens.add(run)
    return frozenset(tokens)


def markers_in(text: str) -> list[str]:
    return [m.group(0) for m in MARKER_RE.finditer(text)]


def marker_meaning(marker: str) -> str | None:
    """STOP / LEAVE / OUT_OF_SCOPE for a marker (spaces, dashes and case ignored), else None."""
    key = re.sub(r"[#\s\-]", "", marker).upper().replace("_", "")
    for name, meaning in _MARKER_MEANING.items():
        if key == name.replace("_", ""):
            return meaning
    return None


def output_problem(text: str, *, allow_markers: bool = False) -> str | None:
    """Why a simulator output must be discarded and regenerated (never edited), or None when it may be sent."""
    if not text.strip():
        return "empty"
    if REASONING_RE.search(text):
        return "reasoning text"
    if not allow_markers and MARKER_RE.search(text):
        return "stop marker in a structured-mode message"
    if POLICY_RE.search(text):
        return "simulator state in the message"
    return None


def asks_own_fact(text: str, labels: list[str]) -> str | None:
    """The user asks the assistant for one of the user's own facts ("what is your order number?")."""
    folded = unicodedata.normalize("NFKC", text).lower()
    if "?" not in folded and "吗" not in folded:
        return None
    for label in labels:
        lab = label.lower()
        if f"your {lab}" in folded or f"您的{lab}" in folded or f"你的{lab}" in folded:
            return label
    return None

"""Text checks shared by the session loop (which discards and regenerates a bad simulator output) and the
corruption gate (which flags a finished session): stop markers, reasoning text, policy state, role flips, and
the normalisation and content tokens used to compare user messages. Wording lists are this project's own."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from functools import lru_cache

from ahocorasick_rs import AhoCorasick

from uxbench.scoring.prompts.files import PackageTemplates
from uxbench.sim.literal_gate import GateSet, LiteralGate

STOP = "###STOP###"
LEAVE = "###LEAVE###"
OUT_OF_SCOPE = "###OUT_OF_SCOPE###"
MARKER_RE = re.compile(r"#{2,}\s*[A-Za-z][A-Za-z_\- ]{1,30}\s*#{2,}")
"""A stop-like marker anywhere in a text (###STOP###, ###TRANSFER###, ## OUT-OF-SCOPE ## ...)."""
_MARKER_MEANING = {"STOP": STOP, "LEAVE": LEAVE, "OUT_OF_SCOPE": OUT_OF_SCOPE, "OUTOFSCOPE": OUT_OF_SCOPE,
                   "TRANSFER": OUT_OF_SCOPE}

REASONING_RE = LiteralGate(re.compile(
    r"</?think(ing)?>|<\|?(reasoning|scratchpad)\|?>|^\s*(thought|thoughts|reasoning|analysis|inner monologue|"
    r"internal note|plan)\s*[:：]|^\s*(思考|分析|推理|内心独白|心理活动)\s*[:：]|^\s*[(（\[]\s*(thinking|思考)",
    re.IGNORECASE | re.MULTILINE,
))
"""Private reasoning that leaked into a message (tau-bench's `Thought:` split; tolokaforge#1076)."""

POLICY_RE = LiteralGate(re.compile(
    r"\bact\s*[:=]|patience_left|patience\s*[:=]|satisfaction\s*(state|[:=])|\bon_request\b|\bafter_turn\b|"
    r"volunteer_if_adjacent|\bgoal item|\bpersona\b|simulated user|\bsimulator\b|role-?play|\[\[|\{\s*\"act\"|"
    r"满意度\s*[:：=]|耐心值|用户画像|模拟用户|目标项|扮演|"
    # the profile lines of the realiser's prompt (realize.profile_text), copied into the message
    r"\byour tone\s*:|\btyping habits\s*:|you are (a beginner|an expert) in this topic|you know the basics of this "
    r"topic|you write (very short|messages of normal length|long, detailed)|"
    r"语气[:：]|打字习惯[:：]|性格[:：]|你对这个话题|你的消息(很短|长度一般|很长)",
    re.IGNORECASE,
))
"""The simulator's own machinery named in a user message (acts, states, persona fields)."""

ROLE_FLIP_RE = LiteralGate(re.compile(
    r"how (can|may) i (help|assist)|is there anything else i can|i'?d be (happy|glad) to (help|assist)|i'?m (happy|"
    r"glad) to (help|assist)|\bas an ai\b|\bi am an ai\b|let me know if you (need|have) any|feel free to ask|"
    r"i'?m (here|always here|available) to (help|assist)|i am (here|available) to (help|assist)|sorry for (any|the) "
    r"(inconvenience|confusion)|apologi[sz]e for (any|the) (inconvenience|confusion)|thank you for (reaching out|"
    r"contacting us|your patience)|how (can|may) i be of (help|assistance)|(assist|help) you (with|further)|"
    r"有什么(可以|能)帮|很高兴为(您|你)|请问(您|你)(有什么|需要)|我(可以|来)帮(您|你)|作为(一个)?(AI|人工智能)|"
    r"还有(什么|其他)(可以|需要)(帮|为)|给(您|你)带来(的)?不便|我(在这里|随时)(为|帮)(您|你)|感谢(您|你)的(耐心|咨询|理解)|"
    r"为(您|你)(服务|效劳)",
    re.IGNORECASE,
))
"""A user message that talks as the assistant would (offers help, apologises for the service, thanks for
contacting)."""

ASSISTANT_LINE_RE = re.compile(r"^[ \t]*(assistant|ai assistant|ai|chatbot|助手|客服|机器人|AI助手)[ \t]*[:：]",
                               re.IGNORECASE | re.MULTILINE)
"""A line of a user message that opens with the assistant's speaker label: the message goes on as a transcript
and writes the assistant's reply too ("User: ...\nAssistant: ...", seen from SmolLM2 behind llama.cpp)."""

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


_OUTPUT_GATES = GateSet(REASONING_RE, POLICY_RE)


def output_problem(text: str, *, allow_markers: bool = False) -> str | None:
    """Why a simulator output must be discarded and regenerated (never edited), or None when it may be sent."""
    if not text.strip():
        return "empty"
    could = _OUTPUT_GATES.could(text)  # (reasoning, policy): one pass for both gates
    if could[0] and REASONING_RE.regex.search(text):
        return "reasoning text"
    if not allow_markers and MARKER_RE.search(text):
        return "stop marker in a structured-mode message"
    if could[1] and POLICY_RE.regex.search(text):
        return "simulator state in the message"
    if prompt_echo(text):
        return "the simulator's prompt in the message"
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


# Does a user message repeat the simulator's own prompt? ("... Write the user's next message now.") A small model
# realising a user turn sometimes copies its instructions. Every fixed sentence of the realiser's and the free-mode
# simulator's templates (templates/{en,zh}/: system prompts, turn prompts, the acts' instructions, `$placeholders`
# cut out) is a fragment; a message containing one, compared after `normalize`, echoes the prompt. Fragments
# shorter than PROMPT_MIN_CHARS normalised characters (PROMPT_MIN_CJK_CHARS in Chinese) are left out: a user may
# say "thanks" or "算了" on their own.
_TEMPLATES = PackageTemplates("uxbench.sim", "Simulator")
PROMPT_FILES = ("realise.txt", "realise_turn.txt", "open_turn.txt", "free.txt", "free_turn.txt")
PROMPT_MIN_CHARS = 16
PROMPT_MIN_CJK_CHARS = 7
_TEMPLATE_FIELD_RE = re.compile(r"\$\{?\w+\}?")
_PROMPT_SPLIT_RE = re.compile(r"(?<=[.!?:;。！？：；])\s*|\n+|“|”|\"")
_CJK_CHAR_RE = re.compile("[\u3400-\u9fff]")


def _fragments_of(text: str) -> set[str]:
    out: set[str] = set()
    for piece in _PROMPT_SPLIT_RE.split(text):
        for part in _TEMPLATE_FIELD_RE.split(piece or ""):
            norm = normalize(part)
            if len(norm) >= (PROMPT_MIN_CJK_CHARS if _CJK_CHAR_RE.search(norm) else PROMPT_MIN_CHARS):
                out.add(norm)
    return out


@lru_cache(maxsize=1)
def prompt_fragments() -> frozenset[str]:
    """The normalised fixed sentences of every simulator prompt template, en and zh."""
    out: set[str] = set()
    for lang in ("en", "zh"):
        for name in PROMPT_FILES:
            out |= _fragments_of(_TEMPLATES.read(f"{lang}/{name}").decode("utf-8"))
        acts = json.loads(_TEMPLATES.read(f"{lang}/acts.json").decode("utf-8"))
        for instruction in acts.values():
            out |= _fragments_of(str(instruction))
    return frozenset(out)


def prompt_echo(text: str) -> str | None:
    """The first prompt fragment the message contains (normalised), or None."""
    norm = normalize(text)
    if not norm:
        return None
    found = _fragment_automaton().find_matches_as_indexes(norm, overlapping=True)  # every fragment it holds
    return _fragments_longest_first()[min(i for i, _, _ in found)] if found else None


@lru_cache(maxsize=1)
def _fragments_longest_first() -> tuple[str, ...]:
    return tuple(sorted(prompt_fragments(), key=lambda f: (-len(f), f)))


@lru_cache(maxsize=1)
def _fragment_automaton() -> AhoCorasick:
    """The fragments in one automaton (one pass over a message, not one `in` per fragment: 81 of them)."""
    return AhoCorasick(list(_fragments_longest_first()))

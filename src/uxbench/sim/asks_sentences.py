"""Which sentences of an assistant's reply ask the user something? (`asks.request_sentences`, en and zh.)

The reply is split into sentences with code blocks and inline code dropped. A sentence asks the user something
when it is a question addressed to them ("Could you tell me your city?", "请问您在哪个城市？") or a request ("Please
provide your order number.", "Let me know the model.", "I'll need your policy number.", "麻烦发一下您的型号"); other
questions of the same line count too ("What subject is it for? What is the target age range?"). Not asking:
offers and pleasantries ("Would you like me to ...?", "Is there anything else I can help with?", "还有什么可以帮
您？"), rhetorical openers of ad copy ("Are you tired of ...?"), quoted text, and content the assistant writes for
the user: dialogue and labelled lines ("Interviewer: What is your name?"), text with template placeholders
("[Your Name]"), what follows an introduction of content ("Here's the revised email:") until the assistant speaks
in its own voice again ("Let me know if ..."), and lists of questions introduced as content (questions to ask, an
interview, a survey) or, with no introduction that asks the user, of `LIST_QUESTIONS_AS_CONTENT` questions or more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from uxbench.sim.literal_gate import GateSet, LiteralGate

_CJK_RE = re.compile("[\u3400-\u9fff]")
_CODE_BLOCK_RE = re.compile(r"```.*?(```|\Z)", re.DOTALL)
_INLINE_CODE_RE = re.compile(r"`[^`\n]*`")
_QUOTED_RE = re.compile(r"\"[^\"\n]{0,400}\"|“[^”\n]{0,400}”|「[^」\n]{0,400}」|『[^』\n]{0,400}』")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;。！？；])\s+|(?<=[。！？；])|\n+")
_LIST_MARK_RE = re.compile(r"^\s*(?:[-*•·+]|\(?\d{1,2}[.)、]|\(?[a-h][.)]|[一二三四五六七八九十]+[、.])\s*")
_SPEAKER_RE = re.compile(r"^\s*(?:\*\*)?[A-Z][\w .'-]{0,30}(?:\s*\([^)]{0,30}\))?(?:\*\*)?\s*:\s+\S")
_ZH_SPEAKER_RE = re.compile(r"^\s*[\u4e00-\u9fff]{1,6}[:：]\s*\S")

_YOU_RE = re.compile(r"\b(you|your|yours|you're|you've|you'd|yourself|u|ur)\b", re.IGNORECASE)
_EN_REQUEST_RE = LiteralGate(re.compile(
    r"\b(please|kindly|pls)\b[^.?!]{0,40}\b(provide|share|tell|send|give|let me know|specify|confirm|enter|include|"
    r"list|describe|paste|upload|state|mention|clarify|indicate|add|fill)\b|"
    r"\b(could|can|would|will|might)\s+(you|u)\s+(please\s+|kindly\s+|also\s+)?(provide|share|tell|send|give|let me "
    r"know|specify|confirm|describe|paste|clarify|indicate|mention|list)\b|"
    r"\blet me know\b|\b(tell|send|give|show) me\b|"
    r"\b(i|we)('ll| will|'d| would)?\s+(also\s+)?need\s+(to know\s+|to have\s+)?(your|the|some|a few|more|a bit)\b|"
    r"\b(it|that) would (be )?help(ful)? (if you|to know|me)\b|\bwhat('s| is| are) your\b|"
    r"\bi('d| would) (like|love) to know\b",
    re.IGNORECASE,
))
_EN_OFFER_RE = LiteralGate(re.compile(
    r"\b(would|do) you (like|want) me to\b|\bshall i\b|\bshould i\b|\bwant me to\b|\bhow (can|may|could) i "
    r"(help|assist)\b|\b(is there )?anything else (i can|you('d| would) like|you need)\b|\bdoes (that|this) "
    r"(help|make sense|work)\b|\bdo you have any (other |more |further |additional )?questions\b|\bfeel free\b|"
    r"\bif you have any (other |more |further |additional )?questions\b|\blet me know if (you|there|this|that|i)\b|"
    r"\bhope (this|that) helps\b",
    re.IGNORECASE,
))
_ZH_QUESTION_RE = re.compile(r"[?？]|吗|呢|多少|几[个位岁号点天]?|哪|什么|是否|怎么|如何|多大|多久|多长")
_ZH_REQUEST_RE = LiteralGate(re.compile(
    r"请(您|你)?(再)?(提供|告诉|发|输入|确认|说明|描述|分享|补充|问|填写|留下|给)|麻烦(您|你)?(提供|告诉|发|说|给)|"
    r"(能否|可否|能不能|可不可以|可以)(请)?(您|你)?(提供|告诉|发|说|给)|告诉我|发(给|一下)?我|(需要|得)(您|你)(的|提供|告诉)|"
    r"(您|你)的.{1,10}是(多少|什么|哪)",
))
_ZH_YOU_RE = re.compile(r"您|你")
_ZH_OFFER_RE = re.compile(
    r"需要我|要不要我|还有(什么|其他|别的)|有什么(可以|能|需要)(帮|为)|请问(您|你)(有什么|需要什么样?的?(帮助|协助))|"
    r"我(可以|能)(为|帮)(您|你)做"
)
_CONTENT_INTRO_RE = LiteralGate(re.compile(
    r"\b(questions?|prompts?)\b[^.!?\n]{0,60}\b(you|to|they|we|that|for)\b[^.!?\n]{0,30}\b(ask|include|use|pose|"
    r"consider)\b|\b(interview|survey|questionnaire|quiz|faq|form|script|example|sample)\b|"
    r"(问卷|采访|面试|调查|示例|样例|例子|范例|题目)",
    re.IGNORECASE,
))
_ASK_INTRO_RE = LiteralGate(re.compile(
    r"\b(please (answer|provide|tell|let me know)|i (have|need) (a few|some)|to (help|assist|tailor|better "
    r"understand|give you|suggest|get started)|clarifying questions|following (information|details|questions))\b|"
    r"(请(回答|提供|告诉)|以下(信息|问题)|为了(更好|帮)|需要(了解|知道))",
    re.IGNORECASE,
))
_PLACEHOLDER_RE = re.compile(
    r"\[(your |the |name|company|first|last|date|insert|recipient|client|customer)[^\]]{0,30}\]|"
    r"\[[A-Z][A-Za-z ]{1,25}\]|【[^】]{1,20}】",
    re.IGNORECASE,
)
_PROSE_INTRO_RE = LiteralGate(re.compile(
    r"\b(here('s| is| are)|below is|i('ve| have) (written|drafted|revised|updated))\b[^\n]{0,80}\b(email|e-mail|letter|"
    r"message|post|posts|script|story|article|draft|version|copy|ad|caption|description|poem|speech|pitch|text|"
    r"response|reply|template|bio|summary|dialogue|conversation|scene|chapter|introduction|paragraph|lyrics|"
    r"tweet|thread|outline|landing page|page|blog)\b",
    re.IGNORECASE,
))
_OWN_VOICE_RE = re.compile(
    r"^\W*(i hope|hope this|let me know|please let me know|feel free|note:|please note|this (email|version|script|"
    r"post|letter|story|message|draft|response)|these (are|should)|if you (have|need|would|want|'d)|would you like|"
    r"do you want|is there anything|i('ve| have) (included|added|made|used|kept|tried)|remember)",
    re.IGNORECASE,
)
_LINE_GATES = GateSet(_ASK_INTRO_RE, _CONTENT_INTRO_RE, _PROSE_INTRO_RE)
_SENTENCE_GATES = GateSet(_EN_OFFER_RE, _EN_REQUEST_RE, _ZH_REQUEST_RE)
FEW_QUESTIONS = 2
"""A direct question with no "you" in it ("Which town is the flat in?") asks the user when the reply asks at
most this many questions (more are likely content: a quiz, a list of questions to ask)."""
_DIRECT_QUESTION_RE = re.compile(r"^\W*(which|what|where|when|how (many|much|old|long)|who|whose)\b", re.IGNORECASE)
LIST_QUESTIONS_AS_CONTENT = 5
"""A list of this many questions or more, with no introduction that asks the user, is content (a questionnaire,
interview questions), not a clarification."""
_RHETORICAL_RE = re.compile(
    r"^\W*(are you (tired|sick|struggling|looking|ready|still|a |an )|have you ever (wondered|felt|experienced|"
    r"wished)|do you (want|wish|feel|struggle|dream|need)|want to\b|looking for\b|tired of\b|struggling\b|"
    r"ready to\b|who says\b|what if\b|why not\b|so,? why wait|need (a|an|help)\b|wish you\b)",
    re.IGNORECASE,
)


def _speaker(line: str) -> bool:
    """A dialogue or labelled line ("Interviewer: ...", "Change orders: ...", "客服：...")."""
    if ":" not in line and "：" not in line:  # both patterns need one
        return False
    return bool(_SPEAKER_RE.match(line) or _ZH_SPEAKER_RE.match(line))


_END_CHAR_RE = re.compile("[.!?;。！？；\n]")


def _split(line: str) -> list[str]:
    stripped = line.strip()
    if not _END_CHAR_RE.search(stripped, 0, len(stripped) - 1):
        # no sentence end before its last character: every split point is in the spaces around it (one sentence)
        return [stripped] if stripped else []
    return [t for s in _SENTENCE_END_RE.split(line) if (t := s.strip())]


@dataclass(slots=True)  # not frozen: made for every sentence of every reply, and a frozen init costs 4x
class _Sentence:
    text: str
    in_content: bool
    group: int
    """Sentences of one line share a group (-1: a list item, whose questions count by `asked_list` only)."""
    asked_list: bool = False
    """An item of a list the assistant introduced as questions for the user ("please answer the following")."""


def _sentences(text: str) -> list[_Sentence]:
    """(sentence, in_content) for every sentence outside code: in_content marks what the assistant writes for
    the user rather than asks it: dialogue and labelled lines, text with template placeholders ("[Your Name]"),
    what follows an introduction of content ("Here's the revised email:") up to the assistant's own voice again,
    and the items of a list of questions introduced as content (questions to ask, an interview, a survey) or,
    with no introduction that asks, of `LIST_QUESTIONS_AS_CONTENT` questions or more (a questionnaire, not a
    clarification)."""
    lines = [line for line in _INLINE_CODE_RE.sub(" ", _CODE_BLOCK_RE.sub("\n", text)).split("\n") if line.strip()]
    out: list[_Sentence] = []
    context = "neutral"
    prose_content = False
    i = 0
    while i < len(lines):
        if not _LIST_MARK_RE.match(lines[i]):
            line = lines[i]
            if prose_content and _OWN_VOICE_RE.search(line):
                prose_content = False
            could = _LINE_GATES.could(line)
            context = _context(line, could)
            parts = _split(line)
            many = context != "ask" and sum(("?" in x or "？" in x) for x in parts) >= LIST_QUESTIONS_AS_CONTENT
            out.extend(_Sentence(s, prose_content or many or _speaker(line) or bool(_PLACEHOLDER_RE.search(s)), i)
                       for s in parts)
            prose_content = prose_content or bool(could[2] and _PROSE_INTRO_RE.regex.search(line))
            i += 1
            continue
        block: list[str] = []
        while i < len(lines) and (_LIST_MARK_RE.match(lines[i]) or lines[i][:1] in (" ", "\t")):
            block.append(_LIST_MARK_RE.sub("", lines[i], count=1))
            i += 1
        start = 0
        for j, item in enumerate([*block, ""]):
            if j < len(block):  # an introduction (its `_context`) ends a part of the list; so does the list's end
                could = _LINE_GATES.could(item)
                if _context(item, could) == "neutral":
                    continue
            part = block[start:j]
            questions = sum(("?" in x or "？" in x) for x in part)
            content = prose_content or context == "content" or any(_PLACEHOLDER_RE.search(x) for x in part) or \
                (context == "neutral" and questions >= LIST_QUESTIONS_AS_CONTENT)
            for x in part:
                labelled = _speaker(x) and context != "ask"
                out.extend(_Sentence(s, content or labelled, -1, context == "ask") for s in _split(x))
            if j < len(block):
                out.extend(_Sentence(s, prose_content, i * 1000 + j) for s in _split(block[j]))
                context = _context(block[j], could)
            start = j + 1
    return out


def _context(line: str, could: tuple[bool, ...]) -> str:
    """`could`: the line's `_LINE_GATES` (ask intro, content intro, prose intro)."""
    if could[0] and _ASK_INTRO_RE.regex.search(line):
        return "ask"
    if could[1] and _CONTENT_INTRO_RE.regex.search(line):
        return "content"
    return "neutral"


def is_request(sentence: str) -> bool:
    """The sentence asks the user for something (a question to them, or a request), and is no offer."""
    unquoted = _QUOTED_RE.sub(" ", sentence)
    return _is_request(unquoted, _SENTENCE_GATES.could(unquoted))


def _is_request(unquoted: str, could: tuple[bool, ...]) -> bool:
    """`is_request` of a sentence with its quotes cut out (`_QUOTED_RE`); `could`: its `_SENTENCE_GATES`."""
    if not unquoted.strip():
        return False
    if _CJK_RE.search(unquoted):
        if _ZH_OFFER_RE.search(unquoted):
            return False
        if could[2] and _ZH_REQUEST_RE.regex.search(unquoted):
            return True
        return bool(_ZH_QUESTION_RE.search(unquoted) and (_ZH_YOU_RE.search(unquoted) or "？" in unquoted
                                                           or "?" in unquoted))
    if _RHETORICAL_RE.search(unquoted):
        return False
    if could[0] and _EN_OFFER_RE.regex.search(unquoted) and \
            not _EN_REQUEST_RE.search(_EN_OFFER_RE.regex.sub(" ", unquoted)):
        return False
    if could[1] and _EN_REQUEST_RE.regex.search(unquoted):
        return True
    return "?" in unquoted and bool(_YOU_RE.search(unquoted))


def _question(unquoted: str, could: tuple[bool, ...]) -> bool:
    """A question to the user, of a sentence with its quotes cut out, that is no offer or rhetoric."""
    return ("?" in unquoted or "？" in unquoted) and not _RHETORICAL_RE.search(unquoted) and not \
        (could[0] and _EN_OFFER_RE.regex.search(unquoted)) and not _ZH_OFFER_RE.search(unquoted)


def request_sentences(reply: str) -> list[str]:
    """The sentences of `reply` that ask the user something (see the module docstring): requests, and the other
    questions of a line that holds a request or of a list the assistant introduced as questions for the user
    ("What subject is it for? What is the target age range?")."""
    sentences = [s for s in _sentences(reply) if not s.in_content]
    unquoted = [_QUOTED_RE.sub(" ", s.text) for s in sentences]  # once for both readings
    could = [_SENTENCE_GATES.could(text) for text in unquoted]
    requests = [_is_request(text, gates) for text, gates in zip(unquoted, could, strict=True)]
    questions = [_question(text, gates) for text, gates in zip(unquoted, could, strict=True)]
    asking = {s.group for s, request in zip(sentences, requests, strict=True) if request and s.group >= 0}
    few = sum(questions) <= FEW_QUESTIONS
    return [s.text for s, request, question in zip(sentences, requests, questions, strict=True) if request or (
        (s.group in asking or s.asked_list or (few and _DIRECT_QUESTION_RE.match(s.text))) and question)]

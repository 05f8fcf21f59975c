"""Rules that name the recovery strategy a reply opens with, after the user complained.

The six strategies of the UXBench method (Task 3), labelled on the opening behaviour of the reply:
apology, agreement (validates the complaint), error_diagnosis (explains the error or states a limit of
what the assistant knows or can do), humor (de-escalates), direct_fix (gives the correction or next step
straight away) and clarification (asks what was wrong or what is needed).

The opening is the first sentence (with the second when the first is shorter than `MIN_OPENING` chars),
at most `MAX_OPENING` chars. The strategy whose cue occurs first in it wins; on a tie the order of
`STRATEGIES` decides. An opening without a cue is clarification when it ends with a question mark, else
direct_fix (the reply starts with the content itself). Cue lists (Chinese and English) were written for
this project; they are deliberately short, so read `cue` to see why a reply got its label. An English cue is a
whole word unless it ends with `*` (a stem: `apologi*` matches apologise, apologize, apologies).

Used by `uxbench mine audit` and by Task 3, which labels every generated recovery with these rules.
"""

from __future__ import annotations

import re
from typing import Literal

Strategy = Literal["apology", "agreement", "error_diagnosis", "humor", "direct_fix", "clarification"]
STRATEGIES: tuple[Strategy, ...] = (
    "apology", "agreement", "error_diagnosis", "humor", "clarification", "direct_fix",
)
MIN_OPENING = 12
MAX_OPENING = 160

CUES: dict[Strategy, tuple[str, ...]] = {
    "apology": (
        "抱歉", "对不起", "不好意思", "致歉", "我的错", "是我的疏忽", "是我疏忽",
        "sorry", "apologi*", "my apologies", "my bad", "my mistake", "pardon me",
    ),
    "agreement": (
        "您说得对", "你说得对", "您说的对", "你说的对", "您说得没错", "你说得没错", "您是对的", "你是对的",
        "确实", "没错", "是的", "理解您的", "明白您的", "感谢指出", "谢谢指出", "感谢您的指正", "谢谢指正",
        "you're right", "you are right", "you're correct", "you are correct", "good point", "fair point",
        "good catch", "thanks for pointing", "thank you for pointing", "i understand your frustration",
        "that's right", "indeed",
    ),
    "error_diagnosis": (
        "之前的回答", "刚才的回答", "上面的回答", "上一个回答", "我之前", "我刚才", "我误解", "我理解错",
        "理解有误", "理解错了", "混淆了", "搞混了", "原因是", "是因为", "出错", "我无法", "我没有办法",
        "无法访问", "无法联网", "我的知识", "实时信息", "训练数据",
        "i misunderstood", "i misread", "i confused", "i mixed up", "my previous answer", "my earlier answer",
        "the previous answer", "my last answer", "the error", "the mistake was", "i don't have access",
        "i do not have access", "i can't access", "i cannot access", "i can't browse", "knowledge cutoff",
        "training data", "as an ai",
    ),
    "humor": (
        "哈哈", "嘿嘿", "哎呀", "糟糕", "翻车", "尴尬了", "😅", "😂", "🙈", "🤦", "😄",
        "oops", "whoops", "haha", "lol", "yikes",
    ),
    "clarification": (
        "请问", "您是指", "你是指", "您是想", "你是想", "能否具体", "可以具体", "具体是指", "哪一部分", "哪里不对",
        "您希望", "方便告诉", "能告诉我", "could you clarify", "can you clarify", "do you mean", "did you mean",
        "could you tell me", "can you tell me", "which part", "what exactly", "could you share",
        "can you share", "could you specify",
    ),
    "direct_fix": (
        "以下是", "下面是", "正确的", "更正", "修改后", "改正", "应该是", "答案是", "具体步骤", "步骤如下",
        "here is", "here's", "here are", "the correct", "corrected", "the answer is", "try this",
    ),
}

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)\s")


def _pattern(cue: str) -> str:
    stem = cue.endswith("*")
    cue = cue.rstrip("*")
    escaped = re.escape(cue)
    if cue.isascii() and cue[:1].isalnum():
        return rf"(?<![a-z0-9]){escaped}" + (r"(?![a-z0-9])" if cue[-1:].isalnum() and not stem else "")
    return escaped


_PATTERNS: dict[Strategy, re.Pattern[str]] = {
    name: re.compile("|".join(_pattern(c) for c in sorted(cues, key=len, reverse=True)))
    for name, cues in CUES.items()
}


def opening(text: str) -> str:
    """The reply's first sentence (two when the first is very short), lower-cased, at most MAX_OPENING."""
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip()) if p and p.strip()]
    if not parts:
        return ""
    head = parts[0]
    if len(head) < MIN_OPENING and len(parts) > 1:
        head = f"{head} {parts[1]}"
    return head[:MAX_OPENING].lower().translate(_APOSTROPHES)


def classify_opening(text: str) -> tuple[Strategy, str | None]:
    """(strategy, the cue that decided it, or None when no cue matched)."""
    head = opening(text)
    best: tuple[int, int, Strategy, str] | None = None
    for rank, name in enumerate(STRATEGIES):
        match = _PATTERNS[name].search(head)
        if match and (best is None or (match.start(), rank) < best[:2]):
            best = (match.start(), rank, name, match.group())
    if best is not None:
        return best[2], best[3]
    if head.rstrip().endswith(("?", "？")):
        return "clarification", None
    return "direct_fix", None

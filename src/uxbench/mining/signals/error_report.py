"""Error reports about the assistant's own code or instructions.

On real logs the most common way to say "your answer did not work" names no judgement at all: the user
pastes what the computer said ("Traceback ...", "TypeError: ...", "command not found", "Response code:
400", "报错：...") or says it is still failing ("still getting", "same error", "还是报错"). Such a message
is a complaint about the reply when the reply gave code or steps to follow; after a reply that asked for
the error message, or one without code or steps, it is more often new input, so it scores lower.
"""

from __future__ import annotations

import re

from uxbench.mining.signals.fastre import Group, Prefiltered, WordRegex, has_han

_F = re.IGNORECASE

_HEAD = Group()
# What a program, compiler, shell or server prints when it fails.
_MACHINE_CASED = Prefiltered(
    r"Traceback \(most recent call last\)|\b[A-Z][A-Za-z]+(?:Error|Exception|Warning)\b\s*[:(]|\bNaN\b"
)
_MACHINE = WordRegex(
    r"(?:error|fatal|exception|warning)\s*(?:\[[\w-]+\]|[a-z]{1,4}\d{2,5})?\s*:\s*(?![\d.,%-]+(?:\s|$))\S"
    r"|(?:is|was|are) not (?:defined|a function|iterable|callable|subscriptable|recognized|found|declared)\b"
    r"|not defined\b|undefined (?:reference|method|variable|index|offset|is not)\b"
    r"|command not found\b|no such (?:file|directory|table|column|module)\b|module not found\b"
    r"|cannot (?:find|read propert|resolve|import|open|convert|be applied)|could not (?:find|resolve|load"
    r"|open|connect)\b|unexpected (?:token|end of|eof|indent|character|keyword)\b|syntax ?error\b"
    r"|segmentation fault\b|permission denied\b|stack ?trace\b|exit(?:ed with)? (?:code|status) [1-9]"
    r"|(?:response|status|http|error) code:? ?[45]\d\d\b|[45]\d\d (?:bad request|unauthorized|forbidden"
    r"|not found|internal server error)\b|did not match any\b|failed to (?:compile|build|load|connect"
    r"|execute|open|parse|resolve|install)\b|compil(?:e|ation|er) (?:error|failed)\b|build failed\b"
    r"|null ?pointer\b|out of (?:range|bounds|memory)\b|missing (?:\d+ )?required\b",
    group=_HEAD,
)
# The user saying that what they were given fails.
_REPORT_EN = WordRegex(
    r"(?:i'?m|i am|im|am) (?:still )?(?:getting|seeing|receiving|having)\b[^.?!\n]{0,40}"
    r"\b(?:error|exception|issue|problem|warning|message|output|result)s?\b"
    r"|\b(?:i )?(?:got|get|getting|gets|received|receive|see|seeing) (?:this|an|the|a|these|following|same"
    r"|another|new|some)\b[^.?!\n]{0,20}\b(?:error|exception|warning)s?\b"
    r"|\b(?:it|this|that|code|script|program|command|query|function) (?:gives|gave|returns|returned|throws|threw"
    r"|raises|raised|shows|showed|says|said|prints|printed|outputs|fails|failed|crashes|crashed|errors)"
    r"\b[^.?!\n]{0,30}(?:error|exception|fail|crash|wrong|instead|nothing|empty|blank|null|none)"
    r"|\bsame (?:error|issue|problem|result|output|exception|message)\b"
    r"|\bstill (?:getting|get|have|having|see|seeing|shows?|showing|returns?|returning|fails?|failing"
    r"|crash(?:es|ing)?|errors?|throws?|gives?|giving|doesn'?t|does not|don'?t|isn'?t|not|no|can'?t|cannot"
    r"|broken|wrong|incorrect|the same|blank|empty|nothing|missing|stuck)\b"
    r"|\b(?:didn'?t|did not|doesn'?t|does not|won'?t|will not|isn'?t|not) (?:work|working|compile|run|build"
    r"|load|start|install|change|help|fix|solve)\b|\b(?:error|crash|fail)s? again\b",
    group=_HEAD,
)
_REPORT_ZH = re.compile(
    r"报错|报了?(?:个|一个)?错|出错|错误[:：]|提示[^，,。]{0,12}(?:错误|失败|找不到|不存在|异常|未定义|无效)"
    r"|异常[:：]|运行(?:不了|失败|出错|不起来|不通)|编译(?:不过|失败|出错|不通过)|跑不(?:了|起来|通)"
    r"|还是(?:报错|不行|不对|一样|失败|打不开|连不上|用不了|没反应|没用|闪退|出错)|一样的(?:错|问题|结果)"
    r"|闪退|没反应|打不开|连不上|装不上|找不到(?:这个|该|那个)?(?:按钮|选项|菜单|入口|文件|命令|模块)"
    r"|(?:不存在|未定义|无法识别)",
)
# The reply handed over something to run or follow.
_CODE = re.compile(
    r"```|^(?: {4}|\t)\S|`[^`\n]{2,}`|^\s*(?:\$|>>>|PS>|#include|import |from \S+ import|def |class |function "
    r"|SELECT |public |const |let |var )",
    re.MULTILINE,
)
_STEPS = re.compile(
    r"(?:^\s*(?:\d+[.)、]|[-*•]|step \d+|第[一二三四五六七八九十\d]+步)\s*\S.*\n){2,}"
    r"|第[一二三]步|首先[^。]{0,60}(?:然后|再|接着)|\b(?:first|then|next|finally),? (?:open|go|click|run|type"
    r"|install|select|press|restart|add|change|set|enter|navigate)\b|请(?:您)?(?:先|尝试|检查|重启|打开|点击|进入)"
    r"|建议(?:您)?(?:先|尝试|检查|重启|清除|更换|卸载)",
    re.MULTILINE | _F,
)
# The reply asked for the error: the user's paste answers it.
_ASKED_FOR_ERROR = re.compile(
    r"\b(?:share|send|post|paste|provide|show)(?: me)? (?:the|your)?\s*(?:full |complete |exact )?(?:error"
    r"|traceback|stack|output|log)|\bwhat (?:error|message|output) (?:do|did) you\b|\bwhich error\b"
    r"|(?:报错|错误)(?:信息|提示|截图)?(?:发|贴|告诉)|(?:发|贴|告诉)(?:我|一下)?[^。]{0,8}(?:报错|错误|提示)"
    r"|有什么(?:提示|报错)|提示是什么|什么提示",
    _F,
)

SCORE_AFTER_CODE = 0.85
"""An error report right after a reply with code or steps: a complaint about that reply."""
SCORE_WITHOUT_CODE = 0.4
"""An error report after a reply with neither: as often new input as a complaint."""
SCORE_ASKED = 0.15
"""The reply asked for the error: the message answers it."""
_HEAD_CHARS = 1500
_HAS_LATIN = re.compile(r"[A-Za-z]")


def reply_gives_code_or_steps(reply: str) -> bool:
    return _CODE.search(reply) is not None or _STEPS.search(reply) is not None


_ASKING = (("share", "send", "post", "paste", "provide", "show", "what", "which"),
           ("error", "traceback", "stack", "output", "log", "message"))
"""Every match of `_ASKED_FOR_ERROR`'s English part holds, in any case, a word of each tuple."""


def _asked_for_error(tail: str) -> bool:
    """``_ASKED_FOR_ERROR.search(tail) is not None``. An ASCII text cannot hold the Chinese part and, lower-cased,
    must hold a word of each of `_ASKING` for the English part (case-insensitive matching of ASCII letters is
    lower-casing them): most replies fail that test, for less than the regex over 600 characters costs."""
    if tail.isascii():
        low = tail.lower()
        if not all(any(word in low for word in words) for words in _ASKING):
            return False
    return _ASKED_FOR_ERROR.search(tail) is not None


def find_error_report(next_user: str, reply: str) -> tuple[float, str] | None:
    """(score, evidence) when the user's message reports an error or a failure, else None."""
    head = next_user[:_HEAD_CHARS]
    latin = _HAS_LATIN.search(head) is not None
    m = ((_REPORT_EN.search(head) if latin else None) or (_REPORT_ZH.search(head) if has_han(head) else None)
         or (_MACHINE_CASED.search(head) or _MACHINE.search(head) if latin else None))
    if m is None:
        return None
    snippet = head[max(0, m.start() - 10): m.end() + 10].strip().replace("\n", " ")
    tail = reply[-600:]
    if _asked_for_error(tail):
        return SCORE_ASKED, f"error report '{snippet}' (the reply asked for it)"
    if reply_gives_code_or_steps(reply):
        return SCORE_AFTER_CODE, f"error report '{snippet}' after code or steps"
    return SCORE_WITHOUT_CODE, f"error report '{snippet}'"

"""Complaints about the reply, in Chinese and English.

Neutral and praising phrases that contain complaint-like characters (不错, 没错, 错误码, 我记错了,
"not bad", "nothing wrong", "you're right") are blanked out before the complaint patterns run, so
they can never match. The patterns are about the *reply* being wrong, useless or off-target, not about
the user's own problem ("my code gives an error" before any reply is a question, not a complaint).
"""

from __future__ import annotations

import re

_F = re.IGNORECASE

_NEUTRAL_ZH = re.compile(
    r"不错|没错|错误码|错误代码|错误信息|错误提示|报错信息|错过|纠错|容错|试错|错题|错别字|对错|交错|错开"
    r"|错位|错峰"
    r"|对不对|不对称|有没有错|是不是错|哪里错|"
    r"我(?:之前|刚才|刚刚|自己|也)?(?:记|打|写|说|看|搞|弄|输|算|拼|理解|听)错"
    r"|垃圾(?:分类|桶|邮件|回收|短信|食品|袋|站|车|处理|清理|场)|没用过|没有用过|无语言|服了你了"
)
_NEUTRAL_EN = re.compile(
    r"\bnot (?:bad|wrong|a problem|an issue)\b|\bnothing (?:wrong|bad|incorrect)\b|\bno (?:problem|worries"
    r"|issue)\b"
    r"|\bnot (?:too|that) (?:bad|wrong)\b|\b(?:you'?re|you are|that'?s|that is|it'?s) (?:right|correct"
    r"|true)\b"
    r"|\bmy (?:mistake|bad|fault)\b|\bi was wrong\b|\bwhat(?:'s| is) wrong with (?:my|this|the|it|using)\b"
    r"|\banything wrong\b|\bwrong with (?:using|my)\b|\berror (?:code|message|handling)\b"
    r"|\bcan'?t go wrong\b",
    _F,
)

_COMPLAINT_ZH = re.compile(
    # denial of the reply
    r"不对|不是这样|不是这个|不正确|不准确|不是我(?:要|想|问)的|我要的不是|我问的是|错了|错的|搞错|弄错|说错"
    r"|算错|写错"
    r"|答错|翻译错|有误|你错|根本(?:不是|没|不)|明明是|胡说|胡扯|瞎说|乱说|瞎编|乱编|胡编|编的吧|扯淡"
    r"|一派胡言"
    # useless / off target
    r"|答非所问|文不对题|牛头不对马嘴|驴唇不对马嘴|没用|没有用|毫无用处|不管用|不好使|没效果|不起作用|没解决"
    r"|没有解决"
    r"|等于没说|说了半天|都没(?:回答|推荐|给|说到|提到|解决)|没(?:有)?回答|没帮助|没啥帮助|废话|跑题|偏题"
    r"|离题"
    r"|你(?:根本|完全|还是|并)?(?:没|没有)(?:理解|明白|懂|看懂|听懂|看|读)|没(?:理解|明白|get到)我的意思"
    r"|理解错|会错意|误解了?我"
    # frustration and meta-complaints about the assistant
    r"|无语|服了|离谱|什么鬼|啥玩意|搞什么|你行不行|垃圾|弱智|智障|蠢|笨|白问|气死|有病|敷衍|个寂寞"
    r"|还是(?:不对|不行|错|一样|没|老样子|那样)|又是(?:这个|这样|一样)|怎么又|重复了|一直重复|同样的回答"
    r"|换个(?:回答|答案)"
    r"|认真(?:一点|点)|别(?:再)?(?:啰嗦|废话|扯|瞎说|编)|太(?:啰嗦|啰唆|笼统|敷衍|长了|空泛)|说重点|打广告"
    r"|全是广告|你回答的什么"
    r"|我要的是[^，,。]{0,12}[，,]\s*(?:而)?不是|(?:跟|和|与)[^，,。]{0,8}(?:没|没有|毫无|有什么)关系|不相关"
    r"|文不对"
    r"|这(?:些|几个|几部|几本|几首)?(?:都|全都|压根|根本)不是|全都不是|压根不是"
    r"|你在说什么|看不懂你|不是人话|什么玩意|不靠谱|不行啊|还是报错|又报错|报错了|运行不了|跑不起来|用不了"
)
_SUBJ = (
    r"(?:that|this|it|you|your (?:answer|code|reply|response|solution|math|calculation)"
    r"|answer|code|regex|query|summary|translation|result|reply|response|solution|output|formula|math|calculation|function|script)"
)
_COMPLAINT_EN = re.compile(
    rf"\b{_SUBJ}(?:'s|'re| is| are| was| were)"
    r"(?: (?:still|just|completely|totally|all|clearly|definitely|so|plain|simply|obviously|also))?"
    r" (?:wrong|incorrect|false|inaccurate|broken|useless|nonsense|garbage"
    r"|not (?:right|correct|true|accurate|what i)|not it)\b"
    r"|^\s*(?:wrong|incorrect|nope|false)\b|\bwrong (?:answer|again|result|number|language|file|one)\b"
    r"|\b(?:doesn'?t|does not|didn'?t|did not|won'?t|will not|isn'?t|is not) (?:even )?(?:work|working"
    r"|compile|run"
    r"|help|answer|make (?:any )?sense|give me|do what)\b|\bnot working\b|\bstill (?:doesn'?t|not|broken"
    r"|wrong|fails)\b"
    r"|\b(?:i|still) (?:get|got|am getting|getting) (?:an|the|a|this|same|the same) (?:error|exception)\b"
    r"|\b(?:throws|gives|raises|returns) (?:me )?(?:an|the same) (?:error|exception)\b"
    r"|\bnot what i (?:asked|wanted|meant|said|need|needed|was looking for)\b|\bthat'?s not it\b"
    r"|\b(?:not helpful|unhelpful|useless|pointless|nonsense|gibberish|irrelevant|off[- ]topic)\b"
    r"|\bmakes? no sense\b|\b(?:you )?(?:just )?(?:said|told me) nothing\b|\byou (?:ignored|missed|skipped"
    r"|forgot"
    r"|didn'?t (?:read|answer|understand|listen|follow|get|do|even))\b|\bdidn'?t answer\b"
    r"|\bare you (?:even )?(?:listening|reading|serious|kidding|a bot|stupid)\b|\bcan'?t you read\b"
    r"|\bdid you (?:even )?read\b|\bread (?:my|the) question\b|\bi (?:already )?(?:said|told you)\b"
    r"|\bi asked (?:you )?(?:for|about)\b|\bsame (?:answer|thing|response) again\b|\byou keep (?:saying"
    r"|repeating"
    r"|giving|ignoring)\b|\bstop (?:repeating|rambling|apologi[sz]ing|lying)\b|\btoo (?:long|verbose|wordy"
    r"|vague)\b"
    r"|^\s*ugh\b|\bwtf\b|\bseriously\?|\bcome on\b|\b(?:garbage|trash|terrible|awful|worst)\b"
    r"|\bhallucinat|\bmade (?:that|it|this) up\b|\bmaking (?:stuff|things|it) up\b|\byou'?re lying\b"
    r"|\bnot true\b"
    r"|\bbullshit\b|(?<!not )(?<!not a )\b(?:bad|poor|wrong) (?:answer|response|reply|summary|translation"
    r"|code|job)\b"
    r"|\b(?:returns?|gives?|shows?|prints?|outputs?) (?:me )?(?:the |a |an )?[\w-]+,? not (?:the |a "
    r"|an )?[\w-]+\b"
    r"|\bi (?:wanted|asked for|need|needed) [^,.]{1,30}, not\b"
    r"|\byou made a mistake\b|\bthere'?s a mistake\b|\bmistake in (?:your|the|this)\b",
    _F,
)


def _blank(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def find_complaint(text: str, max_chars: int = 300) -> str | None:
    """The complaint snippet in a user message, or None. Messages over `max_chars` are not tested:
    a long message is a new request or pasted material far more often than a complaint."""
    if not text.strip() or len(text) > max_chars:
        return None
    masked = _blank(_NEUTRAL_EN, _blank(_NEUTRAL_ZH, text))
    m = _COMPLAINT_ZH.search(masked) or _COMPLAINT_EN.search(masked)
    if m is None:
        return None
    start, end = max(0, m.start() - 6), min(len(text), m.end() + 6)
    return text[start:end].strip()

"""Complaints about the reply, in Chinese and English.

Neutral and praising phrases that contain complaint-like characters (不错, 没错, 错误码, 我记错了,
"not bad", "nothing wrong", "you're right") are blanked out before the complaint patterns run, so
they can never match. The patterns are about the *reply* being wrong, useless or off-target, not about
the user's own problem ("my code gives an error" before any reply is a question, not a complaint).

Scores: an explicit judgement of the reply (the tier-1 patterns: "that's wrong", "not what I asked", "答非所问",
"还是不行") scores `SCORE_EXPLICIT`; a complaint in words no keyword list expects (tier 2: "you said A and
now B", "I'm confused", "you stopped halfway", "that's not how it works", "No, <correction>", "try again",
escalation demands such as "转人工" or "我要投诉", sarcasm and curses aimed at the company or the bot, "我早就…")
scores `SCORE_IMPLICIT`; a weaker hint (tier 3: "I don't think...", "close, but") `SCORE_HINT`. Longer
messages are tested on their opening only (`complaint_max_chars`): a long message is a new request or
pasted material far more often than a complaint, but a complaint opens it when there is one.
"""

from __future__ import annotations

import re

from uxbench.mining.signals.fastre import OPENING, WordRegex, blank, has_han, lowered
from uxbench.mining.snippets import window

_CONTEXT_CHARS = 6
"""Characters of context kept on each side of a complaint in its evidence (trimmed to whole words)."""

_NEUTRAL_ZH = re.compile(
    r"不错|没错|错误码|错误代码|错误信息|错误提示|报错信息|错过|纠错|容错|试错|错题|错别字|对错|交错|错开"
    r"|错位|错峰"
    r"|对不对|不对称|有没有错|是不是错|哪里错|"
    r"我(?:之前|刚才|刚刚|自己|也)?(?:记|打|写|说|看|搞|弄|输|算|拼|理解|听|发|填|选|传)错|(?:刚才|不好意思|抱歉)[^，,。]{0,4}(?:发|打|写|填|输)错"
    r"|垃圾(?:分类|桶|邮件|回收|短信|食品|袋|站|车|处理|清理|场)|没用过|没有用过|无语言|服了你了"
    r"|(?:如果|要是|万一|假如|的话|担心|怕)[^，,。？?]{0,8}(?:还是)?(?:不行|没用|不管用|不对|失败)"
    r"|(?:不|没|没有|不会|毫不|绝不|并不|一点也不|一点都不)(?:失望|后悔|上当)|没得说|不值一提"
    r"|(?:不行|没用|不管用|失败)的话|投诉(?:进度|流程|渠道在哪|电话是|结果)|人工客服的|人工(?:服务)?(?:时间|几点)"
)
_NEUTRAL_EN = WordRegex(
    r"\bnot (?:bad|wrong|a problem|an issue)\b|\bnothing (?:wrong|bad|incorrect)\b|\bno (?:problem|worries"
    r"|issue)\b"
    r"|\bnot (?:too|that) (?:bad|wrong)\b|\b(?:you'?re|you are|that'?s|that is|it'?s) (?:right|correct"
    r"|true)\b"
    r"|\bmy (?:mistake|bad|fault)\b|\bi was wrong\b|\bwhat(?:'s| is) wrong with (?:my|this|the|it|using)\b"
    r"|\banything wrong\b|\bwrong with (?:using|my)\b|\berror (?:code|message|handling)\b"
    r"|\bcan'?t go wrong\b",
    group=OPENING,
)

_COMPLAINT_ZH = re.compile(
    # denial of the reply
    r"不对|不是这样|不是这个|不正确|不准确|不是我(?:要|想|问)的|我要的不是|我问的是|错了|错的|搞错|弄错|说错"
    r"|算错|写错"
    r"|答错|翻译错|有误|你错|根本(?:不是|没|不)|明明是|胡说|胡扯|瞎说|乱说|瞎编|乱编|胡编|编的吧|扯淡"
    r"|一派胡言"
    # useless / off target
    r"|答非所问|文不对题|牛头不对马嘴|驴唇不对马嘴|没(?:有)?用(?:啊|的|了|呀|嘛)?(?=$|[，,。！!？?~…\s])|毫无用处|不管用|不好使|没效果|不起作用|没解决"
    r"|没有解决"
    r"|等于没说|说了半天|都没(?:回答|推荐|给|说到|提到|解决)|没(?:有)?回答|没帮助|没啥帮助|废话|跑题|偏题"
    r"|离题"
    r"|你(?:根本|完全|还是|并)?(?:没|没有)(?:理解|明白|懂|看懂|听懂|看|读)|没(?:理解|明白|get到)我的意思"
    r"|理解错|会错意|误解了?我"
    # frustration and meta-complaints about the assistant
    r"|无语|服了|离谱|什么鬼|啥玩意|搞什么|你行不行|垃圾|弱智|智障|(?:你|真|好|太)(?:蠢|笨)|蠢货|笨蛋|白问|气死|有病|敷衍|个寂寞"
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
_COMPLAINT_EN = WordRegex(
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
    r"|\bdid you (?:even )?read\b|\bread (?:my|the) question\b|(?<!what )(?<!of what )\bi (?:already )?(?:said"
    r"|told you)\b"
    r"|\bi asked (?:you )?(?:for|about)\b|\bsame (?:answer|thing|response) again\b|\byou keep (?:saying"
    r"|repeating"
    r"|giving|ignoring)\b|\bstop (?:repeating|rambling|apologi[sz]ing|lying)\b|\btoo (?:long|verbose|wordy"
    r"|vague)\b"
    r"|^\s*ugh\b|\bwtf\b|\bseriously\?|\bcome on\b"
    r"|^\W*(?:\w+\W+){0,5}(?:garbage|trash|terrible|awful|worst)\b"
    r"|\bhallucinat|\bmade (?:that|it|this) up\b|\bmaking (?:stuff|things|it) up\b|\byou'?re lying\b"
    r"|\bnot true\b"
    r"|\bbullshit\b|(?<!not )(?<!not a )\b(?:bad|poor|wrong) (?:answer|response|reply|summary|translation"
    r"|code|job)\b"
    r"|\b(?:returns?|gives?|shows?|prints?|outputs?) (?:me )?(?:the |a |an )?[\w-]+,? not (?:the |a "
    r"|an )?[\w-]+\b"
    r"|\bi (?:wanted|asked for|need|needed) [^,.]{1,30}, not\b"
    r"|\byou made a mistake\b|\bthere'?s a mistake\b|\bmistake in (?:your|the|this)\b",
    group=OPENING,
)


_IMPLICIT_ZH = re.compile(
    # rebuttals: the user already did it, or the reply's premise is false
    r"我(?:早就|已经|都|明明|刚刚?|之前)(?:[^，,。！!？?]{0,6})(?:试|说|做|弄|发|实名|注销|确认|重启|重装|卸载|付|交|填|提交"
    r"|检查|插|换|查|找)(?:过|了)"
    r"|(?:都|全都)(?:试|找|做|弄|查|看|换)过了|根本(?:没有|找不到|没人|不是|不行|没用)|什么都没(?:写|有|说)"
    r"|明明(?:是|付|有|写|说)|你(?:刚才|之前|上面|前面)?(?:不是)?说(?:的|过)?[^。？?]{0,20}(?:现在|又|怎么|结果|可是|但是)"
    r"|一会(?:儿)?说[^。]{0,16}一会(?:儿)?(?:又)?说|前后矛盾|自相矛盾|到底(?:哪个对|能不能|是哪个|行不行)"
    r"|你确定[？?吗]|你没看|没看(?:我|清)|不是问这个|我不是(?:问|说|要)|答的不是|说了跟没说|跟没说一样|说了也白说"
    r"|有什么用|记录有什么用|找[^，,。]{0,6}有什么用|(?:只|才)(?:写|给|说)了(?:一半|几)|写到一半|没写完|(?:就|怎么|突然)停了"
    r"|(?:字数|数量|长度)[^，,。]{0,4}(?:不够|太少)|远远不够|少了(?:一|个|冒号|括号|分号)|缺了|没考虑|(?:弄|写|说|算)反了|反了吧"
    r"|(?:编|抄)的吧|不对吧|哪(?:部|个|里)是[^？?]{0,8}[？?]|跑不了|不能用|用不了"
    # escalation and complaint demands
    r"|转人工|(?:要|找|叫|换|给我)(?:个)?(?:真人|人工|活人)|人工客服[！!]|^人工[！!。]*$|叫你们(?:主管|领导|经理|负责人)"
    r"|(?:找|要见|叫)你们(?:主管|领导|经理)|我要投诉|投诉你们|给我(?:一个)?投诉|12315|工信部|消协|消费者协会"
    r"|曝光你们|给(?:你们)?差评|赶紧退"
    # curses and sarcasm aimed at the company or the bot
    r"|骗子|坑(?:人|爹|钱)|黑心|流氓|破(?:服务|公司|平台|客服|玩意)|什么破|复读机|机器人(?:吧|吗|[？?])|你是机器人"
    r"|跟(?:机器人|你)说不(?:清|明白|通)|听不懂人话|说人话|能不能听懂|就会说|只会说|又是这套|这套话术|套模板|复制粘贴模板"
    # plain negative judgements, of the service or of the answer
    r"|失望|不满意|差劲|(?:服务|态度|质量|体验|效果|回答|答案)[^，,。！!]{0,3}(?:太|很|真|非常|特别|极其)差|后悔|上当|再也不(?:买|用|来|会)"
    r"|(?<!得)不推荐|别买|恶心|糟糕|太烂|真烂|烂透|不值(?:得|这个价|这个钱)?(?=$|[，,。！!？?])|坑"
    r"|每次都(?:这么|让|说)|上次(?:也|就)(?:是这么|这么|说)|(?:说|问|发|打|讲)了(?:三|两|几|好几|N|\d+)(?:遍|次)|真是谢谢(?:你|您)?了"
    r"|(?:真是|太)牛了|服务(?:真)?(?:到位|好)啊|就这样(?:随便|对待)|就这？|打发我|搪塞|踢皮球|推来推去|一直拖|就是在拖|拖着"
    r"|有人(?:看|管|处理)吗|有没有人(?:管|理|处理|回复|看)|还没(?:解决|处理|到|退|回复)|等了[^，,。]{0,6}(?:天|周|星期|月|小时)",
)
_IMPLICIT_EN = WordRegex(
    r"\byou (?:said|told me|mentioned|wrote|claimed|stated|just said)\b[^?!]{0,160}?\b(?:but|and (?:now|then)"
    r"|yet|however|now you|then you)\b"
    r"|\bi'?m (?:a bit |a little |so |really |very |still |now |kind of |kinda )?confused\b|\bthis is confusing\b"
    r"|\b(?:you|it) (?:stopped|cut off|got cut off|didn'?t finish|did not finish|never finished)\b|\bstopped "
    r"(?:halfway|in the middle|mid)\b|\b(?:is|was|it'?s) (?:incomplete|unfinished|cut off)\b"
    r"|\bthat'?s not (?:how|what|why|where|when|correct|right|true|accurate|the (?:case|point|question))\b"
    r"|^\s*(?:no|nope|nah)\b[,.!]*\s*(?:sir\b|you\b|it\b|that\b|this\b|the\b|i (?:said|meant|asked|want|need)"
    r"|actually\b|wrong\b|not\b|\d)"
    r"|\b(?:still|again)\b[^.?!\n]{0,15}\bsame\b|\bsame (?:error|issue|problem|mistake)\b"
    r"|\bstill (?:incorrect|inaccurate|wrong|not|no|can'?t|cannot|doesn'?t|isn'?t|missing|broken|failing)\b"
    r"|(?<!i'll )(?<!let me )(?<!i will )\btry again\b|\bdo it again\b|\bredo (?:it|this|that)\b"
    r"|\byou (?:didn'?t|did not|haven'?t|have not|forgot to|failed to|missed|skipped|left out|ignored|misunderst"
    r"|misread|confused|mixed up)\b"
    r"|\b(?:is|was|are|it'?s|that'?s|this is|but) not (?:correct|right|accurate|true|quite right|complete|what i)"
    r"|\bthe correct (?:answer|recipe|value|one|number|result|way|formula|version|order|name) is\b"
    r"|\b(?:should|would|must) (?:be|have been|say) [^,.;]{1,30},? not\b|\bnot [^,.;]{1,20}, but\b"
    r"|\b(?:mistakes?|errors?|typos?|bugs?) in (?:your|the|this|that)\b|\b(?:i see|i found|i noticed|i spotted"
    r"|there (?:is|are|'s) still|you made) (?:a |an |some |one |two |few |a few |another |more )*(?:mistakes?|errors?"
    r"|typos?|bugs?)\b|\bdoesn'?t (?:look|seem|sound) right\b|\bnot (?:even )?close\b|\bthat'?s (?:incorrect|false)\b"
    r"|\bwhy (?:did|do|would) you (?:say|write|use|give|put|add|change|remove|ignore|repeat|include)\b"
    r"|\byou (?:can'?t|cannot) (?:even|do)\b|\bare you (?:sure|kidding|joking)\b|\b(?:dumb|stupid|idiot|useless"
    r"|lazy|pathetic)\b",
    group=OPENING,
)
_HINT_EN = WordRegex(
    r"\bi don'?t think (?:you|that|this|it|so)\b|\bclose,? but\b|\bnot quite\b|\balmost,? but\b"
    r"|\b(?:wrong|incorrect)\b|\bi (?:still )?don'?t (?:understand|get it|see)\b|\bthat'?s not\b",
    group=OPENING,
)
_HINT_ZH = re.compile(r"还是不(?:太)?(?:明白|懂|理解|清楚)|没看懂|看不懂|不太对|好像不对|似乎不对|唉|哎|呵呵")

SCORE_EXPLICIT = 0.9
SCORE_IMPLICIT = 0.7
SCORE_HINT = 0.35
_ZH_TIERS = ((SCORE_EXPLICIT, _COMPLAINT_ZH), (SCORE_IMPLICIT, _IMPLICIT_ZH), (SCORE_HINT, _HINT_ZH))
_EN_TIERS = ((SCORE_EXPLICIT, _COMPLAINT_EN), (SCORE_IMPLICIT, _IMPLICIT_EN), (SCORE_HINT, _HINT_EN))
_HAS_LATIN = re.compile(r"[A-Za-z]")
_EN_PATTERNS = tuple(pattern for _, pattern in _EN_TIERS)


def score_complaint(text: str, max_chars: int = 300) -> tuple[float, str] | None:
    """(score, snippet) of the strongest complaint in a user message, or None. Only the first `max_chars`
    characters are tested (see the module's notes). The Chinese patterns run only on text with Chinese
    characters, the English ones only on text with Latin letters."""
    head = text[:max_chars]
    if not head.strip():
        return None
    best: tuple[float, int, int] | None = None
    if has_han(head):
        masked = blank(head, (m.span() for m in _NEUTRAL_ZH.finditer(head)))
        best = _first(_ZH_TIERS, masked)
    if (best is None or best[0] < SCORE_EXPLICIT) and _HAS_LATIN.search(head) and _en_may_match(head):
        found = _first(_EN_TIERS, blank(head, _NEUTRAL_EN.spans(head)))
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    if best is None:
        return None
    return best[0], window(head, best[1], best[2], _CONTEXT_CHARS)


def _en_may_match(head: str) -> bool:
    """False when no English tier can match `head`, even with its neutral phrases blanked (most messages: 88% on the
    pool), which skips the neutral scan, the blanking and three searches. Each tier's `live` (its alternatives that
    may match, from the group's pass that the cue patterns share) is monotone in the text's words and substrings,
    and blanking whole words (every neutral phrase starts and ends at one) adds none, so the masked text has no live
    alternative where the text has none. A text whose lower-casing changes its length is matched without `live`."""
    low = lowered(head)
    if len(low) != len(head):
        return True
    for pattern in _EN_PATTERNS:
        if pattern.live(low):
            return True
    return False


def _first(tiers: tuple[tuple[float, re.Pattern[str] | WordRegex], ...], masked: str) -> tuple[float, int, int] | None:
    for score, pattern in tiers:
        m = pattern.search(masked)
        if m is not None:
            return score, m.start(), m.end()
    return None


def find_complaint(text: str, max_chars: int = 300) -> str | None:
    """The snippet of an explicit or implicit complaint (score >= `SCORE_IMPLICIT`), or None."""
    found = score_complaint(text, max_chars)
    return found[1] if found and found[0] >= SCORE_IMPLICIT else None

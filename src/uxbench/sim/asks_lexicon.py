"""Concepts of personal facts and the words people use to ask for them, en and zh (this project's own lists).

A fact's label names the fact in a request sentence when each of its words is there as itself or as another
word or phrase of the same concept: a persona's "city" is asked for by "Where do you live?" and "What's your
location?", its "订单号" by "订单编号是多少". The concepts are general personal-fact concepts (places, money, time,
age, counts, names, identifiers, contact details, versions, models, employers, jobs, health, education...), not
the fact kinds of the measurement set (`bench/asks_dev/kinds.json`); English single words are compared after
plural folding, phrases as whole words.
"""

from __future__ import annotations

from functools import lru_cache

_EN_CONCEPTS: tuple[frozenset[str], ...] = tuple(frozenset(group.split("|")) for group in (
    "city|town|country|location|address|region|state|province|postcode|zip|county|neighborhood|"
    "neighbourhood|located|destination|destinations|travel to|where would you like to go|"
    "where would you like to travel|where do you live|where you live|where are you|where is the property|"
    "where is your|which city|what city|which country|what country|which town|what town|where you are|"
    "where are you located|where are you based",
    "amount|price|cost|budget|fee|salary|income|rent|spend|money|how much|charge|total|pay",
    "date|deadline|timeline|timeframe|duration|how long|what time|which day|what day|when is|when was|"
    "when did|when do|when does|when are|when will|when would|when should|when can|what date|which date|"
    "how soon|period|dates",
    "age|how old|years old|birthday|date of birth|born|age range|age group",
    "number|how many|quantity|headcount|size",
    "people|person|traveller|traveler|passenger|guest|adult|participant|respondent|attendee|employee|"
    "student|child|kid|children|visitor",
    "name|called|surname|first name|full name|last name",
    "number|id|reference|ref|confirmation|pnr|identifier",
    "email|e-mail|mail|phone|mobile|telephone|contact|whatsapp|reach you",
    "version|release",
    "model|brand|device|which phone|what phone|which router|what router|make and model",
    "company|employer|firm|startup|where do you work|work for|business name|name of your business|"
    "your organization|your organisation|your business",
    "job|occupation|profession|what do you do|work as|what do you do for a living",
    "experience|expertise|proficiency|familiarity|how familiar|how experienced|skill level",
    "audience|readers|readership|demographic|who is it for|aimed at|for whom|target market|intended for",
    "language|programming language|framework",
    "error|traceback|exception|stack trace|error message|error messages",
    "code|snippet|script|query|source code",
    "operating system|os|windows|mac|macos|linux|ubuntu|ios|android",
    "length|word count|how long|how many words|how many pages|words|pages",
    "url|link|website|webpage|web page|domain",
    "weight|weigh|how heavy|kg|pounds|lbs",
    "height|how tall",
    "nationality|citizen|citizenship|where are you from|which country are you from",
    "password|passcode|pin",
    "card|debit card|credit card",
    "gender|sex",
    "course|module|degree|major|university|college",
    "allergy|allergic|allergies|intolerance|injury|injuries|symptom|symptoms|medication|diagnosis",
    "four|4",
    "policy|insurance",
    "happened|happen|occurred|occur|incident",
))
WEAK_WORDS = frozenset(
    "level number name details detail information info type kind amount status data address title four digit "
    "value id range".split()
)
"""Label words that say what sort of value a fact is rather than which one ("deposit *amount*", "experience
*level*", "company *name*"): a label with other words is named by those; one made of these only needs them."""
_ZH_CONCEPTS: tuple[tuple[str, ...], ...] = tuple(tuple(group.split("|")) for group in (
    "城市|地址|所在地|哪里|在哪|哪个城市|什么城市|什么地方|哪儿|地区|位置|住址|住在|所在城市|哪座城市",
    "省份|哪个省|省|哪里考",
    "金额|多少钱|价格|费用|预算|价钱|几块钱|花了多少|付了多少",
    "时间|日期|什么时候|哪天|几号|几点|多久|多长时间|何时|哪一天",
    "年龄|几岁|多大|岁数|出生",
    "数量|人数|几个|多少个|多少人|几位|几人|几名",
    "姓名|名字|叫什么|称呼|怎么称呼",
    "编号|号码|单号|订单号|订单编号|尾号|卡号|后四位|车次|哪趟",
    "电话|手机号|邮箱|联系方式|微信号",
    "版本|哪个版本|什么版本|版本号",
    "型号|品牌|哪款|什么型号|什么手机|机型|哪个牌子",
    "公司|单位|企业|工作单位|在哪工作",
    "职业|岗位|职位|做什么工作|从事",
    "经验|水平|基础|熟悉程度",
    "受众|目标人群|读者|目标用户|目标客户",
    "编程语言|什么语言|哪种语言",
    "报错|错误|错误信息|日志|提示信息",
    "代码|脚本",
    "操作系统|什么系统|哪个系统",
    "字数|长度|多长|多少字",
    "网址|链接|网站",
    "分数|多少分|考了多少|成绩",
    "孩子|子女|小孩",
    "医院|哪家医院",
    "过敏|病史|症状|情况",
    "参保地|哪里参保|参保",
))


@lru_cache(maxsize=4096)
def concept_words(word: str) -> frozenset[str]:
    """Every other word and phrase of the English concepts `word` belongs to (empty when none)."""
    out: set[str] = set()
    for group in _EN_CONCEPTS:
        if word in group:
            out |= group
    out.discard(word)
    return frozenset(out)


@lru_cache(maxsize=4096)
def zh_concept_phrases(label: str) -> tuple[str, ...]:
    """The phrases of every Chinese concept one of whose members (two characters or more) is part of `label`."""
    out: list[str] = []
    for group in _ZH_CONCEPTS:
        if any(len(member) >= 2 and member in label for member in group):
            out.extend(group)
    return tuple(dict.fromkeys(p for p in out if len(p) >= 2))

"""Personal names in free text, found by rule (used by `deid_rules.find_pii`): where a name is *said to be*
one, in Chinese and English. A name anywhere else (a character of a story, a name in a list) is not found;
the optional model pass (`--deid-model`) is for those.

- Self-introduction: 我叫 / 我的名字是 / 本人 / 鄙人 / 在下 / 我姓 + a Chinese name (a common surname, then one
  or two characters); "my name is", "my name's", "call me", "I am called" + one to three capitalised words.
- Form of address: a common surname (and up to two characters) before 先生 / 女士 / 小姐 / 老师 / 经理 / 医生 /
  教授 / 律师 / 同学 / 师傅 / 总 ...; Mr / Mrs / Ms / Miss / Mx / Dr / Prof + a capitalised name; "Dear NAME,".
- Signature and form fields: 姓名 / 联系人 / 收件人 / 收货人 / 署名 / 落款：NAME, "——NAME" ending a line;
  "Best regards," / "Sincerely," / "Thanks," ... with a name alone on the next line; "Name: NAME"
  (capitalised: ``name: Build`` in YAML or code is not a form).

Only the name is replaced ("我叫[NAME_1]", "Dear [NAME_1],"). A Chinese given name that runs on into the next
word ("我叫张伟今年二十") keeps at most two characters, the second one unless it is a common function word.
"""

from __future__ import annotations

import re

from uxbench.mining.deid_types import PiiSpan

SURNAMES = (
    "欧阳 司马 诸葛 上官 东方 皇甫 尉迟 公孙 慕容 长孙 夏侯 令狐 王 李 张 刘 陈 杨 黄 赵 "
    "周 吴 徐 孙 马 朱 胡 郭 何 高 林 罗 郑 梁 谢 宋 唐 许 韩 冯 邓 曹 彭 曾 肖 田 "
    "董 袁 潘 于 蒋 蔡 余 杜 叶 程 苏 魏 吕 丁 任 沈 姚 卢 姜 崔 钟 谭 陆 汪 范 金 "
    "石 廖 贾 夏 韦 付 方 白 邹 孟 熊 秦 邱 江 尹 薛 闫 段 雷 侯 龙 史 陶 黎 贺 顾 "
    "毛 郝 龚 邵 万 钱 严 覃 武 戴 莫 孔 向 汤 常 温 康 施 文 牛 樊 葛 邢 安 齐 易 "
    "乔 伍 庞 颜 倪 庄 聂 章 鲁 岳 翟 殷 詹 申 欧 耿 关 兰 焦 俞 左 柳 甘 祝 包 宁 "
    "尚 符 舒 阮 柯 纪 梅 童 凌 毕 单 季 裴 霍 涂 成 苗 谷 盛 曲 翁 冉 骆 蓝 路 游 "
    "辛 靳 管 柴 蒙 鲍 华 喻 祁 蒲 房 滕 屈 饶 解 牟 艾 尤 阳 时 穆 农 司 卓 古 吉 "
    "缪 简 车 项 连 芦 麦 褚 娄 窦 戚 岑 景 党 宫 费 卜 冷 晏 席 卫 米 柏 宗 瞿 桂 "
    "全 佟 应 臧 闵 苟 邬 边 卞 姬 师 和 仇 栾 隋 商 刁 沙 荣 巫 寇 桑 郎 甄 丛 仲 "
    "虞 敖 巩 明 佘 池 查 麻 苑 迟 邝"
).split()
"""Common Chinese surnames (two-character ones first, so they win)."""

_SURNAME = "(?:" + "|".join(SURNAMES) + ")"
_HAN = r"[\u4e00-\u9fff]"
# A second given-name character is taken unless it is a word that usually follows a name.
_NOT_SECOND = "是的了在和与跟从来去住今昨年岁说讲叫请我你他她们啊呀吧呢哦嗯吗就也都还又才很太要想会能可已正刚"
_GIVEN = rf"{_HAN}(?:(?![{_NOT_SECOND}]){_HAN})?"
_ZH_NAME = rf"(?P<name>{_SURNAME}{_GIVEN})"
_TITLES_ZH = ("先生|女士|小姐|老师|经理|总监|主任|医生|大夫|教授|律师|同学|师傅|阿姨|叔叔|处长|局长|科长|院长|校长"
              "|总(?![是结共体统部之而算计数额量会归裁理])")

ZH_INTRO = re.compile(
    rf"(?:我叫(?:做)?|我的名字(?:是|叫)|我名叫|本人(?:叫|名叫|姓名)?|鄙人|在下|我是)\s*{_ZH_NAME}")
"""我是 is ordinary ("我是学生"): it counts only before a surname and a given name (two or three characters)."""
ZH_SURNAME = re.compile(rf"我姓\s*(?P<name>{_SURNAME})")
ZH_ADDRESS = re.compile(rf"(?P<name>{_SURNAME}{_HAN}{{0,2}}?)(?:{_TITLES_ZH})")
ZH_FIELD = re.compile(rf"(?:姓名|联系人|收件人|收货人|寄件人|署名|落款|经办人|负责人|签名)\s*[:：]\s*{_ZH_NAME}")
ZH_SIGNATURE = re.compile(rf"(?:——|—|--|－－)\s*{_ZH_NAME}\s*$", re.MULTILINE)

_CAP = r"[A-Z][a-z]+(?:['-][A-Z]?[a-z]+)?"
_EN_NAME = rf"(?P<name>{_CAP}(?:[ ]{_CAP}){{0,2}})"
EN_INTRO = re.compile(rf"\b(?:[Mm]y name is|[Mm]y name's|[Cc]all me|I am called|I'm called)[ ]+{_EN_NAME}")
EN_TITLE = re.compile(rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?[ ]+(?P<name>{_CAP}(?:[ ]{_CAP})?)")
EN_DEAR = re.compile(rf"\bDear[ ]+{_EN_NAME}[ ]*[,，!:]")
EN_SIGNOFF = re.compile(
    rf"(?im)^[ \t]*(?:best regards|kind regards|warm regards|regards|sincerely|yours sincerely|yours truly|"
    rf"best wishes|best|thanks|thank you|many thanks|cheers|respectfully|yours)[ \t]*[,!.]?[ \t]*\r?\n"
    rf"[ \t]*(?-i:{_EN_NAME})[ \t]*$")
EN_FIELD = re.compile(rf"\b(?:Name|Full [Nn]ame|Contact(?: person)?|Signed)[ ]*:[ ]*{_EN_NAME}")
"""A form field, capitalised: code and YAML (``name: Build``, ``var name: String``) are not forms."""

NOT_NAMES = frozenset(
    "Sir Madam Madame Team All Customer Customers Friend Friends Hiring Manager Managers Valued User Users Reader "
    "Readers Diary Santa Everyone Colleague Colleagues Member Members Parent Parents Student Students Your The A An "
    "Mom Mum Dad God Lord Lady Gentlemen Ladies Professor Doctor Client Clients Applicant Candidate Recruiter "
    "Admissions Committee Editor Editors Hiring Human Resources Support Sales Partner Partners Future Me Myself "
    "Name Full First Last Company Assistant Chat Chatgpt ChatGPT Bot Mr Mrs Ms Dr Prof Miss Mx Hi Hello Thanks "
    "Thank You Best Regards Sincerely Cheers Yours Kind Warm Dear Here This That It He She They We I Not Just So "
    "Writer Author Speaker Host Guest Sender Recipient Employee Employer Boss Officer Agent Representative Landlord "
    "Tenant Neighbor Neighbour Teacher Coach Player Players Fans Viewers Listeners Subscribers People World "
    "Out Nothing Anything Something Everything".split()
)
"""Capitalised words that follow these cues without being a name ("Dear Sir,", "Dear Hiring Manager,")."""


def _en_ok(name: str) -> bool:
    return name.split()[0] not in NOT_NAMES and not all(w in NOT_NAMES for w in name.split())


_WORD_SURNAMES = frozenset("和向时应全成于常路关连单司查解师商安明文方")
"""Surnames that are also common words: alone before a title ("我和老师", "向老师请教") they are not a name."""


def _zh_intro_ok(match: re.Match[str]) -> bool:
    # 我是 + a name: only a surname and a given name with nothing Chinese right after ("我是张伟。", "我是王芳,").
    if not match.group(0).startswith("我是"):
        return True
    name = match.group("name")
    rest = match.string[match.end():match.end() + 1]
    return len(name) >= 2 and not re.match(_HAN, rest)


_EN_CUES = ("name", "call me", "called", "mr", "ms", "miss", "mx", "dr", "prof", "dear", "regards", "sincerely",
            "thank", "cheers", "best", "respectfully", "yours", "contact", "signed")
_ZH_CUES = tuple("我叫 名字 名叫 本人 鄙人 在下 我是 我姓 先生 女士 小姐 老师 经理 总监 主任 医生 大夫 教授 律师 同学 "
                 "师傅 阿姨 叔叔 长 总 姓名 联系人 收件人 收货人 寄件人 署名 落款 经办人 负责人 签名 — -- －".split())


def find_names(text: str) -> list[PiiSpan]:
    """Name spans (type NAME, normalised to lower case without spaces) by the rules above; may overlap."""
    spans: list[PiiSpan] = []
    if not text.isascii() and any(cue in text for cue in _ZH_CUES):
        for pattern in (ZH_INTRO, ZH_SURNAME, ZH_ADDRESS, ZH_FIELD, ZH_SIGNATURE):
            for m in pattern.finditer(text):
                if pattern is ZH_INTRO and not _zh_intro_ok(m):
                    continue
                if pattern is ZH_ADDRESS and m.group("name") in _WORD_SURNAMES:
                    continue
                spans.append(PiiSpan("NAME", m.start("name"), m.end("name"), m.group("name")))
    lowered = text.lower()
    if any(cue in lowered for cue in _EN_CUES):
        for pattern in (EN_INTRO, EN_TITLE, EN_DEAR, EN_SIGNOFF, EN_FIELD):
            for m in pattern.finditer(text):
                name = m.group("name")
                if _en_ok(name):
                    spans.append(PiiSpan("NAME", m.start("name"), m.end("name"), "".join(name.lower().split())))
    return spans

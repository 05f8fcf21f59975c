"""Personal names in free text, found by rule (used by `deid_rules.find_pii`): where a name is *said to be*
one, in Chinese and English. A name anywhere else (a character of a story, a name in a list) is not found;
the optional model pass (`--deid-model`) is for those.

- Self-introduction: 我叫 / 我的名字是 / 本人 / 鄙人 / 在下 / 我姓 + a Chinese name (a common surname, then one
  or two characters); "my name is", "my name's", "call me", "I am called" + one to three capitalised words;
  "I am" / "I'm" + a first and a last name ("I am Daisy Jones-Brown"), or one name right after a greeting
  ("Hi, I'm Daisy").
- Form of address: a common surname (and up to two characters) before 先生 / 女士 / 小姐 / 老师 / 经理 / 医生 /
  教授 / 律师 / 同学 / 师傅 / 总 ...; Mr / Mrs / Ms / Miss / Mx / Dr / Prof + a capitalised name; "Dear NAME,".
- Signature and form fields: 姓名 / 联系人 / 收件人 / 收货人 / 署名 / 落款：NAME, "——NAME" ending a line,
  a name alone on the line after 此致敬礼 / 祝好, "NAME 敬上"; "Best regards," / "Sincerely," / "Thanks," ...
  at the start of a line or after a sentence, with a name alone on the next line (a blank line between
  allowed), or "Regards, NAME" ending a line; "Name: NAME" (capitalised: ``name: Build`` in YAML or code is not
  a form; "Plugin Name:", "Brand Name:" name no person).

A name field inside a creative or made-up profile is left alone: a character sheet or a persona ("Name: Thoric
Lightbringer / Race: Half-Elf", "Homeowner persona: Name: Sarah", a Pokémon's "Name: / Type:", 角色设定 姓名：...)
names nobody real. The field's block (its own line and the field lines around it, up to `_BLOCK_CHARS` each
way) is read for the keys and words of such profiles (`creative_block`).

Only the name is replaced ("我叫[NAME_1]", "Dear [NAME_1],"). A Chinese given name that runs on into the next
word ("我叫张伟今年二十") keeps at most two characters, the second one unless it is a common function word.
"""

from __future__ import annotations

import re

import ahocorasick_rs

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
    "虞 敖 巩 明 佘 池 查 麻 苑 迟 邝 傅 萧"
).split()
"""Common Chinese surnames (two-character ones first, so they win)."""

_SURNAME = "(?:" + "|".join(SURNAMES) + ")"
_HAN = r"[\u4e00-\u9fff]"
# A second given-name character is taken unless it is a word that usually follows a name (then not followed by
# another character).
_NOT_SECOND = "是的了在和与跟从来去住今昨年岁说讲叫请我你他她们啊呀吧呢哦嗯吗就也都还又才很太要想会能可已正刚"
_GIVEN = rf"{_HAN}(?:(?![{_NOT_SECOND}]){_HAN}|{_HAN}(?!{_HAN}))?"
"""The given name: one character, and a second one unless it is a function word that runs on into the next
word ("我叫张伟今年"); a second character that ends the text or is followed by punctuation is always taken
("我是王刚。")."""
_ZH_NAME = rf"(?P<name>{_SURNAME}{_GIVEN})"
_ZH_NAME_ALONE = rf"(?P<name>{_SURNAME}{_HAN}{{1,2}})"
"""A name alone at the end of a line (a signature): nothing runs on after it, so any second character counts."""
_TITLES_ZH = ("先生|女士|小姐|老师|经理|总监|主任|医生|大夫|教授|律师|同学|师傅|阿姨|叔叔|处长|局长|科长|院长|校长"
              "|总(?![是结共体统部之而算计数额量会归裁理])")

ZH_INTRO = re.compile(
    rf"(?:我叫(?:做)?|我的名字(?:是|叫)|我名叫|本人(?:叫|名叫|姓名)?|鄙人|在下|我是)\s*{_ZH_NAME}")
"""我是 is ordinary ("我是学生"): it counts only before a surname and a given name (two or three characters)."""
ZH_SURNAME = re.compile(rf"我姓\s*(?P<name>{_SURNAME})")
ZH_ADDRESS = re.compile(rf"(?P<name>{_SURNAME}{_HAN}{{0,2}}?)(?:{_TITLES_ZH})")
ZH_FIELD = re.compile(rf"(?:姓名|联系人|收件人|收货人|寄件人|署名|落款|经办人|负责人|签名)\s*[:：]\s*{_ZH_NAME}")
ZH_SIGNATURE = re.compile(rf"(?:——|—|--|－－)\s*{_ZH_NAME_ALONE}\s*$", re.MULTILINE)
ZH_LETTER_CLOSE = re.compile(
    rf"(?:此致[\s，,]*敬礼|祝好|顺祝商祺|祝商祺)[!！。.,，]?[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*{_ZH_NAME_ALONE}[ \t]*$"
    rf"|^[ \t]*{_ZH_NAME_ALONE.replace('?P<name>', '?P<signed>')}[ \t]*(?:敬上|谨上|拜上)", re.MULTILINE)
"""Signatures: "——陈晓明" ending a line; a name alone on the line after 此致敬礼 / 祝好, or "陈晓明 敬上"."""

_CAP = r"(?:[A-Z]['’])?[A-Z][a-z]+(?:[A-Z][a-z]+)?(?:['’-](?!s(?![a-z]))[A-Z]?[a-z]+)?"
"""One capitalised name word: Rosalind, O'Brien, McDonald, Jones-Brown (not a possessive's 's)."""
_EN_NAME = rf"(?P<name>{_CAP}(?:[ ]{_CAP}){{0,2}})(?![A-Za-z])"
EN_INTRO = re.compile(rf"\b(?:[Mm]y name is|[Mm]y name's|[Cc]all me|I am called|I'm called)[ ]+{_EN_NAME}")
EN_I_AM = re.compile(
    rf"\bI(?: am|['’]m)[ ]+(?P<name>{_CAP}(?:[ ]{_CAP}){{1,2}})(?![A-Za-z])"
    rf"|\b(?:Hi|Hello|Hey|Greetings|Good (?:morning|afternoon|evening))(?:[ ]+(?:there|all|everyone))?[!,.]?[ ]+"
    rf"I(?: am|['’]m)[ ]+(?P<single>{_CAP})(?![A-Za-z '’-])")
"""I am + a first and a last name ("I am Daisy Jones-Brown"); one name only right after a greeting
("Hello, I'm Daisy.")."""
EN_TITLE = re.compile(rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?[ ]+(?P<name>{_CAP}(?:[ ]{_CAP})?)(?![A-Za-z])")
EN_DEAR = re.compile(rf"\bDear[ ]+{_EN_NAME}[ ]*[,，!:]")
_SIGNOFFS = ("best regards|kind regards|warm regards|warmest regards|regards|sincerely|yours sincerely|yours truly|"
             "yours faithfully|best wishes|warm wishes|all the best|best|thanks|thank you|many thanks|thanks again|"
             "cheers|respectfully|yours")
EN_SIGNOFF = re.compile(
    rf"(?im)(?:^|(?<=[.!?])[ \t]+)[ \t]*(?:{_SIGNOFFS})[ \t]*[,!.]?[ \t]*\r?\n(?:[ \t]*\r?\n)?"
    rf"[ \t]*(?-i:{_EN_NAME})[ \t]*$"
    rf"|(?:^|(?<=[.!?])[ \t]+)[ \t]*(?-i:(?:Best|Kind|Warm|Warmest) [Rr]egards|Regards|Sincerely|Yours sincerely|"
    rf"Yours truly|Yours faithfully|Best wishes|Respectfully),[ \t]+(?-i:(?P<inline>{_CAP}(?:[ ]{_CAP}){{0,2}}))"
    rf"[ \t]*[.!]?[ \t]*$")
"""A sign-off at the start of a line or after a sentence, the name alone on the next line (a blank line
between allowed), or after the sign-off on the same line, ending it ("Regards, Cerys Weetch")."""
_NAME_QUALIFIERS = ("Full|First|Last|Given|Family|Middle|Legal|Maiden|Your|My|His|Her|Customer|Patient|Client|"
                    "Employee|Student|Applicant|Candidate|Member|Guest|Passenger|Sender|Recipient|Buyer|Seller|"
                    "Cardholder|Holder|Owner|Tenant|Parent|Child|Spouse|Contact|Person")
EN_FIELD = re.compile(
    rf"(?:\b(?:{_NAME_QUALIFIERS}) [Nn]ame|(?<![A-Za-z])(?<![A-Za-z][ ])(?:Name|Contact(?: person)?|Signed))"
    rf"[ ]*:[ ]*{_EN_NAME}")
"""A form field, capitalised ("Name: Percival Thistlewood", "Full name: ..."): code and YAML (``name: Build``,
``var name: String``) are not forms, and a qualifier other than a person's ("Plugin Name:", "Brand Name:",
"Project Name:") names a thing."""

NOT_NAMES = frozenset(
    "Sir Madam Madame Team All Customer Customers Friend Friends Hiring Manager Managers Valued User Users Reader "
    "Readers Diary Santa Everyone Colleague Colleagues Member Members Parent Parents Student Students Your The A An "
    "Mom Mum Dad God Lord Lady Gentlemen Ladies Professor Doctor Client Clients Applicant Candidate Recruiter "
    "Admissions Committee Editor Editors Hiring Human Resources Support Sales Partner Partners Future Me Myself "
    "Name Full First Last Company Assistant Chat Chatgpt ChatGPT Bot Mr Mrs Ms Dr Prof Miss Mx Hi Hello Thanks "
    "Thank You Best Regards Sincerely Cheers Yours Kind Warm Dear Here This That It He She They We I Not Just So "
    "Writer Author Speaker Host Guest Sender Recipient Employee Employer Boss Officer Agent Representative Landlord "
    "Tenant Neighbor Neighbour Teacher Coach Player Players Fans Viewers Listeners Subscribers People World "
    "Out Nothing Anything Something Everything If When Where What Which Who Why How Enter Type Input Insert Add "
    "Fill Provide Select Choose Leave Optional Required None Unknown Anonymous Example Sample Placeholder Test "
    "Journal Reviewer Reviewers Review Selection Search Hiring".split()
)
"""Capitalised words that follow these cues without being a name ("Dear Sir,", "Dear Hiring Manager,",
"Name: Enter the first name")."""
NOT_AFTER_I_AM = frozenset(
    "American Americans Canadian British English Chinese Japanese Korean Indian Pakistani German French Spanish "
    "Italian Russian Mexican Brazilian Australian African Asian European Irish Scottish Welsh Dutch Swedish Polish "
    "Turkish Arab Arabic Persian Iranian Israeli Jewish Christian Catholic Muslim Hindu Buddhist Sikh Atheist "
    "Black White Latino Latina Hispanic Native Filipino Vietnamese Thai Nigerian Ukrainian Greek Portuguese "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August "
    "September October November December Very Really So Too Also Still Always Never Now Going Looking Trying "
    "Working Writing Sorry Happy Glad Sure Ready Here There Feeling Loving Legend Groot Batman Iron Spider "
    "Super Senior Junior Chief Head Lead Vice Prime Grand Currently Actually Basically In On At Of For With From "
    "To By Into About Back Done Not King Queen Prince Princess Captain Agent Officer Detective Lord Lady "
    "Sir".split()
)
"""Capitalised words after "I am" / "I'm" that are not a name (a nationality, a day, an adverb in a title)."""


def _en_ok(name: str) -> bool:
    return name.split()[0] not in NOT_NAMES and not all(w in NOT_NAMES for w in name.split())


def _i_am_ok(name: str) -> bool:
    return _en_ok(name) and not any(word in NOT_AFTER_I_AM or word in NOT_NAMES for word in name.split())


_WORD_SURNAMES = frozenset("和向时应全成于常路关连单司查解师商安明文方")
"""Surnames that are also common words: alone before a title ("我和老师", "向老师请教") they are not a name."""


def _zh_intro_ok(match: re.Match[str]) -> bool:
    # 我是 + a name: only a surname and a given name with nothing Chinese right after ("我是张伟。", "我是王芳,").
    if not match.group(0).startswith("我是"):
        return True
    name = match.group("name")
    rest = match.string[match.end():match.end() + 1]
    return len(name) >= 2 and not re.match(_HAN, rest)


_BLOCK_CHARS = 300
_FIELD_LINE = re.compile(
    r"^[ \t]*(?:[-*•#>]+[ \t]*|\d{1,2}[.)][ \t]*)?(?P<key>[A-Z\u4e00-\u9fff][^\n:：]{0,29}?)[ \t]*[:：]", re.M)
"""A field line: a capitalised (or Chinese) key of up to 30 characters and a colon, maybe after a bullet."""
_CREATIVE_KEYS = re.compile(
    r"^(?:race|class|species|alignment|abilit(?:y|ies)(?: scores)?|powers?|super ?powers?|personality|"
    r"(?:physical )?appearance|back ?story|background/job|weapons?|element|evolution|moves?|type|stats|hp|"
    r"level|faction|kingdom|home ?world|planet|magic|traits?|quirks?|catchphrase|deity|logo|tagline|slogan|"
    r"种族|职业技能|技能|性格|外貌|外形|背景故事|阵营|法术|能力|属性|口头禅|人设)$", re.IGNORECASE)
_CREATIVE_WORDS = re.compile(
    r"\b(?:characters?|personas?|story|stories|fictional|fiction|fantasy|novel|role-?play(?:ing)?|rpg|d&d|"
    r"dungeons|campaign|npcs?|villains?|heroes|hero|heroine|protagonist|antagonist|backstory|pok[eé]mon|"
    r"creatures?|monsters?|brand|mascot|superhero|alien|wizard|elf|dwarf|screenplay|sitcom|episode|cast)\b"
    r"|角色|人设|人物设定|人物卡|小说|故事|剧本|游戏|虚构|主角|反派|配角|剧情|动漫|品牌", re.IGNORECASE)


def creative_block(text: str, start: int, end: int) -> bool:
    """True when the field at ``text[start:end]`` sits in a made-up profile: a character sheet, a persona,
    a creature, a brand. Read: the field lines above it up to the line that heads them ("Character
    Details:", "Homeowner persona:", a line ending in a colon), its own line, and ``_BLOCK_CHARS`` after it,
    for a key of such profiles (Race, Class, Personality, Type, 性格 ...) or a word that says so (character,
    persona, story, Pokémon, 角色, 小说 ...). Text further above is not read: a real form at the end of a
    message about a story is still a real form."""
    lo = text.rfind("\n", 0, start) + 1
    floor = max(0, start - _BLOCK_CHARS)
    while lo > floor:
        above = text.rfind("\n", 0, lo - 1) + 1
        line = text[above:lo - 1]
        if line.strip() and not _FIELD_LINE.match(line):
            if line.rstrip().endswith((":", "：")):
                lo = max(above, floor)  # a heading that introduces the block: read, and no further
            break
        lo = max(above, floor)
    block = text[lo:min(len(text), end + _BLOCK_CHARS)]
    if _CREATIVE_WORDS.search(block):
        return True
    return any(_CREATIVE_KEYS.match(m.group("key").strip()) for m in _FIELD_LINE.finditer(block))


_ZH_CUES = tuple("我叫 名字 名叫 本人 鄙人 在下 我是 我姓 先生 女士 小姐 老师 经理 总监 主任 医生 大夫 教授 律师 同学 "
                 "师傅 阿姨 叔叔 长 总 姓名 联系人 收件人 收货人 寄件人 署名 落款 经办人 负责人 签名 — -- － "
                 "敬礼 祝 敬上 谨上 拜上".split())
_ZH_LETTER_CUES = ("敬礼", "祝好", "商祺", "敬上", "谨上", "拜上")  # ZH_LETTER_CLOSE needs one of them

# Where an English rule can match. Running each pattern over every text costs ~40 us a pattern on an 800-character
# text (`re` tries it at every position); one Aho-Corasick pass over the text finds every place where a match can
# *start* (each pattern opens with one of these literals), and the pattern is tried there only (`_anchored`).
_START_CUES: dict[re.Pattern[str], tuple[str, ...]] = {
    EN_INTRO: ("My name is", "my name is", "My name's", "my name's", "Call me", "call me", "I am called",
               "I'm called"),
    EN_TITLE: ("Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof"),
    EN_DEAR: ("Dear",),
    EN_FIELD: ("Name", "Contact", "Signed",
               *(f"{qualifier} {name}" for qualifier in _NAME_QUALIFIERS.split("|") for name in ("name", "Name"))),
    EN_I_AM: ("I am", "I'm", "I’m", "Hi", "Hello", "Hey", "Greetings", "Good morning", "Good afternoon",
              "Good evening"),
}
EN_SIGNOFF_AT = re.compile(
    rf"(?im)(?:{_SIGNOFFS})[ \t]*[,!.]?[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*(?-i:{_EN_NAME})[ \t]*$"
    rf"|(?-i:(?:Best|Kind|Warm|Warmest) [Rr]egards|Regards|Sincerely|Yours sincerely|Yours truly|Yours faithfully|"
    rf"Best wishes|Respectfully),[ \t]+(?-i:(?P<inline>{_CAP}(?:[ ]{_CAP}){{0,2}}))[ \t]*[.!]?[ \t]*$")
"""`EN_SIGNOFF` from its sign-off phrase on: tried where a phrase stands at a line's start or after a sentence
(`_signoff_may_start`), it finds the same names."""


def _cue_automaton(cues: list[str]) -> ahocorasick_rs.AhoCorasick:
    return ahocorasick_rs.AhoCorasick(cues, matchkind=ahocorasick_rs.MatchKind.Standard)


_START_LITERALS = sorted({cue for cues in _START_CUES.values() for cue in cues})
_EN_RULES = (EN_INTRO, EN_TITLE, EN_DEAR, EN_SIGNOFF, EN_FIELD, EN_I_AM)
"""The English rules, in the order `find_names` reads their matches; numbered, since hashing a compiled pattern
(a dict key) hashes its whole compiled code, microseconds each time."""
_SIGNOFF_RULE = _EN_RULES.index(EN_SIGNOFF)
_START_RULES = [tuple(_EN_RULES.index(p) for p, cues in _START_CUES.items() if literal in cues)
                for literal in _START_LITERALS]
_SIGNOFF_LITERALS = sorted(set(_SIGNOFFS.split("|")))
# Sign-off phrases are searched leftmost-longest, not overlapping (3x faster: the automaton's prefilter then
# applies): a phrase starting inside another one's match follows a letter of it, and `_signoff_may_start`
# rejects it anyway, since every phrase is lower-case letters and spaces, opening with a letter.
_SIGNOFF_STARTS = ahocorasick_rs.AhoCorasick(_SIGNOFF_LITERALS, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
# The same cues for a text's UTF-8 bytes (an ASCII text's byte offsets are its character offsets): ahocorasick_rs scans
# bytes 3-4x faster than a str (which it copies and maps back to character offsets).
_STARTS_BYTES = ahocorasick_rs.BytesAhoCorasick([cue.encode() for cue in _START_LITERALS],
                                                matchkind=ahocorasick_rs.MatchKind.Standard)
MARKS = (b"://", b"www.", b"@")
"""What `deid_rules` needs before its URL and e-mail patterns can match (``www.`` in any case: it reads lower-case
bytes), found in the same pass as the sign-off phrases: no mark shares a byte with a phrase (only letters and
spaces), so in a leftmost-longest search neither hides the other (checked by the tests)."""
LOWER_CUES = ahocorasick_rs.BytesAhoCorasick([*(cue.encode() for cue in _SIGNOFF_LITERALS), *MARKS],
                                             matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
PHRASES = len(_SIGNOFF_LITERALS)
"""A cue (the first of each hit of `LOWER_CUES`) below this number is a sign-off phrase; ``PHRASES + i`` is
``MARKS[i]``."""


def lower_cues(data: bytes) -> list[tuple[int, int, int]]:
    """(cue, start, end) of the sign-off phrases and `MARKS` in a text's UTF-8 bytes, read in their ASCII lower
    case (byte offsets, left to right)."""
    return LOWER_CUES.find_matches_as_indexes(data.lower())


_ZH_CUE_FINDER = _cue_automaton(list(_ZH_CUES))
# A non-ASCII text is searched as its UTF-8 bytes too: a literal is in a text exactly when its UTF-8 form is in
# the text's, and a str haystack costs ahocorasick_rs a copy and a map of every offset back to characters
# (a tenth of the de-identification's instructions on Chinese text); the few hits are mapped here instead.
_ZH_CUE_BYTES = ahocorasick_rs.BytesAhoCorasick([cue.encode() for cue in _ZH_CUES],
                                                matchkind=ahocorasick_rs.MatchKind.Standard)
_LOWER_TO_ASCII = ("\u0130", "\u212a")
"""The only non-ASCII characters whose lower case holds ASCII (İ, two characters; the Kelvin sign, k): without
them, a text's lower case differs from its bytes' ASCII lower case only outside ASCII, where no sign-off is."""


def _char_offsets(data: bytes, offsets: list[int]) -> dict[int, int]:
    """Character offsets of the byte offsets ``offsets`` (character boundaries) of a text's UTF-8 ``data``."""
    chars: dict[int, int] = {}
    byte = char = 0
    for at in sorted(set(offsets)):
        char += len(data[byte:at].decode("utf-8"))
        chars[at], byte = char, at
    return chars


def _signoff_may_start(text: str, at: int) -> bool:
    """EN_SIGNOFF's opening condition: the phrase at ``at`` follows a line's start and spaces, or a sentence's
    end and at least one space."""
    before = at
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    return before == 0 or text[before - 1] == "\n" or (before < at and text[before - 1] in ".!?")


def _anchored(pattern: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """``pattern.finditer(text)`` when every match starts at one of ``starts``: the pattern tried at each start
    in order, skipping those inside the last match (as finditer resumes after a match)."""
    found: list[re.Match[str]] = []
    end = 0
    for at in sorted(set(starts)):
        if at >= end and (m := pattern.match(text, at)) is not None:
            found.append(m)
            end = max(m.end(), at + 1)
    return found


def _english_matches(text: str, data: bytes,
                     cues: list[tuple[int, int, int]] | None) -> list[list[re.Match[str]]] | None:
    """The matches of each rule of `_EN_RULES`, None when no rule has one (most texts); ``data``: the text's
    UTF-8 bytes; ``cues``: `lower_cues` of them, when the caller has them."""
    ascii_text = len(data) == len(text)  # (UTF-8 spends one byte a character on ASCII only)
    hits = _STARTS_BYTES.find_matches_as_indexes(data, overlapping=True)
    if hits and not ascii_text:  # byte offsets to character offsets
        chars = _char_offsets(data, [at for _, at, _ in hits])
        hits = [(which, chars[at], end) for which, at, end in hits]
    signoffs: list[re.Match[str]] | None = None
    if ascii_text or not any(char in text for char in _LOWER_TO_ASCII):
        # the bytes' ASCII lower case: the sign-off phrases (ASCII) are where they are in text.lower()
        if cues is None:
            cues = lower_cues(data)
        phrases = [at for which, at, _ in cues if which < PHRASES] if cues else []
        if phrases and not ascii_text:
            chars = _char_offsets(data, phrases)
            phrases = [chars[at] for at in phrases]
    else:
        lowered_text = text.lower()
        if len(lowered_text) != len(text):  # lower() moved the offsets
            signoffs, phrases = list(EN_SIGNOFF.finditer(text)), []
        else:
            phrases = [at for _, at, _ in _SIGNOFF_STARTS.find_matches_as_indexes(lowered_text)]
    if not hits and not phrases and not signoffs:
        return None
    found: list[list[re.Match[str]]] = [[] for _ in _EN_RULES]
    if hits:
        starts: list[list[int]] = [[] for _ in _EN_RULES]
        for which, at, _ in hits:
            for rule in _START_RULES[which]:
                starts[rule].append(at)
        for rule, where in enumerate(starts):
            if where:
                found[rule] = _anchored(_EN_RULES[rule], text, where)
    if signoffs is not None:
        found[_SIGNOFF_RULE] = signoffs
    elif phrases:
        found[_SIGNOFF_RULE] = _anchored(EN_SIGNOFF_AT, text, [at for at in phrases if _signoff_may_start(text, at)])
    return found


def _span(m: re.Match[str], group: str) -> PiiSpan:
    name = m.group(group)
    return PiiSpan("NAME", m.start(group), m.end(group), "".join(name.lower().split()))


def find_names(text: str, data: bytes | None = None, cues: list[tuple[int, int, int]] | None = None) -> list[PiiSpan]:
    """Name spans (type NAME, normalised to lower case without spaces) by the rules above; may overlap.
    ``data`` / ``cues``: the text's UTF-8 bytes and `lower_cues` of them, when the caller has them."""
    spans: list[PiiSpan] = []
    if data is None:
        data = text.encode("utf-8")
    if len(data) != len(text) and _ZH_CUE_BYTES.find_matches_as_indexes(data):  # not ASCII, and a cue
        for pattern in (ZH_INTRO, ZH_SURNAME, ZH_ADDRESS, ZH_FIELD, ZH_SIGNATURE, ZH_LETTER_CLOSE):
            if pattern is ZH_LETTER_CLOSE and not any(cue in text for cue in _ZH_LETTER_CUES):
                continue
            for m in pattern.finditer(text):
                if pattern is ZH_INTRO and not _zh_intro_ok(m):
                    continue
                if pattern is ZH_ADDRESS and m.group("name") in _WORD_SURNAMES:
                    continue
                if pattern is ZH_FIELD and creative_block(text, m.start(), m.end()):
                    continue
                group = "signed" if pattern is ZH_LETTER_CLOSE and m.group("signed") else "name"
                spans.append(PiiSpan("NAME", m.start(group), m.end(group), m.group(group)))
    english = _english_matches(text, data, cues)
    if english is None:
        return spans
    for rule, pattern in enumerate(_EN_RULES[:-1]):  # all but EN_I_AM
        for m in english[rule]:
            group = "inline" if pattern is EN_SIGNOFF and m.group("inline") else "name"
            if not _en_ok(m.group(group)):
                continue
            if pattern is EN_FIELD and creative_block(text, m.start(), m.end()):
                continue
            spans.append(_span(m, group))
    for m in english[-1]:
        group = "name" if m.group("name") else "single"
        if _i_am_ok(m.group(group)):
            spans.append(_span(m, group))
    return spans

"""Detectors for personal data in free text (used by `deid`). Pure functions, compiled patterns only.

What is found, and the limits of each rule:

- PHONE: Chinese mobiles (``1[3-9]`` + 9 digits, optional ``+86`` / ``0086``, spaces or dashes in 3-4-4
  groups); Chinese landlines: an area code (``010``, ``020``, ``0755``; in parentheses, or ``+86 20`` /
  ``0086-10``) and a 7- or 8-digit number, with or without spaces or dashes inside
  (``020-8765-4321``, ``0755 2345 6789``, ``02087654321``, ``(010)12345678``), and an extension;
  other countries' landlines written with their trunk 0 and separators, 9-12 digits (``020 7946 0958``,
  ``(030) 1234567``, ``089/1234567``, ``01 23 45 67 89``, ``03-1234-5678``, ``(02) 9876 5432``);
  ``+``-prefixed international numbers of 8-15 digits (``+1 (555) 123-4567``, ``+44 20 7946 0958``, E.164),
  and North American ``(555) 123-4567`` / ``555-123-4567``. A bare 11-digit number starting 13-19 is taken as
  a mobile even when it is an order number, and a bare 10-12 digit one starting with an area code as a
  landline; three-three-four digit groups are taken as a phone. Landlines without a trunk 0 and not
  +-prefixed (Spain's ``91 123 45 67``) are not detected.
- ID: 18-character Chinese resident ID numbers whose region code, birth date (1900-2099, a real day) and
  ISO 7064 MOD 11-2 check character are all valid. 15-digit legacy IDs are not detected.
- CARD: 13-19 digits (plain, or in groups of 4, or Amex 4-6-5) that pass the Luhn check and start with 2-6
  (the card networks' ranges). A number right after an order / tracking / invoice label (订单号, 单号, 快递,
  order no., tracking, #, ...) is left alone unless the label also says card or bank. 10% of random long
  numbers pass Luhn, so a long unlabelled reference number can still be masked (the safe side).
- EMAIL: ``local@domain.tld``.
- IP: IPv4 (loopback 127.x, 0.0.0.0 and 255.x masks, and numbers after "version" / "v" are not masked) and
  IPv6 (validated with ``ipaddress``; loopback ``::1`` and ``::`` are not masked).
- URL: ``http(s)://`` / ``ftp://`` / ``www.`` links that carry a personal token: user info
  (``user:pass@host``), a query or fragment parameter named like a credential or an identity (token, key,
  sig, session, auth, password, uid, openid, code, email, phone, ...), or a path segment that looks random
  (a piece of 16+ characters mixing letters and digits, a UUID, 24+ hex digits). The whole URL is replaced;
  other URLs are kept (personal data inside them is still found by the other rules).
- ADDRESS: Chinese street addresses (optional 省 / 市 / 区 / 县 / 镇 parts, then a road (路 / 街 / 大道 / 巷 /
  弄 / 胡同 / 道) and a house number 号, with building / unit / room), estate addresses (XX小区3栋2单元501室),
  and English ``123 Main Street`` style addresses (capitalised street name and type, optional apartment /
  unit, city, state and ZIP). A city or district on its own is not personal and is kept. Addresses without a
  house number, rural addresses and other countries' formats are not detected.

- NAME: personal names where the text says they are one (self-introductions, forms of address, signatures
  and form fields, in Chinese and English; `deid_names` lists the cues). Other names are not found by rule.

Not detected: names without such a cue, QQ / WeChat ids, licence plates, passport numbers, dates of birth on
their own.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import date
from functools import lru_cache
from urllib.parse import parse_qsl, urlsplit

from uxbench.mining.deid_names import LOWER_CUES, MARKS, PHRASES, find_names
from uxbench.mining.deid_placeholders import is_placeholder, placeholder_userinfo, placeholder_value
from uxbench.mining.deid_types import PII_TYPES, PiiSpan

__all__ = ["PII_TYPES", "PiiSpan", "find_pii"]

_RANK = {name: rank for rank, name in enumerate(PII_TYPES)}  # tie-break for spans of equal start and length



_B = r"(?<![0-9A-Za-z])"  # not glued to a longer alphanumeric token
_E = r"(?![0-9A-Za-z])"
PHONE_CN = re.compile(rf"(?<![0-9A-Za-z+])(?:(?:\+|00)86[\s-]?)?1[3-9]\d(?:[\s-]?\d{{4}}){{2}}{_E}")
_CN_AREA = r"(?:10|2\d|[3-9]\d{2})"  # Beijing 010, the 02x cities, three digits elsewhere (after the trunk 0)
PHONE_LANDLINE = re.compile(
    rf"(?<![0-9A-Za-z+])(?:(?:\+|00)86[\s-]?(?:\(0\)[\s-]?)?{_CN_AREA}|[(（]0{_CN_AREA}[)）]|0{_CN_AREA})[\s-]?"
    rf"[1-9]\d{{2,3}}[\s-]?\d{{4}}(?:(?:-|转|ext\.?\s?)\d{{1,5}})?{_E}"
)
"""Chinese landlines: area code (0755, (020), +86 20, 0086-10) and a 7- or 8-digit number, with or
without spaces or dashes (020-8765-4321, 0755 2345 6789, 02087654321), and an extension (-123, 转123)."""
# The lookbehind comes after the first character (it then checks the two characters before the end of that one):
# a pattern that opens with a literal or a class lets `re` skip ahead to where that character stands, instead of
# trying the whole pattern at every position (2-2.5x faster on the pool's texts, same matches).
PHONE_NATIONAL = re.compile(
    r"(?:\((?<![0-9A-Za-z]\()0[1-9]\d{0,3}\)|0(?<![0-9A-Za-z]0)[1-9]\d{0,3})(?:[ ./-]\d{2,8}){1,4}" + _E)
"""Other countries' landlines written with their trunk 0 and separators: 020 7946 0958, (030) 1234567,
089/1234567, 01 23 45 67 89, 03-1234-5678, (02) 9876 5432, 011-23456789 (9 to 12 digits in all)."""
PHONE_INTL = re.compile(rf"(?<![0-9A-Za-z+])\+\d{{1,3}}(?:[ .-]?\(?\d{{1,4}}\)?){{1,5}}{_E}")
PHONE_NANP = re.compile(rf"{_B}(?:\(\d{{3}}\)[ -]?|\d{{3}}[ .-])\d{{3}}[ .-]\d{{4}}{_E}")
"""(555) 123-4567, (516)-974-4700, 555-123-4567, 555.123.4567."""
CN_ID = re.compile(rf"{_B}[1-9]\d{{16}}[\dXx]{_E}")
CARD = re.compile(
    rf"{_B}(?:\d{{13,19}}|\d{{4}}(?:[ -]\d{{4}}){{2,3}}(?:[ -]\d{{1,3}})?"
    rf"|\d{{4}}[ -]\d{{6}}[ -]\d{{4,5}}){_E}"
)
EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]|['’](?=[A-Za-z0-9])){0,63}@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)
IPV4 = re.compile(
    r"(?<![0-9A-Za-z.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
    r"(?![0-9A-Za-z]|\.\d)"
)
IPV6 = re.compile(r"(?<![0-9A-Za-z:.])[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:]*(?![0-9A-Za-z:])")
URL = re.compile(
    r"(?:(?:https?|ftp)://|www\.)[^\s<>\"'`，。！？；、（）《》「」【】\[\]{}|\\^]+", re.IGNORECASE
)
_URL_TRAIL = ".,;:!?)'\"*_~"
_VERSION_BEFORE = re.compile(r"(?:(?<![A-Za-z])(?:version|ver\.?|v)|版本号?)\s*[:：]?\s*$", re.IGNORECASE)
_ORDER_BEFORE = re.compile(
    r"(?:订单|单号|运单|快递|物流|流水|编号|工单|发票|序列号|条码|order|tracking|invoice|serial|ref(?:erence)?|"
    r"no\.?|number|#)\s*(?:号|号码|id|no\.?|number)?\s*[:：#]?\s*$",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")
_NON_ASCII_DIGIT = re.compile(r"[^\D0-9]")  # what \d matches beyond 0-9 (Arabic-Indic, full-width, ...)
_CARD_WORDS = re.compile(r"卡|银行|账号|账户|card|bank|visa|master|amex|unionpay", re.IGNORECASE)

_NAME = r"(?:(?![在住是到我你他她的了从去往址寄送于为和与请把给们家其位离近及或])[\u4e00-\u9fff])"
_ADMIN = (
    rf"(?:{_NAME}{{2,7}}?(?:省|自治区))?(?:{_NAME}{{1,7}}?(?:市|自治州|州|盟))?"
    rf"(?:{_NAME}{{1,7}}?(?:区|县|旗))?(?:{_NAME}{{1,7}}?(?:镇|乡|街道))?"
)
_UNIT = rf"(?:(?:{_NAME}|[A-Za-z]){{0,10}}?(?:\d{{1,5}}|[A-Za-z])(?:号楼|栋|幢|座|单元|层|楼|室|号|户))"
"""A building, unit or room after the house number, its building's name included (SOHO现代城5号楼, 1203室)."""
CN_STREET = re.compile(
    rf"{_ADMIN}(?:{_NAME}|\d){{1,12}}?(?:大道|大街|路|街|巷|弄|胡同|道)"
    rf"(?:[\d一二三四五六七八九十]{{1,3}}(?:段|巷|弄))?\d{{1,5}}(?:-\d{{1,5}})?号(?:院)?{_UNIT}*(?:\d{{1,5}}室?)?"
)
CN_ESTATE = re.compile(
    rf"{_ADMIN}(?:{_NAME}|[A-Za-z]){{2,10}}?(?:小区|花园|公寓|大厦|大楼|家园|新村|社区|广场|中心|城|园|府|公馆|苑|村)"
    rf"(?:\d{{1,4}}|[A-Za-z])(?:号楼|栋|幢|座)"
    rf"(?:\d{{1,3}}单元)?(?:\d{{1,5}}(?:室|号)?)?"
)
_STREET_TYPES = (
    "Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Way|Terrace|Ter|"
    "Parkway|Pkwy|Highway|Hwy|Circle|Cir|Square|Sq|Trail|Trl|Crescent|Close"
)
EN_ADDRESS = re.compile(
    rf"\d(?<![0-9A-Za-z]\d)\d{{0,5}}[A-Za-z]?\s+(?:[A-Z][A-Za-z'-]*\.?\s+){{1,4}}(?P<kind>{_STREET_TYPES})\b\.?"
    r"(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\b)?"
    r"(?P<rest>(?:,?\s*(?:Apt|Apartment|Unit|Suite|Ste|Floor|Fl|#)\.?\s*#?[A-Za-z0-9-]+)?"
    r"(?:,\s*[A-Z][a-z][A-Za-z]*(?:\s[A-Z][a-z][A-Za-z]*){0,2})?"
    r"(?:(?:,\s*|\s+)[A-Z]{2,3}(?![A-Za-z0-9])(?:\s+\d{4}(?![A-Za-z0-9-]))?)?"
    r"(?:,?\s*(?:USA|U\.S\.A\.|United States|UK|U\.K\.|United Kingdom|Canada|Australia)(?![A-Za-z]))?"
    r"(?:,?\s+(?:\d{5}(?:-\d{4})?|[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|[A-Z]\d[A-Z]\s?\d[A-Z]\d)(?![A-Za-z0-9]))?)"
)
"""English street addresses: number, capitalised street name and type, unit, city, state (with an Australian
postcode: ``Sydney NSW 2000``), country and a US ZIP, UK postcode (``London NW1 6XE``) or Canadian postal code,
so that no tail of the address stays behind. (The opening lookbehind follows the first digit: see `PHONE_NATIONAL`.)"""

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
_PROVINCES = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 61 62 63 64 65 71 81 82 "
    "83 91".split()
)
_SECRET_KEYS = frozenset(
    "token access_token refresh_token id_token auth authorization key api_key apikey sig signature session "
    "sessionid session_id sid password passwd pwd pass uid user_id userid openid unionid code secret "
    "client_secret ticket email mail phone mobile tel credential jwt".split()
)
_SECRET_PARTS = ("token", "secret", "passw", "session", "auth", "signature", "credential", "x-amz-")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_HEX24 = re.compile(r"[0-9a-f]{24,}", re.IGNORECASE)
_SEGMENT_SPLIT = re.compile(r"[-_.~]")
_LETTER = re.compile(r"[A-Za-z]")

# Gates. Most texts hold a digit or two but nothing a detector can match, and the detectors' patterns open
# with a lookbehind, so `re` tries them at every position. A pattern therefore runs only where a cheap test
# on the text's *shape* holds: its UTF-8 bytes with every \d character as "0", every ASCII letter as "A" / "a",
# every \s character and every byte of a non-ASCII character as " ", other ASCII as is. Each test is implied
# by every match that can yield a span (the comment beside it says why), so a skipped pattern loses nothing.
_SPACE = re.compile(r"\s")
_SHAPE = bytes(
    ord(" ") if byte >= 0x80 or _SPACE.match(chr(byte))
    else ord("0") if chr(byte).isdigit()
    else ord("A") if chr(byte).isupper()
    else ord("a") if chr(byte).islower()
    else byte
    for byte in range(256)
)
_SEPARATORS = b" -.()"  # all that may stand between the digits of a phone or card number, in shape form
_IPV4_SHAPE = re.compile(rb"0\.0{1,3}\.0{1,3}\.0")  # four dotted octets of 1-3 digits
_NANP_SHAPE = re.compile(rb"000[ .-]0000")  # every PHONE_NANP match ends \d{3}[ .-]\d{4}
_NATIONAL_SHAPE = re.compile(rb"0\)?[ ./-]00")  # PHONE_NATIONAL: its first group ends in a digit, then a separator
_EN_ADDRESS_SHAPE = re.compile(rb"0[Aa]? +A")  # EN_ADDRESS opens \d{1,6}[A-Za-z]?\s+[A-Z]
# An IPV6 match is a whole run of hex digits and colons (its lookarounds reject a hex digit or colon on either
# side), and `ipaddress` accepts such a run only with a "::" or as 8 groups of 1-4 hex digits. For "::": the
# run reaches back from it to a character outside [0-9A-Za-z:.] (or the start), read here on the reversed text.
_IPV6_ZIPPED_REVERSED = re.compile(r"::[0-9A-Fa-f:]*(?![0-9A-Za-z:.])")
_IPV6_FULL = re.compile(r":[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){5}:")  # the inner 7 colons of 8 groups
_IPV6_SHAPE = re.compile(rb"::|:[0Aa]{1,4}(?::[0Aa]{1,4}){5}:")  # both tests at once, in one pass (any letter)
_EMAIL_AT = re.compile(r"@(?<=[A-Za-z0-9._%+-]@)[A-Za-z0-9]")  # EMAIL: local-part character, @, domain
_HAO_AFTER_DIGIT = re.compile(r"号(?<=\d号)")  # CN_STREET: \d{1,5}(?:-\d{1,5})?号
_AT_MARK = PHRASES + MARKS.index(b"@")  # the e-mail mark among `deid_names.LOWER_CUES`' cues
_ESTATE_MARK = re.compile(r"[\dA-Za-z](?:号楼|栋|幢|座)")  # CN_ESTATE: (?:\d{1,4}|[A-Za-z])(?:号楼|栋|幢|座)


def _has_digit(text: str) -> bool:
    if text.isascii():  # \d is then 0-9, and ten substring tests (memchr) beat a regex scan; no generator
        return ("0" in text or "1" in text or "2" in text or "3" in text or "4" in text or "5" in text
                or "6" in text or "7" in text or "8" in text or "9" in text)
    return _DIGIT.search(text) is not None


def _shape(text: str, data: bytes | None = None) -> bytes:
    """The text's shape (see above); ``data``: its UTF-8 bytes, when the caller has them."""
    if not text.isascii() and _NON_ASCII_DIGIT.search(text):
        return _DIGIT.sub("0", text).encode("utf-8", "surrogatepass").translate(_SHAPE)  # the table knows 0-9 only
    return (text.encode("utf-8", "surrogatepass") if data is None else data).translate(_SHAPE)


def luhn_valid(digits: str) -> bool:
    """Luhn (mod 10) check of a digit string."""
    if not digits.isdigit():
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def cn_id_check_char(first17: str) -> str:
    """ISO 7064 MOD 11-2 check character of the first 17 digits of a resident ID."""
    return _ID_CHECK[sum(int(c) * w for c, w in zip(first17, _ID_WEIGHTS, strict=True)) % 11]


def cn_id_valid(text: str) -> bool:
    """True for an 18-character resident ID with a valid region, birth date and check character."""
    value = text.upper()
    if len(value) != 18 or not value[:17].isdigit() or value[:2] not in _PROVINCES:
        return False
    try:
        born = date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    return 1900 <= born.year <= 2099 and cn_id_check_char(value[:17]) == value[17]


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def _random_segment(segment: str) -> bool:
    if _UUID.search(segment) or _HEX24.search(segment):
        return True
    for piece in _SEGMENT_SPLIT.split(segment):
        if len(piece) >= 16 and _LETTER.search(piece) and _DIGIT.search(piece):
            return True
    return False


def url_is_personal(url: str) -> bool:
    """A link carrying a credential, an identity parameter, user info, or a random-looking path token."""
    try:
        parts = urlsplit(url if "://" in url else "http://" + url)
        if "@" in parts.netloc:
            if not placeholder_userinfo(parts.netloc.rsplit("@", 1)[0]):
                return True
        params = [*parse_qsl(parts.query, keep_blank_values=True),
                  *parse_qsl(parts.fragment, keep_blank_values=True)]
    except ValueError:
        return True  # malformed enough that we cannot tell: mask it
    for key, value in params:
        name = key.lower()
        if (name in _SECRET_KEYS or any(part in name for part in _SECRET_PARTS)) and not placeholder_value(value):
            return True
    return any(_random_segment(segment) for segment in parts.path.split("/"))


def _phone_spans(text: str, shape: bytes, joined: bytes, digits_in_text: int) -> list[PiiSpan]:
    """``digits_in_text``: how many \\d characters the text holds (a rule needing more cannot match)."""
    spans = []
    if b"0" * 11 in joined:  # the 11 digits of 1[3-9]\d(?:[\s-]?\d{4}){2}, only \s or - between them
        for match in PHONE_CN.finditer(text):
            digits = _digits(match.group())
            spans.append(PiiSpan("PHONE", match.start(), match.end(), digits[-11:]))
    for pattern, possible in (
        (PHONE_LANDLINE, b"0" * 9 in joined),  # >= 9 digits (+86 10 + 7), only \s, -, ( ) between them
        (PHONE_NATIONAL, digits_in_text >= 9 and _NATIONAL_SHAPE.search(shape) is not None),  # 9-12 digits
        (PHONE_INTL, b"+00000000" in joined),  # "+", then the >= 8 digits kept below, only " .-()" between
        (PHONE_NANP, digits_in_text >= 10 and _NANP_SHAPE.search(shape) is not None),  # 3 + 3 + 4 digits
    ):
        if not possible:
            continue
        for match in pattern.finditer(text):
            digits = _digits(match.group())
            if pattern is PHONE_NATIONAL and (not 9 <= len(digits) <= 12 or date_like(match.group())):
                continue
            if 8 <= len(digits) <= 15 or pattern is not PHONE_INTL:
                spans.append(PiiSpan("PHONE", match.start(), match.end(), _landline_norm(digits)
                                     if pattern is PHONE_LANDLINE else digits))
    return spans


_DATE = re.compile(r"0[1-9][-/.](?:0[1-9]|[12]\d|3[01])(?: |[-/.](?:19|20)\d\d)")


def date_like(value: str) -> bool:
    """``03-28 2536.48``, ``09/27/2023-09/29``: a month and a day (then a space, or a year), not a number
    with its trunk 0 (``03-3456-7890``, ``01 23 45 67 89`` keep a separator other than - / . or a longer group)."""
    return _DATE.match(value) is not None


def _landline_norm(digits: str) -> str:
    """+86 20 8765 4321 and 020-8765-4321 are one number: the national form, with its trunk 0."""
    for prefix in ("0086", "86"):
        if digits.startswith(prefix) and not digits.startswith("0", len(prefix)):
            return "0" + digits[len(prefix):]
    return digits


def _card_spans(text: str, joined: bytes) -> list[PiiSpan]:
    spans: list[PiiSpan] = []
    if b"0" * 13 not in joined:  # a card keeps 13-19 digits, with only " " or "-" between them
        return spans
    for match in CARD.finditer(text):
        digits = _digits(match.group())
        if not (13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_valid(digits)):
            continue
        before = text[max(0, match.start() - 16):match.start()]
        if _ORDER_BEFORE.search(before) and not _CARD_WORDS.search(before):
            continue
        spans.append(PiiSpan("CARD", match.start(), match.end(), digits))
    return spans


def _ip_spans(text: str, shape: bytes, digits_in_text: int) -> list[PiiSpan]:
    spans = []
    if digits_in_text >= 4 and _IPV4_SHAPE.search(shape):  # four octets of 1+ digits
        for match in IPV4.finditer(text):
            value = match.group()
            if value.startswith(("127.", "255.")) or value == "0.0.0.0":
                continue
            if _VERSION_BEFORE.search(text[max(0, match.start() - 10):match.start()]):
                continue
            spans.append(PiiSpan("IP", match.start(), match.end(), value))
    if _IPV6_SHAPE.search(shape) and (
            ("::" in text and _IPV6_ZIPPED_REVERSED.search(text[::-1])) or _IPV6_FULL.search(text)):
        for match in IPV6.finditer(text):
            value = match.group()
            try:
                address = ipaddress.IPv6Address(value)
            except ValueError:
                continue
            groups = [g for g in value.split(":") if g]
            if address.is_loopback or address.is_unspecified:
                continue
            if len(groups) >= 3 or (len(value) >= 6 and any(c.isdigit() for c in value)):
                spans.append(PiiSpan("IP", match.start(), match.end(), address.compressed))
    return spans


def _address_spans(text: str, shape: bytes) -> list[PiiSpan]:
    spans = []
    if not text.isascii():  # both Chinese patterns need a Chinese character
        if "号" in text and _HAO_AFTER_DIGIT.search(text):
            spans += [PiiSpan("ADDRESS", m.start(), m.end(), m.group()) for m in CN_STREET.finditer(text)]
        if any(mark in text for mark in ("栋", "幢", "号楼", "座")) and _ESTATE_MARK.search(text):
            spans += [PiiSpan("ADDRESS", m.start(), m.end(), m.group()) for m in CN_ESTATE.finditer(text)]
    if _EN_ADDRESS_SHAPE.search(shape):
        for match in EN_ADDRESS.finditer(text):
            # "10 Best Street Foods": a street type followed by a capitalised word is a title, not an address
            if not match.group("rest") and re.match(r"[ \t]+[A-Z][a-z]", text[match.end():]):
                continue
            spans.append(PiiSpan("ADDRESS", match.start(), match.end(), " ".join(match.group().lower().split())))
    return spans


def _urls(text: str, lowered: bytes | None) -> list[re.Match[str]]:
    """``URL.finditer(text)``. For an ASCII text (``lowered``: its lower-case bytes), the pattern is tried only
    where a match can start, 3, 4 or 5 characters before "://" (ftp, http, https) or at "www." in any case:
    an ignore-case pattern is otherwise tried at every position. Tried in order, skipping those inside the
    last match, as finditer resumes after one."""
    if lowered is None:  # non-ASCII: lower() may move offsets, and ignore-case matches "ſ" for "s"
        return list(URL.finditer(text))
    starts = []
    at = text.find("://")
    while at >= 0:
        starts += [at - 5, at - 4, at - 3]
        at = text.find("://", at + 1)
    at = lowered.find(b"www.")
    while at >= 0:
        starts.append(at)
        at = lowered.find(b"www.", at + 1)
    found: list[re.Match[str]] = []
    end = 0
    for start in sorted(set(starts)):
        if start >= max(end, 0) and (match := URL.match(text, start)) is not None:
            found.append(match)
            end = match.end()
    return found


_KEPT, _KEPT_MAX_CHARS = 1024, 8000
"""The spans of the last 1,024 texts of up to 8,000 characters are kept (at most a few MiB): a real log repeats
whole messages (a conversation cut into overlapping parts repeats its turns in each, a pasted prompt recurs),
10% of the ShareGPT pool's text within the last thousand texts, none of them longer."""


def find_pii(text: str) -> list[PiiSpan]:
    """Non-overlapping personal-data spans of ``text``, left to right (the longest wins an overlap)."""
    return _scan(text) if len(text) > _KEPT_MAX_CHARS else list(_find_pii(text))


@lru_cache(maxsize=_KEPT)
def _find_pii(text: str) -> tuple[PiiSpan, ...]:
    # a pure function of the text, its spans frozen: a repeated text is looked up, not scanned again
    return tuple(_scan(text))


def _scan(text: str) -> list[PiiSpan]:
    found: list[PiiSpan] = []
    # A text is read as its UTF-8 bytes; an ASCII one's (most) byte offsets are its character offsets. The
    # shape, the lower case and the name cues' automata then share one encoding.
    raw = text.encode("ascii") if text.isascii() else None
    data = text.encode("utf-8") if raw is None else raw
    lowered = data.lower()  # only ASCII letters change: a non-ASCII text's bytes keep their characters' places
    # One pass over the lower-case bytes finds the sign-off phrases (for `find_names`) and the marks the URL and
    # e-mail patterns need: "://", or "www." in any case (only "W" and "w" lower-case to "w"), and "@".
    cues = LOWER_CUES.find_matches_as_indexes(lowered)
    marks = [(which, at) for which, at, _ in cues if which >= PHRASES] if cues else None
    if marks:
        if any(which != _AT_MARK for which, _ in marks):
            for match in _urls(text, lowered if raw is not None else None):
                value = match.group().rstrip(_URL_TRAIL)
                if url_is_personal(value):
                    found.append(PiiSpan("URL", match.start(), match.start() + len(value), value))
        at = next((at for which, at in marks if which == _AT_MARK), -1)  # the first "@", as a byte offset
        if at >= 0 and raw is None:
            at = text.find("@")  # as a character offset
        if at >= 0 and _EMAIL_AT.search(text, at):
            # a match holds one @, at most 64 characters after its start: none starts before the first @ - 64
            found += [PiiSpan("EMAIL", m.start(), m.end(), m.group().lower())
                      for m in EMAIL.finditer(text, max(0, at - 64))]
    # (ten memchr scans find whether an ASCII text has a digit faster than its shape is made and counted)
    shape = (raw.translate(_SHAPE) if raw is not None else _shape(text, data)) if _has_digit(text) else b""
    digits = shape.count(b"0")  # every other detector needs a digit
    if digits >= 8:  # an ID, a card or a phone keeps 8 digits or more
        # ``joined`` serves the tests for 8 or more digits in a row (phones and cards)
        joined = shape.translate(None, _SEPARATORS)
        if digits >= 17 and b"0" * 17 in shape:  # [1-9]\d{16}[\dXx]
            found += [PiiSpan("ID", m.start(), m.end(), m.group().upper())
                      for m in CN_ID.finditer(text) if cn_id_valid(m.group())]
        found += _card_spans(text, joined) + _phone_spans(text, shape, joined, digits)
    if digits:
        found += _ip_spans(text, shape, digits) + _address_spans(text, shape)
    found += find_names(text, data, cues)
    if not found:
        return found
    found = [span for span in found if not is_placeholder(text, span)]
    found.sort(key=lambda s: (s.start, -(s.end - s.start), _RANK[s.type]))
    chosen: list[PiiSpan] = []
    for span in found:
        if not chosen or span.start >= chosen[-1].end:
            chosen.append(span)
    return chosen

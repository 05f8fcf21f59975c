"""Values the detectors match that identify nobody, left in the text (used by `deid_rules.find_pii`).

Real logs are full of examples written to be replaced or copied: ``your-email@example.com``,
``?key=YOUR_API_KEY``, ``555-555-5555``, ``123 Main St, Anytown``, ``John Doe`` / 张三, and public services
everybody uses (the resolver ``8.8.8.8``). Removing them changes the text without protecting anyone, so a span
is kept when it is one of these (`is_placeholder`):

- EMAIL: a domain reserved for examples by RFC 2606 / 6761 (``example.com`` / ``.org`` / ``.net`` and
  anything under ``.example``, ``.test``, ``.invalid``, ``.localhost``), or a local part that is a blank
  to fill in (``your_email``, ``yourname``, ``username``, ``firstname.lastname``; ``email`` and ``me`` only
  at a mailbox provider such as gmail.com, since ``me@alicewong.com`` is somebody's own).
- URL: see `placeholder_value` and `placeholder_userinfo` (a credential parameter whose value is
  ``YOUR_API_KEY``, ``<token>``, ``${KEY}`` or empty; ``user:password@`` user info); used by
  `deid_rules.url_is_personal`.
- PHONE: North American numbers in area code 555 (``555-555-5555``, ``(555) 123-4567``: no such area
  exists), and digit strings that are one digit repeated or a run (``123-456-7890``, ``987-654-3210``). A
  real area code with the exchange 555 (``415-555-0199``) is still removed: the safe side.
- IP: public DNS resolvers (Google, Cloudflare, Quad9, OpenDNS, Level 3, AdGuard, 114DNS, AliDNS, DNSPod,
  Baidu) and the documentation ranges (RFC 5737 ``192.0.2.0/24``, ``198.51.100.0/24``, ``203.0.113.0/24``;
  RFC 3849 ``2001:db8::/32``).
- ADDRESS: an ascending house number (123, 456, 1234) on a stock street (Main, Elm, Oak, Maple ...), or an
  address in Anytown / Anycity / Your City.
- NAME: the stock stand-ins John / Jane Doe, Joe Bloggs, Max Mustermann, 张三 / 李四 / 王五 / 赵六.

Everything else the rules find is removed (the safe side): a real person at ``example.com`` does not exist,
but ``janesmith@email.com`` might, and is removed.
"""

from __future__ import annotations

import ipaddress
import re
from itertools import pairwise

from uxbench.mining.deid_types import PiiSpan

_RESERVED_DOMAINS = frozenset(("example.com", "example.org", "example.net", "example.edu"))
_RESERVED_TLDS = (".example", ".test", ".invalid", ".localhost")
_BLANK_LOCALS = frozenset(
    "user username someone somebody firstnamelastname firstlast firstname lastname fname lname recipient sender "
    "password pass passwd".split())
_BLANK_AT_MAILBOXES = frozenset("email mail emailaddress name me myemail myname mymail".split())
"""Blanks only at a mailbox provider: at a domain of one's own, ``me@alicewong.com`` or ``mail@janedoe.de`` is
a real person's address."""
_MAILBOXES = frozenset(
    "gmail.com googlemail.com outlook.com hotmail.com live.com msn.com yahoo.com icloud.com me.com mac.com "
    "aol.com proton.me protonmail.com gmx.com gmx.de gmx.net web.de mail.ru yandex.ru yandex.com qq.com 163.com "
    "126.com yeah.net sina.com sohu.com foxmail.com".split())
_SEPARATORS = re.compile(r"[._+-]")


def placeholder_email(value: str) -> bool:
    """An address at a reserved domain, or whose local part is a blank to fill in (``your...``, ``username``;
    ``email`` / ``me`` only at a mailbox provider)."""
    local, _, domain = value.lower().rpartition("@")
    if domain in _RESERVED_DOMAINS or domain.endswith(_RESERVED_TLDS):
        return True
    bare = _SEPARATORS.sub("", local)
    return (bare in _BLANK_LOCALS or bare.startswith("your")
            or (bare in _BLANK_AT_MAILBOXES and domain in _MAILBOXES))


_WRAPPERS = "<>{}[]()$%*'\"` "
_VALUE_WORDS = frozenset(
    "your my api key keys token tokens access secret client id app here insert put replace with the a goes "
    "password pass pwd user username code auth bearer jwt session sig signature credential credentials "
    "value placeholder example sample dummy fake test changeme redacted hidden private personal own env "
    "account sid project".split())
_VALUE_SPLIT = re.compile(r"[_\-. ]+")


def placeholder_value(value: str) -> bool:
    """A credential parameter's value that is a blank to fill in: empty, ``YOUR_API_KEY``, ``<token>``,
    ``${API_KEY}``, ``{{ key }}``, ``your-key-here``, ``xxxx``, ``****``, ``...``."""
    bare = value.strip(_WRAPPERS)
    if not bare or set(bare) <= set("xX*.#0-_"):
        return True
    words = [w for w in _VALUE_SPLIT.split(bare.lower()) if w]
    return bool(words) and all(w in _VALUE_WORDS for w in words)


def placeholder_userinfo(userinfo: str) -> bool:
    """``user:password``, ``username:password``, ``<user>:<pass>`` in a URL: a blank, not a credential."""
    return all(placeholder_value(part) for part in userinfo.split(":"))


def _run(digits: str) -> bool:
    """One digit repeated, or a run up or down (1234567890, 9876543210)."""
    if len(set(digits)) == 1:
        return True
    steps = {(int(b) - int(a)) % 10 for a, b in pairwise(digits)}
    return steps in ({1}, {9})


def placeholder_phone(digits: str, written: str) -> bool:
    """North American numbers in area code 555 (none is assigned) and made-up digit runs. ``written``: the
    number as written (a Chinese mobile such as 15550000000 is no North American +1 555 number)."""
    national = digits[1:] if len(digits) == 11 and written.lstrip("+").startswith(("1 ", "1-", "1.", "1(")) \
        else digits
    if len(national) == 10 and national.startswith("555"):
        return True
    return len(digits) >= 7 and _run(digits)


_PUBLIC_RESOLVERS = frozenset(
    "8.8.8.8 8.8.4.4 1.1.1.1 1.0.0.1 1.1.1.2 1.0.0.2 1.1.1.3 1.0.0.3 9.9.9.9 9.9.9.10 9.9.9.11 149.112.112.112 "
    "149.112.112.10 149.112.112.11 208.67.222.222 208.67.220.220 208.67.222.123 208.67.220.123 4.2.2.1 4.2.2.2 "
    "4.2.2.3 4.2.2.4 4.2.2.5 4.2.2.6 94.140.14.14 94.140.15.15 114.114.114.114 114.114.115.115 223.5.5.5 "
    "223.6.6.6 119.29.29.29 182.254.116.116 180.76.76.76 2001:4860:4860::8888 2001:4860:4860::8844 "
    "2606:4700:4700::1111 2606:4700:4700::1001 2620:fe::fe 2620:fe::9 2400:3200::1 2400:3200:baba::1 "
    "2400:da00::6666".split())
_DOCUMENTATION = tuple(ipaddress.ip_network(n) for n in (
    "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"))


def placeholder_ip(value: str) -> bool:
    """A public DNS resolver, or an address of a documentation range."""
    if value in _PUBLIC_RESOLVERS:
        return True
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return False
    return any(address.version == net.version and address in net for net in _DOCUMENTATION)


_STOCK_STREETS = frozenset(
    "main elm oak maple pine cedar first second example fake sample any anywhere your fictional imaginary "
    "street".split())
_STOCK_TOWN = re.compile(r"\b(?:any ?(?:town|city|ville|state|where)|your ?(?:city|town|state))\b", re.IGNORECASE)


def placeholder_address(text: str, span: PiiSpan) -> bool:
    """123 Main St, 456 Elm Street; any address in Anytown / Your City (the span or just after it)."""
    if _STOCK_TOWN.search(text, span.start, min(len(text), span.end + 40)):
        return True
    number, _, rest = text[span.start:span.end].partition(" ")
    digits = number.rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    street = rest.strip().split(" ", 1)[0].strip(".,").lower()
    return len(digits) >= 3 and digits.isdigit() and _run(digits) and street in _STOCK_STREETS


_STOCK_NAMES = frozenset(
    "johndoe janedoe joebloggs johnqpublic richardroe janeroe maxmustermann erikamustermann 张三 李四 王五 "
    "赵六".split())


def placeholder_name(norm: str) -> bool:
    """The stock stand-ins for "any person" (normalised: lower case, no spaces or dots)."""
    return norm.replace(".", "") in _STOCK_NAMES


def is_placeholder(text: str, span: PiiSpan) -> bool:
    """True when ``span`` of ``text`` is an example or public value that identifies nobody (see above)."""
    if span.type == "EMAIL":
        return placeholder_email(span.norm)
    if span.type == "PHONE":
        return placeholder_phone(span.norm, text[span.start:span.end])
    if span.type == "IP":
        return placeholder_ip(span.norm)
    if span.type == "ADDRESS":
        return placeholder_address(text, span)
    if span.type == "NAME":
        return placeholder_name(span.norm)
    return False

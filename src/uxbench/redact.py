"""Keeping secrets out of everything uxbench writes or prints: one module for runs and mining alike.

Two mechanisms, because neither is enough alone:

1. **By structure** (`redact_args`, `redact_json`): what a manifest, run identity or checkpoint key records
   of the model arguments. Inside JSON arguments (`extra_body`, ...) a value whose key looks like a
   credential (`is_secret_key`) becomes `REDACTED`; every value of `extra_headers` does (headers carry
   credentials under any name and never change the answer); user info (`user:password@`) is stripped from
   every URL. An argument that changes the answer (`max_tokens`, `max_new_tokens`, `top_k`,
   `stop_token_ids` ...) is never touched, so it always reaches the run identity: see `is_secret_key`.
2. **By value** (`remember_secret`, `scrub`, `scrub_model`): the values of every secret in play (the API
   key read from the environment, URL passwords, header values, credential-looking argument values) are
   remembered by the process when a provider is configured, and replaced by `REDACTED` in any text that may
   be stored or printed (error messages, model outputs, records, stderr), whatever the text is, e.g. an
   endpoint that echoes `Authorization: Bearer <key>` in a plain-text error page.

Values shorter than `MIN_SECRET_CHARS` (header values: `MIN_HEADER_CHARS`) are not scrubbed by value:
they would match ordinary words. They are still redacted by structure.
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
from collections.abc import Collection, Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import quote, quote_plus, unquote, urlsplit

import orjson
from pydantic import BaseModel

REDACTED = "<redacted>"
NOT_SET = "<not set>"
"""What a manifest records for an `api_key_env` that names no variable set in the environment."""
ENV_NAME_ARGS = frozenset({"api_key_env"})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MIN_SECRET_CHARS = 4
"""Shortest API key, password or credential-keyed value scrubbed by value."""
EDGE_CHARS = 4
"""A piece of a secret this long or longer is scrubbed where a cut left it: at the end of a text (or before a cut
mark, `...` / `…`) when it is the secret's start, at the start of a text (or after a cut mark) when it is the
secret's end. Texts are scrubbed before they are cut (`clip`); this catches texts that others cut, such as a
server that shortens its own error page."""
MIN_HEADER_CHARS = 8
"""Shortest value of a header with an ordinary name scrubbed by value (`X-Api-Key` values: MIN_SECRET_CHARS)."""
HEADER_ARGS = frozenset({"extra_headers"})
"""Model arguments holding HTTP headers: every value is treated as a secret."""

M = TypeVar("M", bound=BaseModel)

# -- which keys hold credentials ------------------------------------------------------------------------
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS = frozenset({
    "key", "apikey", "secret", "password", "passwd", "pwd", "passphrase", "authorization", "auth", "cookie",
    "token", "bearer", "credential", "credentials", "signature", "privatekey",
})
# Words that make a name a count, limit or id list: `max_tokens`, `stop_token_ids`, `thinking_budget`,
# `api_key_env` (the *name* of a variable). Such an argument changes the answer or names no secret.
_NOT_SECRET_WORDS = frozenset({
    "env", "tokens", "max", "min", "num", "limit", "budget", "count", "ids", "length", "size", "stop",
    "eos", "bos", "pad", "special",
})
_SECRET_SUFFIXES = ("apikey", "token", "secret", "password", "passwd", "cookie")


def key_words(name: str) -> list[str]:
    """`X-Api-Key` -> [x, api, key]; `maxNewTokens` -> [max, new, tokens]."""
    return [w.lower() for w in _WORDS.findall(name)]


def is_secret_key(name: str) -> bool:
    """True for a name that looks like it holds a credential: `api_key`, `api-key`, `X-Api-Key`, `apikey`,
    `secret`, `client_secret`, `password`, `passwd`, `authorization`, `auth`, `cookie`, `token`,
    `access_token`, `bearer`, `credentials` ... False for counts, limits and id lists (`max_tokens`,
    `max_new_tokens`, `stop_token_ids`, `thinking_budget`), for `api_key_env` and for `top_k`."""
    words = key_words(name)
    if not words or any(w in _NOT_SECRET_WORDS for w in words):
        return False
    return any(w in _SECRET_WORDS or w.endswith(_SECRET_SUFFIXES) for w in words)


# -- URLs ----------------------------------------------------------------------------------------------
# Up to the last `@` before the path, like urlsplit: an unescaped `@` in a password is stripped too.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#\"'<>]*@")


def strip_userinfo(text: str) -> str:
    """`http://user:password@host/v1` -> `http://host/v1`, for every URL in `text`."""
    return _USERINFO.sub(r"\1", text) if "@" in text else text


def url_credentials(url: str) -> tuple[str, str, str] | None:
    """(url without user info, user, password) when `url` carries user info, else None."""
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return None
    if user is None and password is None:
        return None
    return strip_userinfo(url), unquote(user or ""), unquote(password or "")


# -- by structure --------------------------------------------------------------------------------------
def redact_json(value: Any, *, all_values: bool = False) -> Any:
    """A copy of JSON-like data with credential-keyed values (any depth) replaced by REDACTED and user info
    stripped from URLs in strings. `all_values`: replace every leaf value (headers)."""
    if isinstance(value, Mapping):
        return {
            str(k): REDACTED if is_secret_key(str(k)) else redact_json(v, all_values=all_values)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact_json(v, all_values=all_values) for v in value]
    if all_values:
        return REDACTED
    if isinstance(value, str):
        return strip_userinfo(value)
    return value


def _as_json(raw: str) -> Any | None:
    text = raw.strip()
    if not text.startswith(("{", "[")):
        return None
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, (dict, list)) else None


def redact_args(args: Mapping[str, str]) -> dict[str, str]:
    """Model arguments as they may be written (manifests) and hashed (run ids, mining checkpoint keys).

    A credential-named argument becomes REDACTED (a constant: changing a key changes no id); a JSON value is
    redacted inside (`redact_json`) and re-serialised canonically; `extra_headers` keeps its header names
    only; URLs lose their user info. Every other argument is kept verbatim, so one that changes the answer
    always changes the identity.
    """
    out: dict[str, str] = {}
    for key, value in sorted(args.items()):
        if is_secret_key(key):
            out[key] = REDACTED
            continue
        if key in ENV_NAME_ARGS:  # a variable's name, written only when it names one that is set: a value given
            # there that names none may be a key pasted in its place
            out[key] = str(value) if _ENV_NAME.fullmatch(str(value)) and str(value) in os.environ else NOT_SET
            continue
        text = str(value)
        parsed = _as_json(text)
        if parsed is not None:
            redacted = redact_json(parsed, all_values=key in HEADER_ARGS)
            out[key] = orjson.dumps(redacted, option=orjson.OPT_SORT_KEYS).decode("utf-8")
        elif key in HEADER_ARGS:
            out[key] = REDACTED  # not JSON: the provider rejects it, but it may still hold a key
        else:
            out[key] = strip_userinfo(text)
    return out


# -- by value ------------------------------------------------------------------------------------------
class _Secrets:
    """The values of the secrets this process has seen, in every form they may be written in."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.forms: tuple[str, ...] = ()
        self.byte_forms: tuple[bytes, ...] = ()
        self.heads: tuple[str, ...] = ()
        """The first EDGE_CHARS characters of every form longer than that (a cut form starts with one)."""
        self.byte_heads: tuple[bytes, ...] = ()
        self.byte_tails: tuple[bytes, ...] = ()
        self.cut: tuple[tuple[str, ...], frozenset[str]] = ((), frozenset())
        """The forms longer than EDGE_CHARS (in `forms`' order), and every run of EDGE_CHARS characters inside
        them but their first (where a piece of their end left by a cut may start): `_cut_pieces` looks for a
        piece only where a text goes on with one of those runs."""

    def add(self, forms: Iterable[str]) -> None:
        with self._lock:
            merged = set(self.forms) | {f for f in forms if f}
            # Longest first, so a key is replaced whole before any secret that is a part of it.
            self.forms = tuple(sorted(merged, key=lambda f: (-len(f), f)))
            self.byte_forms = tuple(f.encode("utf-8") for f in self.forms)
            self.heads = tuple(sorted({f[:EDGE_CHARS] for f in self.forms if len(f) > EDGE_CHARS}))
            self.byte_heads = tuple(h.encode("utf-8") for h in self.heads)
            tails = {f[-EDGE_CHARS:] for f in self.forms if len(f) > EDGE_CHARS}
            self.byte_tails = tuple(sorted(t.encode("utf-8") for t in tails))
            long_forms = tuple(f for f in self.forms if len(f) > EDGE_CHARS)
            inner = {f[i:i + EDGE_CHARS] for f in long_forms for i in range(1, len(f) - EDGE_CHARS + 1)}
            self.cut = (long_forms, frozenset(inner))

    def clear(self) -> None:
        with self._lock:
            self.forms, self.byte_forms, self.heads, self.byte_heads, self.byte_tails = (), (), (), (), ()
            self.cut = ((), frozenset())


_SECRETS = _Secrets()


def _forms(value: str) -> set[str]:
    """The value as written raw, URL-encoded and JSON-escaped (and \\u-escaped for non-ASCII)."""
    return {value, quote(value, safe=""), quote_plus(value), orjson.dumps(value).decode("utf-8")[1:-1],
            json.dumps(value)[1:-1]}


def remember_secret(value: str | None, *, min_chars: int = MIN_SECRET_CHARS) -> None:
    """Scrub `value` from every text passed to `scrub` from now on (for the life of the process)."""
    if value and len(value.strip()) >= min_chars:
        _SECRETS.add(_forms(value.strip()) | _forms(value))


def remember_basic_auth(user: str, password: str) -> None:
    """A URL's credentials: the password, and the `Authorization: Basic` form an echo would show."""
    remember_secret(password or user)  # `https://TOKEN@host`: a lone user name is the credential
    if not (user or password):
        return
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    remember_secret(token)


_SHELL_DIRECTORIES = frozenset({"PWD", "OLDPWD"})
"""The shell's working directories: named like a password ("pwd"), but paths, which outputs may quote."""


def remember_environment_keys(names: Iterable[str] = ()) -> None:
    """The keys this process may send, before anything is written: the variables `names` (the roles'
    `api_key_env`) and every credential-named variable of the environment (OPENAI_API_KEY, HF_TOKEN ...) whose
    value reads like a key (16 characters or more, no spaces). A store that writes user text before a model is
    created (a sim run's persona snapshot) scrubs them from then on."""
    for name in names:
        remember_secret(os.environ.get(name))
    for name, value in os.environ.items():
        if (is_secret_key(name) and name not in _SHELL_DIRECTORIES and len(value) >= 16
                and not any(c.isspace() for c in value)):
            remember_secret(value)


def remember_args(args: Mapping[str, Any]) -> None:
    """Every secret value inside model arguments: credential-keyed values at any depth (JSON arguments
    included), all `extra_headers` values, and URL passwords."""
    for key, value in args.items():
        _remember_value(str(key), value, header=str(key) in HEADER_ARGS)


def _remember_value(key: str, value: Any, *, header: bool) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _remember_value(str(k), v, header=header)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _remember_value(key, v, header=header)
    elif isinstance(value, str) and (parsed := _as_json(value)) is not None:
        _remember_value(key, parsed, header=header)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text = str(value)
        if is_secret_key(key):
            remember_secret(text)
        elif header:
            remember_secret(text, min_chars=MIN_HEADER_CHARS)
        found = url_credentials(text) if "://" in text else None
        if found is not None:
            remember_basic_auth(found[1], found[2])


def forget_secrets() -> None:
    """Drop every remembered secret (tests)."""
    _SECRETS.clear()


_USERINFO_BYTES = re.compile(_USERINFO.pattern.encode("ascii"))


def has_secret(text: str | bytes, *, urls: bool = True) -> bool:
    """True when `text` (or UTF-8 bytes) holds a remembered secret (or, with `urls`, a URL with user info). For
    text, a piece of a secret left at a cut counts too (see EDGE_CHARS); for bytes (a serialised record, whose
    strings end in quotes), any secret's first EDGE_CHARS characters do, so the caller scrubs its fields."""
    if isinstance(text, bytes):
        return any(form in text for form in _SECRETS.byte_forms) or (
            urls and b"@" in text and _USERINFO_BYTES.search(text) is not None) or any(
            piece in text for piece in _SECRETS.byte_heads + _SECRETS.byte_tails)
    return any(form in text for form in _SECRETS.forms) or (
        urls and "@" in text and _USERINFO.search(text) is not None) or bool(_cut_pieces(text))


_MARKS = ("...", "…")
_LEAD = " \t\r\n\"'`([{<:=.…"


def _before_cut(text: str, end: int) -> bool:
    """Whether a text was cut at `end`: nothing but blanks and closing quotes after it, or a cut mark."""
    rest = text[end:].lstrip(" \t\r\n")
    return not rest.strip(" \t\r\n\"'`)]}>") or rest.startswith(_MARKS) or rest.startswith(("[truncated", "[cut"))


def _cut_pieces(text: str) -> list[tuple[int, int]]:
    """(start, end) of every piece of a secret that a cut left in `text`: a secret's start ending where the text
    ends or a cut mark follows, and a secret's end opening the text or following a cut mark."""
    pieces: list[tuple[int, int]] = []
    heads = _SECRETS.heads
    if not heads:
        return pieces
    forms, inner = _SECRETS.cut
    if any(head in text for head in heads):  # most texts hold no secret's start: one search per start
        for form in forms:
            head = form[:EDGE_CHARS]
            at = text.find(head)
            while at != -1:
                n = EDGE_CHARS
                while at + n < len(text) and n < len(form) and text[at + n] == form[n]:
                    n += 1
                if n < len(form) and _before_cut(text, at + n):
                    pieces.append((at, at + n))
                at = text.find(head, at + 1)
    # The end of a secret right after a cut mark (or at the text's start), past leading quotes and blanks: its
    # last k characters (EDGE_CHARS <= k < its length), the longest that fits. The text's next EDGE_CHARS
    # characters are then a run of `inner`, which rules out almost every place at once.
    starts = [0]  # the text's start is a cut edge
    for mark in _MARKS:
        at = text.find(mark)
        while at != -1:
            starts.append(at + len(mark))
            at = text.find(mark, at + 1)
    size = len(text)
    for pos in starts:
        while pos < size and text[pos] in _LEAD:
            pos += 1
        run = text[pos:pos + EDGE_CHARS]
        if run not in inner:
            continue
        for form in forms:
            # The suffix form[i:] for i = 1, 2 ... (the longest first) that the text goes on with: it starts
            # with `run`, so only the places of `run` in the form are tried.
            last = len(form) - EDGE_CHARS
            i = form.find(run, 1)
            while i != -1 and i <= last:
                if text.startswith(form[i:], pos):
                    pieces.append((pos, pos + len(form) - i))
                    break
                i = form.find(run, i + 1)
    return pieces


def scrub(text: str, *, urls: bool = True) -> str:
    """`text` with every remembered secret replaced by REDACTED, pieces of one that a cut left at an edge too
    (EDGE_CHARS), and (with `urls`) user info stripped from URLs."""
    if urls:
        text = strip_userinfo(text)
    for form in _SECRETS.forms:
        if form in text:
            text = text.replace(form, REDACTED)
    pieces = _cut_pieces(text) if _SECRETS.heads else []
    if pieces:
        merged: list[list[int]] = []
        for start, end in sorted(pieces):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        for start, end in reversed(merged):
            text = text[:start] + REDACTED + text[end:]
    return text


def clip(text: str, limit: int, mark: str = "...") -> str:
    """`text` scrubbed, then cut to `limit` characters (plus `mark` when cut): the one way to shorten a text
    that may be stored or printed, since a secret cut in two is no longer found whole."""
    text = scrub(text)
    return text if len(text) <= limit else scrub(text[:limit]) + mark


def scrub_data(value: Any, *, urls: bool = True) -> Any:
    """`scrub` applied to every string in JSON-like data. Keys lose whole secrets only: a key is a field's name,
    never a text that was cut, and a short secret's last characters can spell one (`hdr-3-value` ends in the
    key `value`), which would break the record's schema."""
    if isinstance(value, str):
        return scrub(value, urls=urls)
    if isinstance(value, Mapping):
        return {_scrub_whole(str(k)): scrub_data(v, urls=urls) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_data(v, urls=urls) for v in value]
    return value


def _scrub_whole(text: str) -> str:
    """`text` with every remembered secret, written whole, replaced by REDACTED (no cut pieces)."""
    for form in _SECRETS.forms:
        if form in text:
            text = text.replace(form, REDACTED)
    return text


def scrub_model(model: M, *, keep: Collection[str] = (), urls: bool = True,
                only: Collection[str] | None = None) -> M:
    """`model` with every string field scrubbed (nested ones too), except the top-level fields in `keep`
    (content hashes and ids, which a short secret could match by chance). Returns the same object when it
    holds no secret, the common case. `urls=False` leaves user info in URLs alone: for a model's own
    answer, where such a URL is text to judge, not a credential of ours. `only`: the top-level string
    fields that can hold a secret (checked directly, without serialising: for hot paths)."""
    if not urls and not _SECRETS.forms:
        return model
    if only is not None:
        values = [getattr(model, name) for name in only]
        if not any(isinstance(v, str) and has_secret(v, urls=urls) for v in values):
            return model
        return model.model_copy(update={
            name: scrub(v, urls=urls) for name, v in zip(only, values, strict=True) if isinstance(v, str)})
    if not has_secret(model.__pydantic_serializer__.to_json(model, exclude=set(keep) or None), urls=urls):
        return model
    data = model.model_dump(mode="json")
    cleaned = {k: (v if k in keep else scrub_data(v, urls=urls)) for k, v in data.items()}
    return type(model).model_validate(cleaned)


def scrubbed_json(model: M, *, keep: Collection[str] = (), urls: bool = True) -> tuple[M, bytes]:
    """(the model, its JSON by pydantic's serializer) with every secret scrubbed (`scrub_model`): for a
    store that writes the JSON anyway, the common case costs one serialisation and a search."""
    body = model.__pydantic_serializer__.to_json(model)
    if not has_secret(body, urls=urls):
        return model, body
    model = scrub_model(model, keep=keep, urls=urls)
    return model, model.__pydantic_serializer__.to_json(model)


def scrub_exception(err: BaseException) -> BaseException:
    """Scrub an exception's message in place (its `args`) and return it."""
    if err.args and any(isinstance(a, str) and has_secret(a) for a in err.args):
        err.args = tuple(scrub(a) if isinstance(a, str) else a for a in err.args)
    return err

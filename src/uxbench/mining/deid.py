"""De-identification: replace personal data with per-conversation pseudonyms, before anything is written.

`deidentify_session` rewrites every turn's text, every string (and long integer) in ``Turn.meta``, the
replaced replies in ``Session.regenerated`` and ``Session.meta``. Each value found (see `deid_rules` for the
rules and their limits) becomes a placeholder numbered per conversation and per type in order of first
appearance: ``[PHONE_1]``, ``[ID_1]``, ``[CARD_1]``, ``[EMAIL_1]``, ``[IP_1]``, ``[URL_1]``, ``[ADDRESS_1]``.
The same value (after normalisation: digits of a phone or card, lower-case e-mail, ...) gets the same
placeholder everywhere in the conversation; placeholders restart in every conversation.

The `ChangeRecord` of a session holds only the type, the position (turn, field, start and end in the
original text), the placeholder and an HMAC-SHA256 of the normalised value keyed with the de-identification
key, never the value itself, so the record cannot leak what it replaced and equal values can still be
matched across conversations and runs by whoever holds the key.

Key (`resolve_key`): the environment variable ``UXBENCH_DEID_SALT`` when set; otherwise a random key
created once per user in ``$XDG_CONFIG_HOME/uxbench/deid.key`` (``~/.config/uxbench/deid.key``; mode 0600)
and reused by every run, so resumed runs and joins across outputs see the same hashes. Never under the
output directory: a phone number has few enough candidates that, with the key beside the hashes, anyone
holding the output could enumerate them (docs/MINING.md says what the hashes do and do not protect).

`scan_for_values` checks a set of files (JSON, JSON Lines, text, gzip, Parquet) for any original value;
its hits name the file and the value's index, never the value.
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, Field

from uxbench.errors import ConfigError
from uxbench.mining.deid_types import PII_TYPES, PiiSpan
from uxbench.mining.types import Session, Turn

SALT_ENV = "UXBENCH_DEID_SALT"
"""Environment variable holding the de-identification key (takes precedence over the key file)."""
KEY_FILE = "deid.key"
LEGACY_SALT_FILE = "deid.salt"
"""Where uxbench up to 0.1 kept the key: inside ``OUT/work``, beside the hashes it keys."""
MIN_SALT_CHARS = 16
"""Shortest de-identification key accepted from the environment (the key file holds 64 random hex digits)."""
_MIN_INT_DIGITS = 7  # shorter integers cannot be any of the detected types
_INT_LIMIT: int = 10 ** (_MIN_INT_DIGITS - 1)  # the smallest integer of _MIN_INT_DIGITS digits


class PiiChange(BaseModel):
    """One replacement, without the original value."""

    type: str
    """PHONE, ID, CARD, EMAIL, IP, URL or ADDRESS."""
    turn_index: int | None
    """Turn of the change; None for Session.meta."""
    regenerated: bool = False
    """True when the change is in a replaced reply (Session.regenerated)."""
    field: str
    """``content``, ``meta.<path>`` or ``session.meta.<path>``."""
    start: int
    end: int
    """Character offsets in the original text of the field."""
    placeholder: str
    value_hash: str
    """HMAC-SHA256 (hex) of the normalised value, keyed with the de-identification key."""


class ChangeRecord(BaseModel):
    """All replacements made in one conversation."""

    conversation_id: str
    changes: list[PiiChange] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Number of replacements per type (every type present, zeros included)."""
        totals = dict.fromkeys(PII_TYPES, 0)
        for change in self.changes:
            totals[change.type] += 1
        return totals


def value_hash(pii_type: str, norm: str, salt: bytes) -> str:
    """Salted hash of a normalised value (the only trace of it that is ever stored)."""
    return hmac.new(salt, f"{pii_type}\x00{norm}".encode(), hashlib.sha256).hexdigest()


def _salt_bytes(salt: bytes | str) -> bytes:
    key = salt.encode("utf-8") if isinstance(salt, str) else salt
    if not key:
        raise ConfigError("the de-identification salt must not be empty")
    return key


class _Pseudonyms:
    """Placeholder table of one conversation; also collects the change record."""

    def __init__(self, conversation_id: str, salt: bytes,
                 finder: Callable[[str], list[PiiSpan]] | None = None) -> None:
        self.salt = salt
        self.finder = finder or _rules()
        self.table: dict[tuple[str, str], str] = {}
        self.numbers = dict.fromkeys(PII_TYPES, 0)
        self.record = ChangeRecord(conversation_id=conversation_id)

    def placeholder(self, span: PiiSpan) -> str:
        key = (span.type, span.norm)
        if key not in self.table:
            self.numbers[span.type] += 1
            self.table[key] = f"[{span.type}_{self.numbers[span.type]}]"
        return self.table[key]

    def scrub(self, text: str, turn_index: int | None, field: str, regenerated: bool = False) -> str:
        return self.replace(text, self.finder(text), turn_index, field, regenerated)

    def replace(self, text: str, spans: list[PiiSpan], turn_index: int | None, field: str,
                regenerated: bool) -> str:
        """``text`` with ``spans`` (found in it, left to right) replaced; ``text`` itself when there are none."""
        if not spans:
            return text
        pieces: list[str] = []
        cursor = 0
        for span in spans:
            label = self.placeholder(span)
            pieces += [text[cursor:span.start], label]
            cursor = span.end
            self.record.changes.append(PiiChange(
                type=span.type, turn_index=turn_index, regenerated=regenerated, field=field,
                start=span.start, end=span.end, placeholder=label,
                value_hash=value_hash(span.type, span.norm, self.salt),
            ))
        pieces.append(text[cursor:])
        return "".join(pieces)

    def scrub_value(self, value: Any, turn_index: int | None, field: str, regenerated: bool) -> Any:
        """Strings and long integers anywhere in a JSON-like value; other values unchanged. A dict or list
        with nothing replaced is returned as is, not copied (every session's meta: fewer objects for the
        garbage collector to track), as an unchanged turn is."""
        if isinstance(value, str):
            return self.scrub(value, turn_index, field, regenerated)
        if isinstance(value, dict):
            entries = {k: self.scrub_value(v, turn_index, f"{field}.{k}", regenerated) for k, v in value.items()}
            same = type(value) is dict and all(entries[k] is v for k, v in value.items())
            return value if same else entries
        if isinstance(value, (list, tuple)):
            items = [self.scrub_value(v, turn_index, f"{field}[{i}]", regenerated) for i, v in enumerate(value)]
            same = type(value) is list and all(new is old for new, old in zip(items, value, strict=True))
            return value if same else items
        if isinstance(value, int) and not isinstance(value, bool) and len(str(abs(value))) >= _MIN_INT_DIGITS:
            text = str(value)
            scrubbed = self.scrub(text, turn_index, field, regenerated)
            return value if scrubbed == text else scrubbed  # a phone number stored as an int
        return value

    def turns(self, turns: list[Turn], regenerated: bool) -> list[Turn]:
        """The turns de-identified, in order; ``turns`` itself when none changes (most conversations)."""
        out = turns
        for position, turn in enumerate(turns):
            spans = self.finder(turn.content)
            if not spans and not turn.meta:  # the common case, without a call per turn
                continue
            content = self.replace(turn.content, spans, turn.turn_index, "content", regenerated)
            meta = self.scrub_value(turn.meta, turn.turn_index, "meta", regenerated) if turn.meta else turn.meta
            if content is turn.content and meta == turn.meta:
                continue
            if out is turns:
                out = list(turns)
            out[position] = turn.model_copy(update={"content": content, "meta": meta})
        return out


def _inert(value: Any) -> bool:
    """True when `_Pseudonyms.scrub_value` returns ``value`` itself without scanning anything: no string and no
    integer of `_MIN_INT_DIGITS` digits, inside plain dicts and lists (every session's meta: counts and lists)."""
    kind = type(value)
    if kind is int:
        number: int = value
        return -_INT_LIMIT < number < _INT_LIMIT
    if kind is dict:
        return all(_inert(item) for item in value.values())
    if kind is list:
        return all(_inert(item) for item in value)
    return kind is bool or kind is float or value is None


def deidentify_session(session: Session, salt: bytes | str) -> tuple[Session, ChangeRecord]:
    """The session with personal data replaced by placeholders, and the record of what was replaced. A session
    with nothing replaced is returned itself, not copied (no caller changes a session in place)."""
    table = _Pseudonyms(session.conversation_id, _salt_bytes(salt))
    turns = table.turns(session.turns, regenerated=False)
    regenerated = table.turns(session.regenerated, regenerated=True)
    meta = session.meta if _inert(session.meta) else table.scrub_value(session.meta, None, "session.meta", False)
    if turns is session.turns and regenerated is session.regenerated and meta is session.meta:
        return session, table.record
    cleaned = session.model_copy(update={"turns": list(turns), "regenerated": list(regenerated), "meta": meta})
    return cleaned, table.record


_PLACEHOLDER = re.compile(r"\[([A-Z]+)_(\d+)\]")


def deidentify_turns(session: Session, salt: bytes | str,
                     spans: Mapping[tuple[bool, int], list[PiiSpan]]) -> tuple[Session, ChangeRecord]:
    """A second pass over an already de-identified session: replace the given spans of each turn's content
    (keyed by (regenerated, turn_index), positions in that content), with placeholders numbered after the
    ones the first pass left, so that none is reused for another value."""
    def finder_for(key: tuple[bool, int]) -> Callable[[str], list[PiiSpan]]:
        chosen = sorted(spans.get(key, []), key=lambda s: (s.start, -(s.end - s.start)))
        kept: list[PiiSpan] = []
        for span in chosen:
            if not kept or span.start >= kept[-1].end:
                kept.append(span)
        return lambda _text: kept

    table = _Pseudonyms(session.conversation_id, _salt_bytes(salt))
    for turn in [*session.turns, *session.regenerated]:
        for kind, number in _PLACEHOLDER.findall(turn.content):
            if kind in table.numbers:
                table.numbers[kind] = max(table.numbers[kind], int(number))
    out: dict[bool, list[Turn]] = {False: [], True: []}
    for regenerated, turns in ((False, session.turns), (True, session.regenerated)):
        for turn in turns:
            table.finder = finder_for((regenerated, turn.turn_index))
            content = table.scrub(turn.content, turn.turn_index, "content", regenerated)
            out[regenerated].append(turn if content is turn.content else turn.model_copy(update={"content": content}))
    cleaned = session.model_copy(update={"turns": out[False], "regenerated": out[True]})
    return cleaned, table.record


def _rules() -> Callable[[str], list[PiiSpan]]:
    """`deid_rules.find_pii`, imported at its first use: its patterns and the names' automaton take ~0.05 s of
    CPU to build, which a process that only handles keys and records (the mining driver) does not pay."""
    from uxbench.mining.deid_rules import find_pii

    return find_pii


def redact_text(text: str) -> str:
    """Text with every detected value replaced by its bare type (``[PHONE]``): for snippets and logs."""
    spans = _rules()(text)
    for span in reversed(spans):
        text = f"{text[:span.start]}[{span.type}]{text[span.end:]}"
    return text


def new_key() -> bytes:
    """A fresh random key (32 bytes as hex text)."""
    return secrets.token_hex(32).encode("ascii")


def key_file() -> Path:
    """The user's key file: ``$XDG_CONFIG_HOME/uxbench/deid.key``, else ``~/.config/uxbench/deid.key``."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
    root = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return root / "uxbench" / KEY_FILE


def resolve_key(out: str | Path | None = None) -> bytes:
    """The de-identification key: ``UXBENCH_DEID_SALT`` if set, else the user's key file (created, mode
    0600, on first use). With ``out`` (the output directory), refuse an output that holds an old in-output
    key (hashes of two keys must not mix) and a key file that would itself lie under ``out``."""
    if out is not None:
        _refuse_legacy_key(Path(out))
    env = os.environ.get(SALT_ENV, "")
    if env:
        if len(env.strip()) < MIN_SALT_CHARS:
            raise ConfigError(
                f"${SALT_ENV} is {len(env.strip())} characters long; the de-identification key must have at least "
                f"{MIN_SALT_CHARS}: with a short one, the hashes in deid_changes.jsonl give the phone numbers and "
                f"e-mails back to anyone who tries the few possible keys. Use a random one (export "
                f'{SALT_ENV}="$(openssl rand -hex 32)") and keep it, or unset it to use the key file {key_file()}.')
        return env.encode("utf-8")
    path = key_file()
    if out is not None and _is_within(path, Path(out)):
        raise ConfigError(
            f"the de-identification key file {path} would lie inside the output directory {out}, where "
            f"it would make the hashes reversible: set XDG_CONFIG_HOME or {SALT_ENV} to a place outside it")
    return _read_or_create_key(path)


def _refuse_legacy_key(out: Path) -> None:
    legacy = out / "work" / LEGACY_SALT_FILE
    if legacy.exists():
        raise ConfigError(
            f"{legacy} is the de-identification key of an older uxbench, which kept it inside the output, "
            "where anyone holding the output could reverse the hashes of deid_changes.jsonl. Keys now live "
            f"outside the output ({key_file()} or ${SALT_ENV}), and one output never mixes two keys. "
            "Either start over with your key: rerun with --fresh (it deletes OUT/work, that file included); "
            f'or keep the existing hashes: export {SALT_ENV}="$(cat {legacy})" for this and later runs, '
            "then delete that file and rerun.")


def _is_within(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
    except ValueError:
        return False
    return True


def _read_or_create_key(path: Path) -> bytes:
    try:
        stored = path.read_bytes().strip()
    except FileNotFoundError:
        stored = b""
    except OSError as exc:
        raise ConfigError(f"cannot read the de-identification key {path}: {exc}") from None
    if stored:
        return stored
    if path.exists():
        raise ConfigError(f"the de-identification key file {path} is empty: delete it (a new key is then "
                          f"made, and earlier hashes no longer match) or restore it")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")  # mode 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(new_key() + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)  # atomic create-if-absent: of two first runs, one key wins
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    except OSError as exc:
        raise ConfigError(f"cannot create the de-identification key {path}: {exc} "
                          f"(set XDG_CONFIG_HOME or {SALT_ENV})") from None
    return path.read_bytes().strip()


class ScanHit(BaseModel):
    """An original value found in a file: where, and which value (by index), never the value."""

    path: str
    value_index: int
    offset: int
    """Byte offset in the file's (decompressed, for .gz; serialised rows, for Parquet) content."""


def _needles(values: Sequence[str]) -> list[tuple[int, bytes]]:
    needles: list[tuple[int, bytes]] = []
    for index, value in enumerate(values):
        if not value:
            continue
        # as written raw, by orjson (escapes only quotes / controls) and by json.dumps(ensure_ascii=True)
        forms = {value.encode("utf-8"), orjson.dumps(value)[1:-1], json.dumps(value)[1:-1].encode("ascii")}
        needles += [(index, form) for form in forms if form]
    return needles


def _chunks(path: Path, size: int = 1 << 20) -> Iterable[bytes]:
    if path.name.endswith(".parquet"):
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
            yield orjson.dumps(batch.to_pylist(), default=str)
        return
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        while chunk := handle.read(size):
            yield chunk


def scan_for_values(paths: Iterable[str | Path], values: Sequence[str]) -> list[ScanHit]:
    """Every occurrence of any of ``values`` in the files under ``paths`` (directories walked recursively).

    Values are looked for as UTF-8, as JSON-escaped text and with ``\\uXXXX`` escapes; .gz files are
    decompressed and Parquet rows serialised first. Hits carry no value text, so they can be reported.
    """
    import ahocorasick_rs

    needles = _needles(values)
    if not needles:
        return []
    overlap = max(len(n) for _, n in needles) - 1
    # One Aho-Corasick pass per chunk finds every occurrence of every needle (overlapping ones too): a find()
    # per needle made a scan of thousands of seeded values over a real output take tens of minutes.
    matcher = ahocorasick_rs.BytesAhoCorasick([n for _, n in needles])
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        files += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    hits: list[ScanHit] = []
    for path in files:
        seen: set[tuple[int, int]] = set()
        carry, base = b"", 0
        for chunk in _chunks(path):
            data = carry + chunk
            for which, start, _end in matcher.find_matches_as_indexes(data, overlapping=True):
                index = needles[which][0]
                if (index, base + start) not in seen:
                    seen.add((index, base + start))
                    hits.append(ScanHit(path=str(path), value_index=index, offset=base + start))
            keep = min(overlap, len(data))
            carry, base = data[len(data) - keep:], base + len(data) - keep
    return hits

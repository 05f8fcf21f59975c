"""Turns -> sessions: group by conversation, drop duplicate rows, order, and set regenerations apart.

Rules, per conversation (`build_session`):

1. Duplicates: rows of the same message are one message: the same ``message_id`` at the same place
   (turn_index + role + regeneration_index), or, without an id, the same place. The latest by
   ``created_at`` is kept (the later row on a tie or without times). ``meta["duplicates_dropped"]`` counts
   the others, and ``meta["duplicates_with_other_text"]`` those of them whose text differed from the kept
   row (an edited message logged twice). A message id is taken as unique per conversation and turn: an id
   that a different turn reuses never drops that turn; both are kept and ``meta["reused_message_ids"]``
   counts the turns that share an id with another turn.
2. Order: by (turn_index, user before assistant, regeneration_index, created_at, input order).
3. Regenerations: a reply answered again is never a new turn. When several replies share a turn_index, the
   last regeneration stays in ``turns`` and the replaced ones go to ``Session.regenerated``. A reply flagged
   as a regeneration (``regeneration_index > 0`` or ``meta["regenerated"]``) that got its own turn_index
   replaces the reply just before it, and a copy of the prompt logged between them is dropped. In the
   product export every regenerated row repeats its prompt with the same turn_index: the prompt is kept
   once (``meta["repeated_prompt_rows"]``; the first copy, whose time is when the user asked, unless the text
   was edited, in which case the edited prompt that the final reply answers is kept and
   ``meta["edited_prompts"]`` counts it). Signals therefore never see a regeneration as a repeated question.
4. ``meta["alternation_issues"]`` lists ``{"turn_index", "issue"}`` for ``consecutive_user``,
   ``consecutive_assistant`` and ``starts_with_assistant``; the turns are kept as they are.
5. ``has_timestamps`` is true when every kept turn has ``created_at``.

Turn indices are kept as in the source (the product export numbers 2*convidx and 2*convidx+1, so gaps are
possible); use list positions for adjacency.

`build_sessions` is a pure function over one batch of turns (in memory). For inputs larger than memory,
`group_to_sessions` hashes conversation ids into K bucket files, then groups one bucket at a time, so memory
is bounded by the largest bucket. The bucket files hold raw (not yet de-identified) text: they are written
in a private directory (mode 0700) under ``workdir``, each is deleted as soon as it has been grouped, and the
directory is removed when the iteration ends or is abandoned. Put ``workdir`` outside any output directory.
"""

from __future__ import annotations

import os
import re
import shutil
import zlib
from collections.abc import Generator, Iterable, Sequence
from datetime import datetime, timezone
from itertools import pairwise
from pathlib import Path
from typing import IO, Any, NamedTuple

import orjson
from pydantic_core import to_jsonable_python

from uxbench.errors import DataError
from uxbench.mining.types import Session, Turn

BUCKET_DIR = "session-buckets"
_SUMMED_META = ("duplicates_dropped", "duplicates_with_other_text", "reused_message_ids", "repeated_prompt_rows",
                "edited_prompts")
_ROLE_RANK = {"user": 0, "assistant": 1}
_SPACES = re.compile(r"\s+")


_NO_TIME = float("-inf")
"""`_ts` of a turn without a time: before every time."""


def _ts(moment: datetime | None) -> float:
    if moment is None:
        return _NO_TIME
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


def dedupe_key(turn: Turn) -> tuple[Any, ...]:
    """Identity of a message: its place (turn, role, regeneration) and, when the source gives one, its id.

    The place is always part of it: ids are unique per conversation and turn, so a row whose id another
    turn already used is a different message, never a duplicate to drop."""
    return (turn.message_id or "", turn.turn_index, turn.role, turn.regeneration_index)


class DedupeResult(NamedTuple):
    kept: list[Turn]
    """One row per message, in input order."""
    dropped: int
    """Rows dropped as copies of a kept row."""
    other_text: int
    """Of the dropped rows, those whose text differed from the kept row's."""
    reused_ids: int
    """Kept turns whose message id a turn at another place (turn_index, role) also carries."""


def dedupe_turns(turns: Sequence[Turn]) -> DedupeResult:
    """Latest row per `dedupe_key` (later input wins ties), with counts of what was dropped or shared."""
    keys = [(t.message_id or "", t.turn_index, t.role, t.regeneration_index) for t in turns]  # `dedupe_key`, inline
    best = dict(zip(keys, range(len(keys)), strict=True))  # the last row of each key: the answer unless a key repeats
    if len(best) == len(keys):  # every row a message of its own (the common conversation): nothing to drop
        kept, other_text = list(turns), 0
    else:
        best.clear()
        for position, (key, turn) in enumerate(zip(keys, turns, strict=True)):
            held = best.get(key)
            if held is None or _ts(turn.created_at) >= _ts(turns[held].created_at):
                best[key] = position
        kept = [turns[i] for i in sorted(best.values())]
        other_text = sum(1 for position, (key, turn) in enumerate(zip(keys, turns, strict=True))
                         if best[key] != position and not _same_text(turn.content, turns[best[key]].content))
    places: dict[str, set[tuple[int, str]]] = {}
    ids = [(turn.message_id, turn) for turn in kept if turn.message_id]
    for mid, turn in ids:
        places.setdefault(str(mid), set()).add((turn.turn_index, turn.role))
    # a prompt logged again for a regeneration may keep its id: that is the same message, not a reuse
    reused = sum(1 for mid, _ in ids if len(places[str(mid)]) > 1)
    return DedupeResult(kept, len(turns) - len(kept), other_text, reused)


def is_regeneration(turn: Turn) -> bool:
    """True for a reply that replaced an earlier reply to the same prompt."""
    return turn.role == "assistant" and (turn.regeneration_index > 0 or turn.meta.get("regenerated") is True)


def _same_text(a: str, b: str) -> bool:
    return _SPACES.sub(" ", a).strip() == _SPACES.sub(" ", b).strip()


def alternation_issues(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """Places where the conversation does not alternate user / assistant."""
    issues: list[dict[str, Any]] = []
    if turns and turns[0].role == "assistant":
        issues.append({"turn_index": turns[0].turn_index, "issue": "starts_with_assistant"})
    for prev, turn in pairwise(turns):
        if prev.role == turn.role:
            issues.append({"turn_index": turn.turn_index, "issue": f"consecutive_{turn.role}"})
    return issues


def build_session(conversation_id: str, turns: Sequence[Turn]) -> Session:
    """One conversation's rows (any order, duplicates allowed) -> a Session, by the rules above."""
    for turn in turns:
        if turn.conversation_id != conversation_id:
            raise DataError("a session was given turns of another conversation", field="conversation_id")
    unique, dropped, other_text, reused_ids = dedupe_turns(turns)
    order = sorted([(turn.turn_index, _ROLE_RANK[turn.role], turn.regeneration_index,
                     _NO_TIME if turn.created_at is None else _ts(turn.created_at), i)
                    for i, turn in enumerate(unique)])  # i last: unique, so the turns are never compared
    out: list[Turn] = []
    regenerated: list[Turn] = []
    repeated_prompts = edited_prompts = 0
    for turn in (unique[place[-1]] for place in order):
        last = out[-1] if out else None
        if last is not None and last.turn_index == turn.turn_index and last.role == turn.role:
            if turn.role == "assistant":
                regenerated.append(last)
                out[-1] = turn
            else:
                repeated_prompts += 1
                if not _same_text(last.content, turn.content):
                    edited_prompts += 1
                    out[-1] = turn
            continue
        if last is not None and turn.role == "assistant" and (  # `is_regeneration`, inline (a call per turn)
                turn.regeneration_index > 0 or turn.meta.get("regenerated") is True):
            if last.role == "assistant":
                regenerated.append(out.pop())
            elif (len(out) >= 3 and out[-2].role == "assistant" and out[-3].role == "user"
                  and _same_text(out[-3].content, last.content)):
                out.pop()  # the prompt logged again for the regeneration
                repeated_prompts += 1
                regenerated.append(out.pop())
        out.append(turn)
    return Session(
        conversation_id=conversation_id,
        turns=out,
        regenerated=regenerated,
        has_timestamps=bool(out) and all(t.created_at is not None for t in out),
        meta={
            "duplicates_dropped": dropped,
            "duplicates_with_other_text": other_text,
            "reused_message_ids": reused_ids,
            "repeated_prompt_rows": repeated_prompts,
            "edited_prompts": edited_prompts,
            "alternation_issues": alternation_issues(out),
        },
    )


def build_sessions(turns: Iterable[Turn]) -> list[Session]:
    """Pure batch function: turns of any conversations -> Sessions sorted by conversation_id."""
    groups: dict[str, list[Turn]] = {}
    for turn in turns:
        groups.setdefault(turn.conversation_id, []).append(turn)
    return [build_session(cid, groups[cid]) for cid in sorted(groups)]


def bucket_of(conversation_id: str, n_buckets: int) -> int:
    """Stable bucket of a conversation (the same in every process; Python's hash() is salted)."""
    return zlib.crc32(conversation_id.encode("utf-8")) % n_buckets


def _bucket_path(spill: Path, bucket: int) -> Path:
    return spill / f"bucket-{bucket:05d}.jsonl"


_TURN_JSON = Turn.__pydantic_serializer__.to_json
_TURN_FROM_JSON = Turn.__pydantic_validator__.validate_json
"""`Turn.model_validate_json`'s validator, called without that method's own Python (a fifth of its time here)."""


def spill_line(turn: Turn) -> bytes:
    """A turn as one line of a grouping bucket: its conversation id (JSON, so no raw tab) and its JSON."""
    # the serializer's bytes: `model_dump_json`'s, without making a str of them first (a third of its time here)
    return orjson.dumps(turn.conversation_id) + b"\t" + _TURN_JSON(turn) + b"\n"


_FIELDS_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS


def fields_line(fields: dict[str, Any]) -> bytes | None:
    """`spill_line` of ``Turn(**fields)`` for fields already of their Turn field's types, in its field order
    (`logformat.canonical_fields`), written by orjson without making the Turn (which costs twice the writing): the
    same bytes. Dates, times and anything orjson does not know natively are handed to pydantic's own conversion
    for JSON (`to_jsonable_python`); None when orjson cannot write a value (an integer past 64 bits: pydantic's
    serializer can), for the caller to make the Turn."""
    try:
        body = orjson.dumps(fields, default=to_jsonable_python, option=_FIELDS_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError
        return None
    return orjson.dumps(fields["conversation_id"]) + b"\t" + body + b"\n"


def session_of_lines(conversation_id: str, lines: Sequence[bytes]) -> Session:
    """`build_session` over bucket lines (`spill_line`) of one conversation, in their order. Strict: the lines are
    the serializer's output of validated turns, every value already of its field's JSON type, so no coercion is
    looked for (a third less time than the lax parse, the same turns)."""
    turns: list[Turn] = [_TURN_FROM_JSON(line.split(b"\t", 1)[1], strict=True) for line in lines]
    return build_session(conversation_id, turns)


class BucketWriter:
    """The bucket files of a spill directory, opened on first use (mode 0600), closed by `close`."""

    def __init__(self, spill: Path, n_buckets: int) -> None:
        if n_buckets < 1:
            raise ValueError("n_buckets must be at least 1")
        self.spill = spill
        self.n_buckets = n_buckets
        self._handles: dict[int, IO[bytes]] = {}

    def write(self, conversation_id: str, line: bytes) -> None:
        bucket = bucket_of(conversation_id, self.n_buckets)
        handle = self._handles.get(bucket)
        if handle is None:
            fd = os.open(_bucket_path(self.spill, bucket), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            handle = self._handles[bucket] = os.fdopen(fd, "wb", buffering=1 << 16)
        handle.write(line)

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()


class MemoryBuckets:
    """`BucketWriter`'s grouping held in memory, for an input small enough to hold whole (the driver decides):
    `grouped` gives the conversations in `grouped_lines`'s order for the same ``n_buckets`` (bucket by bucket, by
    id within a bucket, each conversation's lines in the order written), with no file and no id to parse again."""

    def __init__(self, n_buckets: int) -> None:
        if n_buckets < 1:
            raise ValueError("n_buckets must be at least 1")
        self.n_buckets = n_buckets
        self._groups: dict[str, list[bytes]] = {}

    def write(self, conversation_id: str, line: bytes) -> None:
        group = self._groups.get(conversation_id)
        if group is None:
            self._groups[conversation_id] = [line]
        else:
            group.append(line)

    def close(self) -> None:
        """Nothing to flush (`BucketWriter`'s interface)."""

    def grouped(self) -> Generator[tuple[str, list[bytes]], None, None]:
        """(conversation id, its lines), each group released as it is handed out."""
        groups, self._groups = self._groups, {}
        for conversation_id in sorted(groups, key=lambda cid: (bucket_of(cid, self.n_buckets), cid)):
            yield conversation_id, groups.pop(conversation_id)


def private_spill_dir(workdir: str | Path) -> Path:
    """A fresh, private (0700) bucket directory under ``workdir`` (leftovers of an interrupted run deleted)."""
    spill = Path(workdir) / BUCKET_DIR
    if spill.exists():
        shutil.rmtree(spill)  # this stage always restarts whole
    spill.mkdir(parents=True, mode=0o700)
    os.chmod(spill, 0o700)  # mkdir's mode is filtered by the umask
    return spill


def grouped_lines(spill: Path, n_buckets: int) -> Generator[tuple[str, list[bytes]], None, None]:
    """(conversation id, its bucket lines in input order), bucket by bucket, by id within a bucket; each bucket
    file is deleted once read (it holds raw text)."""
    for bucket in range(n_buckets):
        path = _bucket_path(spill, bucket)
        if not path.exists():
            continue
        groups: dict[str, list[bytes]] = {}
        with path.open("rb") as handle:
            for line in handle:
                if line.strip():
                    groups.setdefault(orjson.loads(line[: line.index(b"\t")]), []).append(line)
        path.unlink()
        for conversation_id in sorted(groups):
            yield conversation_id, groups[conversation_id]


def group_to_sessions(
    turns: Iterable[Turn], workdir: str | Path, n_buckets: int = 64
) -> Generator[Session, None, None]:
    """Sessions of an input of any size and order, through K bucket files on disk.

    Sessions come bucket by bucket, sorted by conversation_id within a bucket: the order is deterministic
    for a given ``n_buckets`` (sort downstream if a global order is needed). Memory holds one bucket.
    """
    if n_buckets < 1:
        raise ValueError("n_buckets must be at least 1")
    return _grouped(turns, Path(workdir), n_buckets)


def _grouped(turns: Iterable[Turn], workdir: Path, n_buckets: int) -> Generator[Session, None, None]:
    spill = private_spill_dir(workdir)
    try:
        writer = BucketWriter(spill, n_buckets)
        try:
            for turn in turns:
                writer.write(turn.conversation_id, spill_line(turn))
        finally:
            writer.close()
        for conversation_id, lines in grouped_lines(spill, n_buckets):
            yield session_of_lines(conversation_id, lines)
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def summarize_sessions(sessions: Iterable[Session]) -> dict[str, int]:
    """Totals for a data card: sessions, turns, regenerations, dropped duplicates, issues, timestamps."""
    totals = dict.fromkeys(
        ("sessions", "turns", "regenerated_replies", *_SUMMED_META, "sessions_with_alternation_issues",
         "sessions_with_timestamps"), 0,
    )
    for session in sessions:
        totals["sessions"] += 1
        totals["turns"] += len(session.turns)
        totals["regenerated_replies"] += len(session.regenerated)
        for key in _SUMMED_META:
            totals[key] += int(session.meta.get(key, 0))
        totals["sessions_with_alternation_issues"] += bool(session.meta.get("alternation_issues"))
        totals["sessions_with_timestamps"] += session.has_timestamps
    return totals

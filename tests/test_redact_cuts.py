"""Pieces of a secret left at a cut (`redact._cut_pieces`): the indexed search finds what the plain one did.

The plain search below is the earlier implementation (every form, every suffix length, at every cut edge); the
indexed one only looks where a text goes on with a run of characters from inside a secret.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from uxbench.redact import (
    _LEAD,
    _MARKS,
    _SECRETS,
    EDGE_CHARS,
    REDACTED,
    _before_cut,
    _cut_pieces,
    forget_secrets,
    has_secret,
    remember_secret,
    scrub,
)


@pytest.fixture(autouse=True)
def _no_remembered_secrets() -> Iterator[None]:
    forget_secrets()
    yield
    forget_secrets()


def plain_cut_pieces(text: str) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    for form in _SECRETS.forms:
        if len(form) <= EDGE_CHARS:
            continue
        head = form[:EDGE_CHARS]
        at = text.find(head)
        while at != -1:
            n = EDGE_CHARS
            while at + n < len(text) and n < len(form) and text[at + n] == form[n]:
                n += 1
            if n < len(form) and _before_cut(text, at + n):
                pieces.append((at, at + n))
            at = text.find(head, at + 1)
        for mark in ("", *_MARKS):
            at = text.find(mark) if mark else 0
            while at != -1:
                start = at + len(mark)
                rest = text[start:].lstrip(_LEAD)
                skip = len(text) - start - len(rest)
                for k in range(len(form) - 1, EDGE_CHARS - 1, -1):
                    if rest.startswith(form[-k:]):
                        pieces.append((start + skip, start + skip + k))
                        break
                at = text.find(mark, at + 1) if mark else -1
    return sorted(pieces)


@pytest.mark.parametrize(("text", "found"), [
    ("error: sk-live-abcdef", "sk-live-abcdef"),  # the whole key is no cut piece
    ("error: sk-live-ab", "sk-live-ab"),  # its start, where the text ends
    ("error: sk-live-ab... more", "sk-live-ab"),  # before a cut mark
    ("live-abcdef9 and more", "live-abcdef9"),  # its end, opening the text
    ("see …'e-abcdef9 there", "e-abcdef9"),  # after a cut mark and a quote
    ("....abcdef9", "abcdef9"),  # dots are both a cut mark and leading punctuation
    ("nothing here", None),
])
def test_written_cases(text: str, found: str | None) -> None:
    remember_secret("sk-live-abcdef9")
    assert sorted(_cut_pieces(text)) == plain_cut_pieces(text)
    if found is not None and found != "sk-live-abcdef":
        assert has_secret(text)
        assert found not in scrub(text) and REDACTED in scrub(text)


def test_random_texts_find_the_same_pieces() -> None:
    rng = random.Random(29)
    alphabet = "ab.…'\" \n(=:xyz-_"
    for _ in range(300):
        forget_secrets()
        secrets = ["".join(rng.choice("abxyz-_.") for _ in range(rng.randint(4, 14))) for _ in range(rng.randint(1, 3))]
        for secret in secrets:
            remember_secret(secret)
        for _ in range(20):
            parts = []
            for _ in range(rng.randint(0, 8)):
                r = rng.random()
                if r < 0.3:
                    secret = rng.choice(secrets)
                    i = rng.randint(0, len(secret))
                    parts.append(secret[i:rng.randint(i, len(secret))])
                elif r < 0.45:
                    parts.append(rng.choice(["...", "…", " ", "'", '"', "[cut", "[truncated"]))
                else:
                    parts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))))
            text = "".join(parts)
            assert sorted(_cut_pieces(text)) == plain_cut_pieces(text), (text, secrets)


def test_forgetting_clears_the_index() -> None:
    remember_secret("sk-live-abcdef9")
    assert _SECRETS.cut[0] and _SECRETS.cut[1]
    forget_secrets()
    assert _SECRETS.cut == ((), frozenset())
    assert _cut_pieces("live-abcdef9") == []

"""`jsonl_blocks` + `block_lines` (the mining read's blocks, split in a worker) give `jsonl_lines`'s lines."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from uxbench.data.readers import block_lines, jsonl_blocks, jsonl_lines

CONTENTS = {
    "plain": b'{"a": 1}\n{"b": 2}\n',
    "bom, blank and spaced lines": b'\xef\xbb\xbf{"a": 1}\n\n  \n{"b": "x y"}\n\t\n{"c": 3}\n',
    "no final newline": b'{"a": 1}\n{"b": 2}',
    "crlf": b'{"a": 1}\r\n\r\n{"b": 2}\r\n',
    "a line longer than the block": b'{"a": 1}\n{"long": "' + b"x" * 300 + b'"}\n{"c": 3}\n',
    "only newlines": b"\n\n\n",
    "empty": b"",
    "a bom alone": b"\xef\xbb\xbf",
    "a lone line": b'{"a": "\xc3\xa9"}',
}


def _blocked(path: Path, size: int) -> list[tuple[int, bytes]]:
    return [line for first, block in jsonl_blocks(path, size) for line in block_lines(first, block)]


@pytest.mark.parametrize("name", sorted(CONTENTS))
@pytest.mark.parametrize("size", [1, 2, 7, 64, 1 << 20])
@pytest.mark.parametrize("gz", [False, True])
def test_blocks_split_into_the_lines_of_a_serial_read(tmp_path: Path, name: str, size: int, gz: bool) -> None:
    path = tmp_path / ("log.jsonl.gz" if gz else "log.jsonl")
    path.write_bytes(gzip.compress(CONTENTS[name]) if gz else CONTENTS[name])
    assert _blocked(path, size) == list(jsonl_lines(path))


def test_blocks_end_after_a_newline_and_hold_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(b'{"n": %d}\n' % i for i in range(100)))
    blocks = list(jsonl_blocks(path, 50))
    assert all(block.endswith(b"\n") for _, block in blocks)
    firsts = [1 + sum(block.count(b"\n") for _, block in blocks[:i]) for i in range(len(blocks))]
    assert [first for first, _ in blocks] == firsts and len(blocks) > 10
    assert b"".join(block for _, block in blocks) == path.read_bytes()

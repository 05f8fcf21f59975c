"""Atomic writes and the clean-up of temporaries left by a killed writer."""

from __future__ import annotations

from pathlib import Path

from uxbench.fileio import TEMP_GLOB, atomic_write_bytes, atomic_write_lines, remove_stale_temps


def test_atomic_writes_leave_no_temporaries(tmp_path: Path) -> None:
    atomic_write_bytes(tmp_path / "a.json", b"{}")
    atomic_write_lines(tmp_path / "b.jsonl", [b"1", b"2"])
    assert (tmp_path / "b.jsonl").read_bytes() == b"1\n2\n"
    assert list(tmp_path.glob(TEMP_GLOB)) == []


def test_stale_temporaries_are_removed(tmp_path: Path) -> None:
    # what a writer killed between creating its temporary and the rename leaves behind
    (tmp_path / ".summary.json.tmp-k3j2h1").write_bytes(b"half")
    (tmp_path / ".part-000001._DONE.tmp-4242").write_bytes(b"")
    (tmp_path / "summary.json").write_bytes(b"{}")
    assert remove_stale_temps(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]

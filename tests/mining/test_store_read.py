"""`store.read_shard` reads a checkpoint shard as ``pq.read_table`` does, without importing pyarrow.dataset."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from uxbench.mining.pipeline.store import read_shard, write_table


def _shard(tmp_path: Path) -> Path:
    path = tmp_path / "part-000000.parquet"
    rows = pa.struct([("turn_index", pa.int64()), ("evidence", pa.string())])
    table = pa.table({
        "conversation_id": pa.array(["a", "b", "c"]),
        "session": pa.array(['{"x": 1}', None, "é 中文"]),
        "turn_rows": pa.array([[{"turn_index": 1, "evidence": None}], [], [{"turn_index": 3, "evidence": "x"}]],
                              type=pa.list_(rows)),
        "dedup_minhash": pa.array([b"\x00\x01", None, b""], type=pa.binary()),
    })
    write_table(path, table)
    return path


def test_read_shard_equals_read_table(tmp_path: Path) -> None:
    path = _shard(tmp_path)
    assert read_shard(path).equals(pq.read_table(path))
    for columns in (["conversation_id"], ["turn_rows", "conversation_id"], ["dedup_minhash", "session"]):
        got, want = read_shard(path, columns), pq.read_table(path, columns=columns)
        assert got.equals(want) and got.column_names == columns


def test_read_shard_does_not_import_pyarrow_dataset(tmp_path: Path) -> None:
    path = _shard(tmp_path)
    code = ("import sys; from uxbench.mining.pipeline.store import read_shard; "
            f"read_shard({str(path)!r}, ['conversation_id']); print('pyarrow.dataset' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "False"

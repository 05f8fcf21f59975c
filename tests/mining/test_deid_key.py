"""The de-identification key lives outside the output: the change log's hashes cannot be reversed from the
output directory alone, the key is reused across runs, and an output holding an old in-output key is
refused with a message that says what to do."""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import re
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from pipeline_support import PHONE_CN, write_log

from uxbench.errors import ConfigError
from uxbench.mining.deid import SALT_ENV, key_file, resolve_key, scan_for_values, value_hash
from uxbench.mining.pipeline import MineConfig, run_pipeline

_HEX64 = re.compile(rb"[0-9a-f]{64}")


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config-home"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv(SALT_ENV, raising=False)
    return home


def mine(log: Path, out: Path, **options: object) -> None:
    run_pipeline(MineConfig(inputs=(str(log),), out=str(out), llm=False, workers=1, **options))  # type: ignore[arg-type]


def readable(path: Path) -> bytes:
    """A file as an attacker reads it: Parquet rows serialised, gzip decompressed, anything else raw."""
    if path.suffix == ".parquet":
        return orjson.dumps(pq.read_table(path).to_pylist(), default=str)
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes())
    return path.read_bytes()


def enumerate_block(out: Path, prefix: str) -> list[str]:
    """Try every number of a 10^4 block against every hash in `out`, keyed with every key-like value found in
    `out` (64-hex tokens, short files): the numbers recovered."""
    contents = [readable(p) for p in sorted(out.rglob("*")) if p.is_file()]
    hashes = {m.decode() for c in contents for m in _HEX64.findall(c)}
    keys = {m for c in contents for m in _HEX64.findall(c)} | {c.strip() for c in contents if 0 < len(c) < 1024}
    found = []
    for key in keys:
        for n in range(10_000):
            number = f"{prefix}{n:04d}"
            if value_hash("PHONE", number, key) in hashes:
                found.append(number)
    return found


def test_a_seeded_mobile_number_is_not_recoverable_from_the_output_alone(tmp_path: Path, config_home: Path) -> None:
    log = write_log(tmp_path / "log.jsonl")
    out = tmp_path / "out"
    mine(log, out)
    key = key_file()
    assert key.is_file() and key.parent == config_home / "uxbench" and key.stat().st_mode & 0o077 == 0
    changes = [json.loads(line) for line in (out / "deid_changes.jsonl").read_text("utf-8").splitlines()]
    phone_hash = value_hash("PHONE", PHONE_CN, key.read_bytes().strip())
    assert phone_hash in {c["value_hash"] for r in changes for c in r["changes"]}  # keyed with the user key
    assert scan_for_values([out], [key.read_text().strip()]) == []  # the key is nowhere under OUT
    assert enumerate_block(out, PHONE_CN[:7]) == []
    # The attack works as soon as the key lies beside the hashes (as `work/deid.salt` did): the test can fail.
    (out / "leaked.key").write_bytes(key.read_bytes())
    assert enumerate_block(out, PHONE_CN[:7]) == [PHONE_CN]


def test_the_key_is_reused_across_runs_and_outputs(tmp_path: Path, config_home: Path) -> None:
    log = write_log(tmp_path / "log.jsonl")
    mine(log, tmp_path / "a")
    mine(log, tmp_path / "b", fresh=True)
    a, b = ((tmp_path / d / "deid_changes.jsonl").read_bytes() for d in "ab")
    assert a == b  # equal values join across outputs
    assert resolve_key() == key_file().read_bytes().strip()


def test_environment_variable_wins(config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "from-the-environment")
    assert resolve_key() == b"from-the-environment"
    assert not key_file().exists()


def test_an_old_in_output_key_is_refused_until_fresh(tmp_path: Path, config_home: Path) -> None:
    log = write_log(tmp_path / "log.jsonl")
    out = tmp_path / "out"
    mine(log, out)
    legacy = out / "work" / "deid.salt"
    legacy.write_bytes(hashlib.sha256(b"old").hexdigest().encode() + b"\n")
    with pytest.raises(ConfigError) as info:
        mine(log, out)
    message = str(info.value)
    assert str(legacy) in message and "--fresh" in message and SALT_ENV in message
    mine(log, out, fresh=True)
    assert not legacy.exists()


def test_a_key_file_inside_the_output_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SALT_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "out" / "cfg"))
    with pytest.raises(ConfigError, match="inside the output directory"):
        resolve_key(tmp_path / "out")


def test_key_file_creation_is_private_and_stable(config_home: Path) -> None:
    first = resolve_key()
    assert len(first) == 64 and resolve_key() == first
    assert key_file().stat().st_mode & 0o777 == 0o600
    assert (config_home / "uxbench").stat().st_mode & 0o077 == 0
    key_file().write_bytes(b"")
    with pytest.raises(ConfigError, match="empty"):
        resolve_key()


def test_value_hash_is_an_hmac_of_the_key() -> None:
    expected = hmac.new(b"k", b"PHONE\x0013812345678", hashlib.sha256).hexdigest()
    assert value_hash("PHONE", "13812345678", b"k") == expected

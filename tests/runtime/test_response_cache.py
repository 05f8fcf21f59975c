"""ResponseCache on a real SQLite file, and the request key recipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from uxbench.runtime.cache import CacheError, ResponseCache, default_cache_path, request_key

IDENT = {"provider": "openai", "model": "gpt-4o-mini"}
MSGS = [{"role": "user", "content": "你好"}]


def test_key_is_stable_across_dict_order() -> None:
    cfg = {"temperature": 0.0, "stop": ["x"]}
    a = request_key({"provider": "p", "model": "m"}, [{"role": "user", "content": "hi"}], cfg)
    flipped = dict(reversed(cfg.items()))
    b = request_key({"model": "m", "provider": "p"}, [{"content": "hi", "role": "user"}], flipped)
    assert a == b
    assert len(a) == 64 and int(a, 16) >= 0


def test_key_changes_with_model_messages_and_config() -> None:
    base = request_key(IDENT, MSGS, {})
    assert request_key({**IDENT, "model": "gpt-4o"}, MSGS, {}) != base
    assert request_key(IDENT, MSGS, {"temperature": 0.7}) != base
    assert request_key(IDENT, MSGS, {"temperature": 0.7}) != request_key(IDENT, MSGS, {"temperature": 0.8})
    assert request_key(IDENT, [{"role": "user", "content": "你好!"}], {}) != base
    assert request_key(IDENT, [*MSGS, {"role": "assistant", "content": "x"}], {}) != base
    # Message order matters (it is a conversation); key order does not.
    two = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert request_key(IDENT, two, {}) != request_key(IDENT, two[::-1], {})


def test_put_get_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "responses.sqlite"
    key = request_key(IDENT, MSGS, {})
    with ResponseCache(path) as cache:
        assert cache.get(key) is None
        cache.put(key, b'{"text": "hello"}')
        cache.put_json("other", {"a": [1, 2]})
        assert cache.get(key) == b'{"text": "hello"}'
        stats = cache.stats()
        assert stats["entries"] == 2 and stats["hits"] == 1 and stats["misses"] == 1 and stats["writes"] == 2
        assert stats["path"] == str(path) and stats["size_bytes"] > 0
    with ResponseCache(path) as again:
        assert again.get(key) == b'{"text": "hello"}'
        assert again.get_json("other") == {"a": [1, 2]}
        again.put(key, "replaced")
        assert again.get(key) == b"replaced"
        assert len(again) == 2
        assert again.clear() == 2
        assert again.get(key) is None and len(again) == 0


def test_closed_cache_raises(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.close()
    with pytest.raises(CacheError, match="closed"):
        cache.get("k")


def test_corrupt_file_names_path_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(CacheError) as info:
        ResponseCache(path)
    msg = str(info.value)
    assert str(path) in msg and "delete" in msg


def test_default_path_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_path() == tmp_path / "c" / "responses.sqlite"
    monkeypatch.delenv("UXBENCH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_path() == tmp_path / "x" / "uxbench" / "responses.sqlite"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_path() == Path.home() / ".cache" / "uxbench" / "responses.sqlite"
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "c"))
    with ResponseCache() as cache:
        assert cache.path == tmp_path / "c" / "responses.sqlite"


_WRITER = """
import sys
from uxbench.runtime.cache import ResponseCache
path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with ResponseCache(path) as cache:
    for i in range(n):
        cache.put(f"{tag}-{i}", f"{tag}:{i}".encode())
        if i % 7 == 0:
            cache.get(f"{tag}-{i // 2}")
"""


def test_two_processes_write_one_file(tmp_path: Path) -> None:
    # Both create the file and schema at once, then interleave writes.
    path = tmp_path / "shared.sqlite"
    n = 400
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), tag, str(n)], stderr=subprocess.PIPE)
        for tag in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    with ResponseCache(path) as cache:
        assert len(cache) == 2 * n
        assert cache.get("a-123") == b"a:123" and cache.get("b-399") == b"b:399"

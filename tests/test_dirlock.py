"""The exclusive directory lock: a second process is refused with the holder's details, a killed holder
leaves no stale lock, the holder's own process may take it again."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from uxbench.dirlock import (
    LOCK_FILE,
    DirectoryBusyError,
    check_output_dir,
    hold_dir_lock,
    read_lock_holder,
)
from uxbench.errors import ConfigError

HOLD = ("import sys\nfrom uxbench.dirlock import hold_dir_lock\n"
        "with hold_dir_lock(sys.argv[1], command='uxbench run --out X'):\n"
        "    print('held', flush=True)\n    sys.stdin.read()\n")


@contextmanager
def held_elsewhere(directory: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock until the block ends (then it is killed, not let go)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(directory)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_a_second_process_is_refused_with_the_holders_details(tmp_path: Path) -> None:
    with held_elsewhere(tmp_path / "run") as proc:
        with pytest.raises(DirectoryBusyError) as info:
            with hold_dir_lock(tmp_path / "run"):
                pass
        message = str(info.value)
        assert f"pid {proc.pid}" in message and f"host {socket.gethostname()}" in message
        assert "since 20" in message and "uxbench run --out X" in message
        holder = read_lock_holder(tmp_path / "run")
        assert holder is not None and holder["pid"] == proc.pid
    # killed with SIGKILL: the kernel dropped its lock, nothing stale is left to clean up
    assert read_lock_holder(tmp_path / "run") is None
    with hold_dir_lock(tmp_path / "run", command="second"):
        mine = read_lock_holder(tmp_path / "run")
        assert mine is not None and mine["pid"] == os.getpid() and mine["command"] == "second"
    assert read_lock_holder(tmp_path / "run") is None
    assert (tmp_path / "run" / LOCK_FILE).exists()


def test_the_holding_process_may_take_it_again(tmp_path: Path) -> None:
    with hold_dir_lock(tmp_path / "out") as path, hold_dir_lock(tmp_path / "out" / "."):
        assert path == tmp_path / "out"
        with held_elsewhere(tmp_path / "other"):
            pass
    with held_elsewhere(tmp_path / "out"):  # released when the outer block ended
        pass


def test_paths_that_cannot_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a directory"):
        check_output_dir(tmp_path / "file")
    with pytest.raises(ConfigError, match="which is a file"):
        with hold_dir_lock(tmp_path / "file" / "sub"):
            pass
    check_output_dir(tmp_path / "new" / "deeper")  # creates nothing
    assert not (tmp_path / "new").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="permission bits do not stop root (tests/cli covers it as nobody)")
def test_a_directory_without_write_permission(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    with pytest.raises(ConfigError, match="permission denied"):
        check_output_dir(locked)

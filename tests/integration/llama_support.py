"""llama.cpp's own OpenAI-compatible server in its own process, for the opt-in tests against it."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_server(python: str, gguf: Path, log_path: Path, *extra: str) -> Iterator[str]:
    """Serve `gguf` with `python -m llama_cpp.server` (2 threads, 4,096 tokens of context, `extra` arguments)
    on a free port, its output in `log_path`; yields the base URL once `/models` answers."""
    with log_path.open("w") as log:
        port = _free_port()
        proc = subprocess.Popen([python, "-m", "llama_cpp.server", "--model", str(gguf), "--port", str(port),
                                 "--n_ctx", "4096", "--n_threads", "2", *extra], stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(base + "/models", timeout=2).read()
                break
            except OSError:
                assert proc.poll() is None, f"llama.cpp server exited; see {log_path}"
                assert time.monotonic() < deadline, "llama.cpp server did not start"
                time.sleep(0.5)
        try:
            yield base
        finally:
            proc.terminate()
            proc.wait(timeout=30)

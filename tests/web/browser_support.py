"""What the browser tests share: a real uvicorn server in a thread, Debian's Chromium through Playwright (never a
browser Playwright downloads), and a page that records every console error, page error and dialog."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
WIDTH = 1280


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # runs in a thread
        pass


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """A real uvicorn server on a free loopback port, in a thread, for the duration of the block."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = _Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextlib.contextmanager
def chromium(executable: str, *args: str) -> Iterator[Any]:
    """Debian's Chromium (`executable`) driven by Playwright, with `ARGS` and `args`."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=[*ARGS, *args])
        yield browser
        browser.close()


def screenshot_dir(fallback: Path) -> Path:
    """Where screenshots go: $UXBENCH_SCREENSHOTS when set (created), else `fallback`."""
    wanted = os.environ.get("UXBENCH_SCREENSHOTS")
    if not wanted:
        return fallback
    Path(wanted).mkdir(parents=True, exist_ok=True)
    return Path(wanted)


class Watch:
    """A page with every console error, page error and dialog recorded (a dialog is dismissed)."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(viewport={"width": WIDTH, "height": 900})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type in
                     ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def goto(self, url: str) -> Any:
        response = self.page.goto(url)
        self.page.wait_for_load_state("load")
        return response

    def clean(self) -> None:
        assert not self.dialogs, self.dialogs
        assert not self.errors, self.errors

    def close(self) -> None:
        self.context.close()

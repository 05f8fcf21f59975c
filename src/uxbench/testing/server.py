"""Run an aiohttp application on 127.0.0.1 in a background thread with its own event loop."""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType

from aiohttp import web


class BackgroundServer:
    """`with BackgroundServer(app) as srv: srv.url` -> `http://127.0.0.1:PORT`.

    The server lives on its own loop and thread, so synchronous tests and tests running their
    own event loop can both call it, and a client's loop stalling cannot stall the server.
    """

    def __init__(self, app: web.Application, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> BackgroundServer:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._serve, name="uxbench-loopback", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout=30):
            raise RuntimeError("loopback server did not start within 30 s")
        if self._error is not None:
            raise RuntimeError(f"loopback server failed to start: {self._error}") from self._error
        return self

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._start_site())
        except BaseException as err:  # reported to the starting thread
            self._error = err
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            # Handlers still sleeping (an injected timeout fault) are cancelled, not destroyed pending.
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _start_site(self) -> None:
        # No access log: at hundreds of requests per second it would cost more than the handler.
        runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, backlog=1024, reuse_address=True)
        await site.start()
        self._runner = runner
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self._runner is not None and loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), loop)
            try:
                future.result(timeout=10)
            except Exception:  # best effort at teardown
                pass
        if loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

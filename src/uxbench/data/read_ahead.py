"""Reading and normalising a run's cases in a second process, while the run's event loop sends requests.

Turning a raw row into a case (`data.normalize`) is pure Python: ~150 us a row, a fifth of the harness's own CPU
per request in a Task 1 run, and all of it on the one thread that also sends the requests and reads the answers
(bench/throughput.py). A thread would not help (it holds the GIL while it works); a process does: `ReadAhead`
forks one that iterates the `CaseSource` exactly as the run would, and sends each case back as the JSON the run
stores anyway (`case_json`), in small batches through a pipe; the run rebuilds the case from it (pydantic-core,
a few microseconds) and uses the same bytes for the sample id.

What the run sees is what iterating the source in the run's own process gives: the same cases in the same order,
the same bytes, and afterwards the same skipped rows and read report on the source; an invalid row raises the same
`DataError` (its file and line named) after the cases read before it. Memory stays flat: the worker blocks once the
pipe holds a few batches the run has not asked for yet. The worker is forked (Linux), so it starts in milliseconds
with everything already imported; it ignores Ctrl-C (the run stops it) and ends when the run closes the reader,
or when the run's end of the pipe goes away (the run was killed). Elsewhere, or for inputs that are not local
files, the run reads in its own process as before (`usable`).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
from collections.abc import AsyncIterator
from multiprocessing.connection import Connection
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from uxbench.data.loaders import CaseSource
from uxbench.data.schema import AnyCase

BATCH = 32
"""Cases per message: ~30 KB for ordinary rows, under a pipe's buffer, so a read never waits on a half-sent one."""
MIN_ROWS = 2000
"""Inputs with fewer rows are read in the run's own process: forking costs a few milliseconds, and there is
nothing to win on a small run."""

_CASE: TypeAdapter[AnyCase] = TypeAdapter(Annotated[AnyCase, Field(discriminator="task")])


def usable(source: CaseSource) -> bool:
    """Whether `source` can be read ahead here: local files only (a dataset hub reader may hold threads that a
    fork would not carry), on a platform that forks."""
    return (sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
            and all(path is not None for path in source.part_paths()))


def _work(source: CaseSource, out: Connection) -> None:
    """The worker: every case of `source` as JSON, in batches, then the source's reports (or the error)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the run stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        signal.set_wakeup_fd(-1)  # the run's event loop may have set it: never write into its pipe
    except ValueError:
        pass
    batch: list[bytes] = []
    try:
        for case in source:
            batch.append(case.__pydantic_serializer__.to_json(case))
            if len(batch) >= BATCH:
                out.send(("cases", batch))
                batch = []
        if batch:
            out.send(("cases", batch))
        out.send(("end", source.iteration_state()))
    except (BrokenPipeError, ConnectionResetError, EOFError):  # the run is gone
        pass
    except BaseException as err:
        try:
            if batch:  # the cases read before the failure reach the run first, as they would have
                out.send(("cases", batch))
            out.send(("error", err))
        except (BrokenPipeError, ConnectionResetError, EOFError):
            pass
        except Exception:  # an error that does not pickle: its text, as a DataError would say it
            from uxbench.errors import DataError

            out.send(("error", DataError(f"{type(err).__name__}: {err}", source=source.description)))
    finally:
        out.close()


class ReadAhead:
    """`async for case, case_json in ReadAhead(source)`: the cases of `source` read in a forked process. Close it
    (`aclose`) when stopping early; it is closed when the iteration ends."""

    def __init__(self, source: CaseSource) -> None:
        self.source = source
        self._proc: Any = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        for stream in (sys.stdout, sys.stderr):  # the worker must not write this process's buffered output again
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        ctx = multiprocessing.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_work, args=(self.source, send), daemon=True, name="uxbench-read-ahead")
        proc.start()
        send.close()  # the worker holds the only writing end: its exit (or death) ends the pipe
        self._proc, self._conn = proc, receive
        return receive

    async def _receive(self, conn: Connection) -> Any:
        if not conn.poll():
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[None] = loop.create_future()
            fd = conn.fileno()

            def readable() -> None:
                if not ready.done():
                    ready.set_result(None)

            loop.add_reader(fd, readable)
            try:
                await ready
            finally:
                loop.remove_reader(fd)
        try:
            return conn.recv()
        except EOFError:
            code = self._proc.exitcode if self._proc is not None else None
            raise RuntimeError(f"the process reading {self.source.description} ended without finishing (exit code "
                               f"{code}); run again (reading in the run's own process: UXBENCH_READ_AHEAD=0)"
                               ) from None

    async def __aiter__(self) -> AsyncIterator[tuple[AnyCase, bytes]]:
        conn = self._start()
        try:
            while True:
                kind, payload = await self._receive(conn)
                if kind == "cases":
                    for case_json in payload:
                        yield _CASE.validate_json(case_json), case_json
                elif kind == "end":
                    self.source.adopt_iteration_state(payload)
                    return
                else:
                    raise payload
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Stop the worker (if still running) and release the pipe."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if conn is not None:
            conn.close()
        if proc is not None:
            if proc.is_alive():
                proc.terminate()  # stopped early; at the end it has already exited
            proc.join(5.0)
            if proc.is_alive() and proc.pid is not None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.join(1.0)


def for_run(source: CaseSource) -> ReadAhead | None:
    """A `ReadAhead` over `source` when it pays (a large input of local files, on Linux) and UXBENCH_READ_AHEAD is
    not 0; else None (the run reads its cases in its own process)."""
    if os.environ.get("UXBENCH_READ_AHEAD", "1").strip() == "0" or not usable(source):
        return None
    if source.count() < MIN_ROWS:
        return None
    return ReadAhead(source)


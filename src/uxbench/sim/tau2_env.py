"""tau2's environments for many concurrent sessions (the `tau2` extra; used by `sim/tau2_adapter.py` only).

A tau2 environment holds its domain's whole database as pydantic objects (airline: 7 MB of JSON, hundreds of
thousands of objects), and tau2 builds one from the database file for every session and two more for every
evaluation. Here, per domain and process:

- the database file is read once; an environment that needs its own database gets a copy validated from the
  cached JSON (the same content, so the same database hash as a fresh read), with the garbage collector paused
  while the copy is built: the copy is a tree of new objects that no reference cycle holds, and without the pause
  the collector walks the heap of every other session's database again and again (six times the copy's cost with
  64 sessions in flight);
- a session reads from one shared, pristine environment until its first call to a tool tau2 types as a write
  (`ToolType.WRITE`; reads, `think` and generic tools such as `calculate` do not change the database): that call
  and every later one go to the session's own copy. So a session that never writes costs no copy, and one that
  writes holds its copy only from then on. The first call of each tool name on the shared environment is checked
  (the database's digest before and after): a tool that changed it is treated as a write from then on, the
  session keeps the changed environment as its own, and the shared one is rebuilt;
- databases are compared by the sha256 of pydantic's serialisation (fields and dict entries in their order):
  equal digests mean equal databases; tau2's own hash (the same dump with sorted keys, four times slower) decides
  when the digests differ (`exact_hashes`), so the match is tau2's.
"""

from __future__ import annotations

import gc
import hashlib
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from uxbench.sim.tooltask import ToolResult

Digests = tuple[str | None, str | None]
"""(agent database, user database); None where the environment has none."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: for building (or dumping) a database, a tree of new objects that
    reference counting frees, which the collector would otherwise walk with the whole heap, again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def digests(env: Any) -> Digests:
    """sha256 of the agent's and the user's databases as pydantic serialises them."""
    out = []
    for kit in (env.tools, env.user_tools):
        db = None if kit is None else getattr(kit, "db", None)
        out.append(None if db is None else hashlib.sha256(db.__pydantic_serializer__.to_json(db)).hexdigest())
    return out[0], out[1]


def exact_hashes(env: Any) -> Digests:
    """tau2's own database hashes (what its environment evaluator compares)."""
    with gc_paused():
        return env.get_db_hash(), env.get_user_db_hash()


class GoldState:
    """What tau2's environment evaluator compares a session's database with: the task's gold database (its
    initial state with the gold actions applied), as digests, and as tau2's hashes when a session's digests
    differ (rebuilt then: most sessions match or differ for good by digest alone... the hashes decide)."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build
        self.digests = digests(build())
        self._exact: Digests | None = None

    def matches(self, env: Tau2Environment) -> bool:
        """tau2's verdict: the session's databases hash as the gold ones."""
        if env.digests() == self.digests:
            return True
        if self._exact is None:
            self._exact = exact_hashes(self.build())
        return env.exact_hashes() == self._exact


class Tau2Domain:
    """One domain's environments: its constructor (tau2's `get_environment`, from tau2's registry), its database
    read once, the shared pristine environment and the tools that write."""

    def __init__(self, constructor: Any) -> None:
        from tau2.environment.toolkit import ToolType

        self.constructor = constructor
        self.db_type: Any = None
        self.raw = b""
        self.shared = constructor()
        if "db" in inspect.signature(constructor).parameters:
            db = self.shared.tools.db
            self.db_type, self.raw = type(db), db.__pydantic_serializer__.to_json(db)
        self.shared_digests = digests(self.shared)
        self._shared_exact: Digests | None = None
        kit = self.shared.tools
        self.types = {name: str(getattr(kit.tool_type(name), "value", "")) for name in kit.get_tools()}
        self.writes = {name for name, kind in self.types.items() if kind == ToolType.WRITE.value}
        self.checked: set[str] = set()

    def new(self) -> Any:
        """A fresh environment with its own copy of the database."""
        if self.db_type is None:
            return self.constructor()
        with gc_paused():
            return self.constructor(db=self.db_type.model_validate_json(self.raw))

    def shared_exact(self) -> Digests:
        if self._shared_exact is None:
            self._shared_exact = exact_hashes(self.shared)
        return self._shared_exact

    def call_shared(self, call: Any) -> tuple[Any, Any | None]:
        """(tau2's tool message, the environment the call changed, or None) for a call on the shared environment."""
        message = self.shared.get_response(call)
        if call.name in self.checked:
            return message, None
        self.checked.add(call.name)
        if digests(self.shared) == self.shared_digests:
            return message, None
        changed, self.shared = self.shared, self.new()
        self.writes.add(call.name)
        self._shared_exact = None
        return message, changed


class Tau2Environment:
    """One session's environment: the shared one until its first write, then its own."""

    def __init__(self, domain: Tau2Domain, own: Any | None = None) -> None:
        self.domain = domain
        self.own = own

    def call(self, name: str, arguments: dict[str, Any], call_id: str) -> ToolResult:
        from tau2.data_model.message import ToolCall

        call = ToolCall(id=call_id, name=name, arguments=arguments, requestor="assistant")
        if self.own is None and name in self.domain.writes:
            self.own = self.domain.new()
        if self.own is not None:
            message = self.own.get_response(call)
        else:
            message, changed = self.domain.call_shared(call)
            if changed is not None:
                self.own = changed
        return ToolResult(content=message.content or "", error=bool(message.error))

    @property
    def final(self) -> Any:
        """The environment in the session's final state."""
        return self.own if self.own is not None else self.domain.shared

    def digests(self) -> Digests:
        return digests(self.own) if self.own is not None else self.domain.shared_digests

    def exact_hashes(self) -> Digests:
        return exact_hashes(self.own) if self.own is not None else self.domain.shared_exact()

"""Test and benchmark helpers that run for real: loopback HTTP servers speaking provider protocols.

Nothing in the library imports this package; tests and `bench/` scripts do. Names are imported
lazily so `python -m uxbench.testing.loopback` does not import its own module twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uxbench.testing.loopback import LoopbackConfig, LoopbackServer, LoopbackStats
    from uxbench.testing.server import BackgroundServer

__all__ = ["BackgroundServer", "LoopbackConfig", "LoopbackServer", "LoopbackStats"]


def __getattr__(name: str) -> Any:
    if name == "BackgroundServer":
        from uxbench.testing.server import BackgroundServer

        return BackgroundServer
    if name in ("LoopbackConfig", "LoopbackServer", "LoopbackStats"):
        from uxbench.testing import loopback

        return getattr(loopback, name)
    raise AttributeError(name)

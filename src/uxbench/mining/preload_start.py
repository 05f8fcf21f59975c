"""The first module the mining fork server imports (`workers.WORKER_MODULES`): it turns the garbage collector off
while the stage modules load, as the command line does for its own (`uxbench.cli.main`). Loading them builds tens
of thousands of long-lived objects (compiled patterns, automata, tables) that the collector would go over again and
again, about 0.06 CPU s of the fork server's start, which every worker waits for. Each worker turns it back on,
with those objects frozen, as its first act (`workers.tune_gc`); the fork server itself only forks."""

from __future__ import annotations

import gc

gc.disable()

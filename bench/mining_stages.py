"""CPU seconds of each deterministic mining step over a real log, in one process, without a profiler.

    python ../shared/data/signals_dev/build_log.py /tmp/signals_dev/pool.jsonl --pool
    python bench/mining_stages.py --log /tmp/signals_dev/pool.jsonl

`bench/mining.py --profile` splits the time by stage too, but cProfile's cost per Python call inflates the
stages made of many small calls (the signal rules, pydantic) far more than those that run in C (regex,
numpy, Arrow), so its shares mislead. This script runs each step's functions, as the pipeline calls them,
over every conversation of the log and reports `time.process_time()` per step; the steps run one after
the other (each on the previous step's output), so the total is the work of one `mine run --no-llm`
without the Parquet writes, the process pool and the output files.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa

from uxbench.data.readers import decode_jsonl_line, jsonl_lines
from uxbench.mining.dedup import DedupConfig, permutations, session_text, signatures
from uxbench.mining.deid import deidentify_session
from uxbench.mining.gate import gate_session
from uxbench.mining.ingest import IngestReport, RowTally, lines_of_row, row_items
from uxbench.mining.pipeline.stages import TURN_ROW, _batch_signal_counts
from uxbench.mining.prefilter import PrefilterConfig, drop_reason
from uxbench.mining.sessions import session_of_lines
from uxbench.mining.signals import SignalConfig, compute_signals
from uxbench.mining.signals.results import signal_outputs

T = TypeVar("T")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", type=Path, required=True, help="A canonical JSON Lines log (e.g. the pool).")
    args = parser.parse_args()
    seconds: dict[str, float] = {}

    def step(name: str, work: Callable[[], T]) -> T:
        start = time.process_time()
        result = work()
        seconds[name] = round(time.process_time() - start, 2)
        return result

    lines = step("read lines", lambda: list(jsonl_lines(args.log)))
    report, tally = IngestReport(), RowTally()

    def parse() -> list[tuple[str, bytes]]:
        # as the pipeline's workers parse a block (`driver_stages._spill_rows`)
        return [spilled for line, raw in lines for row in row_items(decode_jsonl_line(raw))
                for spilled in lines_of_row(str(args.log), line, row, "auto", False, report, tally)]

    spilled = step("parse rows into bucket lines", parse)
    groups: dict[str, list[bytes]] = {}
    for conversation_id, line in spilled:
        groups.setdefault(conversation_id, []).append(line)
    sessions = step("build sessions", lambda: [session_of_lines(c, groups[c]) for c in sorted(groups)])
    clean = step("de-identification", lambda: [deidentify_session(s, b"k" * 32)[0] for s in sessions])
    step("session JSON", lambda: [s.model_dump_json() for s in clean])
    step("gate", lambda: [gate_session(s) for s in clean])
    prefilter = PrefilterConfig()
    step("prefilter", lambda: [drop_reason(s, prefilter) for s in clean])
    config = SignalConfig()
    signals = step("signal rules (compute_signals)", lambda: [compute_signals(s, config) for s in clean])
    # as `stages.signals_map` stores them: a reply's JSON and its turn row in one pass, the rows to Arrow as tuples
    def outputs() -> tuple[list[tuple[Any, ...]], list[int]]:
        turn_rows: list[tuple[Any, ...]] = []
        offsets = [0]
        for s, found in zip(clean, signals, strict=True):
            times = {t.turn_index: t.created_at.isoformat() if t.created_at else None
                     for t in s.turns if t.role == "assistant"}
            turn_rows += signal_outputs(found, times)[1]
            offsets.append(len(turn_rows))
        return turn_rows, offsets

    turn_rows, offsets = step("signals JSON and turn rows", outputs)
    flat = step("turn rows to Arrow", lambda: pa.array(turn_rows, type=TURN_ROW))
    step("signal counts", lambda: _batch_signal_counts(clean, offsets, flat))
    dedup = DedupConfig()
    perms = permutations(dedup)
    step("MinHash signatures", lambda: [sig for start in range(0, len(clean), 1000) for sig in signatures(
        [session_text(s, dedup.text) for s in clean[start:start + 1000]], dedup, perms)])  # a batch at a time
    total = round(sum(seconds.values()), 1)
    result: dict[str, Any] = {"log": str(args.log), "turns": tally.turns, "conversations": len(sessions),
                              "cpu_s": seconds, "total_cpu_s": total}
    print(json.dumps(result, indent=1))
    print(f"\n{tally.turns:,} turns, {len(sessions):,} conversations: {total} CPU s "
          f"({tally.turns / total:,.0f} turns per CPU second)")


if __name__ == "__main__":
    main()

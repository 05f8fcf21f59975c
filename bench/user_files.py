"""What the one loader of users' files (`uxbench.data.user_files`, issue 28) costs and saves, side by side with the
code it replaced, in one process:

1. a persona YAML file (the bundled English demo set, repeated to ~200 KB): before, two pure-Python PyYAML passes
   (`compose_all` for line numbers + `safe_load_all`); now, the limits checked on parser events, then one load
   with libyaml's safe loader (where PyYAML has it);
2. JSON rows (the first 50,000 turns of the real pool, `$UXBENCH_SIGNALS_POOL`): `orjson.loads` against
   `readers.decode_json`, which now also refuses rows nested past 64 levels;
3. hostile files: the time and peak memory (tracemalloc) of refusing a 1 KB alias bomb and 5,000 nested lists.

    python bench/user_files.py [--rows 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import yaml

from uxbench.data import readers, user_files
from uxbench.errors import DataError
from uxbench.sim.persona_io import demo_dir


def _best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _refusal(text: str) -> tuple[float, float]:
    """(seconds, peak MiB) to refuse `text` as YAML."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        user_files.parse_yaml(text, "hostile.yaml")
    except DataError:
        pass
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return elapsed, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}; libyaml {bool(getattr(yaml, '__with_libyaml__', False))}")

    body = (demo_dir() / "demo_en.yaml").read_text("utf-8").split("personas:\n", 1)[1]
    personas = "personas:\n" + "".join(body.replace("id: en-", f"id: c{i}-en-") for i in range(10))

    def before() -> None:
        list(yaml.compose_all(personas, Loader=yaml.SafeLoader))
        list(yaml.safe_load_all(personas))

    old = _best(before, args.repeat)
    new = _best(lambda: user_files.parse_yaml_documents(personas, "personas.yaml"), args.repeat)
    print(f"persona YAML ({len(personas):,} bytes, 120 personas): before {old:.3f} s, now {new:.3f} s, "
          f"{old / new:.1f}x faster")

    pool = Path(os.environ.get("UXBENCH_SIGNALS_POOL", Path.home() / ".cache/uxbench/signals_dev/pool.jsonl"))
    if pool.is_file():
        with pool.open("rb") as handle:
            lines = [line for _, line in zip(range(args.rows), handle, strict=False)]
        plain = _best(lambda: [orjson.loads(line) for line in lines], args.repeat)
        checked = _best(lambda: [readers.decode_json(line) for line in lines], args.repeat)
        print(f"JSON rows ({len(lines):,} of {pool.name}): orjson.loads {plain:.3f} s, decode_json {checked:.3f} s "
              f"({checked / plain:.2f}x; {(checked - plain) / len(lines) * 1e6:.2f} us more a row)")
    else:
        print(f"JSON rows: {pool} not found (set UXBENCH_SIGNALS_POOL)")

    bomb = "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9 if i else ['"lol"'] * 9) + "]\n"
                   for i in range(10))
    for name, text in (("alias bomb (1 KB, 10^9 values)", bomb),
                       ("5,000 nested lists (10 KB)", "x: " + "[" * 5000 + "]" * 5000 + "\n")):
        seconds, peak = _refusal(text)
        print(f"refusing {name}: {seconds * 1000:.1f} ms, peak {peak:.2f} MiB traced")


if __name__ == "__main__":
    main()

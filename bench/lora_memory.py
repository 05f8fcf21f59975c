"""LoRA on the embedded model on a CPU: peak memory and time per step at two batch sizes and two prompt lengths.

    python bench/signals_dev_rows.py --log ~/.cache/uxbench/signals_dev/log.jsonl --out /tmp/sd
    python bench/lora_memory.py --data /tmp/sd/dev.jsonl                      # 2 x 2 configurations, 3 steps each
    python bench/lora_memory.py --data /tmp/sd/dev.jsonl --batch-sizes 1 4 --lengths 256 1024 --steps 4

Each configuration trains `uxbench judge train --method lora --base-model embedded` (SmolLM2-135M-Instruct,
converted once into the model cache) in a fresh process, one at a time, on real rows (the labelled ShareGPT
follow-ups: prompts of several hundred to a few thousand tokens, so `--max-length` has work to do). Peak memory
is the child's maximum resident set size (getrusage); time per step is the training loop's wall time divided
by the steps (the first step, which also warms the allocator, included). Prints one JSON line per configuration.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

CHILD = """
import json, resource, sys, time
from pathlib import Path
from uxbench.judge_train.lora import LoraOptions, train_lora
data, out, batch, length, steps, ckpt = sys.argv[1:7]
r = train_lora(LoraOptions(data=[data], out=Path(out), base_model="embedded", max_steps=int(steps),
                           batch_size=int(batch), max_length=int(length), device="cpu", n_boot=20,
                           gradient_checkpointing=ckpt == "1"))
t = r.card["training"]
print(json.dumps({"batch_size": int(batch), "max_length": int(length), "steps": int(steps),
                  "gradient_checkpointing": t["gradient_checkpointing"], "seconds_per_step": t["seconds_per_step"],
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "prompts_cut": t["prompts_cut"], "loss_first": t["loss_first"], "loss_last": t["loss_last"]}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--no-checkpointing", action="store_true")
    args = parser.parse_args()
    for length in args.lengths:
        for batch in args.batch_sizes:
            with tempfile.TemporaryDirectory(prefix="uxbench-lora-bench-") as out:
                done = subprocess.run([sys.executable, "-c", CHILD, args.data, out, str(batch), str(length),
                                       str(args.steps), "0" if args.no_checkpointing else "1"],
                                      capture_output=True, text=True, timeout=3600, check=False)
            if done.returncode != 0:
                print(json.dumps({"batch_size": batch, "max_length": length, "error": done.stderr[-500:]}))
                continue
            print(done.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()

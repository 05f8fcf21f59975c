"""A LoRA judge on the embedded model, named `embedded`, with `--max-length` and a small batch: it trains in a
subprocess whose peak memory is recorded (bench/lora_memory.py holds the figures; this test only checks that
training finishes, the adapter loads, and the prompts were cut to the length asked for)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("lora")

import judge_data  # noqa: E402

REAL_CACHE = os.environ.get("UXBENCH_CACHE_DIR")
"""The model cache as it was before the tests' fixtures pointed the response cache elsewhere: the embedded model
is converted once into it (CI warms it), not once per test."""

CHILD = """
import json, resource, sys, time
from pathlib import Path
from uxbench.judge_train.lora import LoraOptions, train_lora
start = time.perf_counter()
result = train_lora(LoraOptions(data=[sys.argv[1]], out=Path(sys.argv[2]), base_model="embedded", max_steps=2,
                                batch_size=2, max_length=int(sys.argv[3]), device="cpu", n_boot=20))
print(json.dumps({"peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "seconds": time.perf_counter() - start, "losses": result.losses,
                  "cuts": result.card["training"]["prompts_cut"]}))
"""


def card_rows(tmp_path: Path) -> int:
    card = json.loads((tmp_path / "judge" / "model_card.json").read_text())
    return int(sum(card["split"]["train"].values()))


@pytest.mark.slow
def test_lora_on_the_embedded_model_with_a_length_cap(tmp_path: Path) -> None:
    rows = [r for r in judge_data.rows(40, seed=9) if r["lang"] == "en"]
    for r in rows[::3]:  # some long histories, so that the cap has something to cut
        r["selected_history"] = [{"role": "user" if i % 2 == 0 else "assistant",
                                  "message": f"background detail number {i} " * 30} for i in range(8)]
    data = judge_data.write(tmp_path / "en.jsonl", rows)
    env = {k: v for k, v in os.environ.items() if k != "UXBENCH_CACHE_DIR"}
    if REAL_CACHE:
        env["UXBENCH_CACHE_DIR"] = REAL_CACHE
    done = subprocess.run([sys.executable, "-c", CHILD, str(data), str(tmp_path / "judge"), "256"], env=env,
                          capture_output=True, text=True, timeout=1500, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"LoRA on embedded, 2 steps of 2 rows, max length 256: peak RSS {figures['peak_rss_mib']:.0f} MiB, "
          f"{figures['seconds']:.0f} s")
    assert len(figures["losses"]) == 2 and all(loss > 0 for loss in figures["losses"])
    cuts = figures["cuts"]
    assert sum(cuts.values()) == card_rows(tmp_path) and cuts.get("none", 0) < sum(cuts.values())  # some were cut
    assert figures["peak_rss_mib"] > 0
    adapter = tmp_path / "judge" / "adapter"
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA" and (adapter / "tokenizer_config.json").is_file()
    card = json.loads((tmp_path / "judge" / "model_card.json").read_text())
    assert card["base_model"] == "embedded" and card["training"]["max_length"] == 256
    assert card["data"]["labels"]["sources"]

"""The near-duplicate stage fed batch by batch while stage 01's jobs finish: the same shards as run afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from pipeline_support import tree_bytes, write_log

from uxbench.mining.deid import SALT_ENV
from uxbench.mining.pipeline import MineConfig, run_pipeline
from uxbench.mining.pipeline import run as run_module
from uxbench.mining.pipeline.driver_stages import DedupRun
from uxbench.mining.pipeline.store import StageDir


def mine(log: Path, out: Path, workers: int) -> None:
    run_pipeline(MineConfig(inputs=(str(log),), out=str(out), llm=False, workers=workers, batch_size=2))


@pytest.mark.parametrize("workers", [1, 2])
def test_dedup_fed_as_batches_finish_writes_what_a_dedup_afterwards_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    monkeypatch.setenv(SALT_ENV, "dedup-follow-test-salt-0123")
    monkeypatch.setattr(run_module, "PARALLEL_MIN_BYTES", 0)  # a small log through the pool too, with 2 workers
    log = write_log(tmp_path / "log.jsonl", copies=2)  # near-duplicates across batches
    fed: list[int] = []
    real = DedupRun.follow

    def follow(self: DedupRun, batch: int) -> None:
        fed.append(batch)
        real(self, batch)

    monkeypatch.setattr(DedupRun, "follow", follow)
    mine(log, tmp_path / "followed", workers)
    assert len(fed) > 2  # every batch was fed as its job finished
    monkeypatch.setattr(run_module, "_follow_dedup", lambda ctx, links: None)
    mine(log, tmp_path / "after", workers)
    followed = tree_bytes(tmp_path / "followed", skip=("manifest.json",))
    assert followed == tree_bytes(tmp_path / "after", skip=("manifest.json",))
    counts = (tmp_path / "followed" / "stage_counts.json").read_text()
    assert '"duplicates": 0' not in counts  # the log's copies were found


def test_batches_fed_out_of_order_are_indexed_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "dedup-follow-test-salt-0123")
    out = tmp_path / "out"
    mine(write_log(tmp_path / "log.jsonl", copies=2), out, 1)
    work = out / "work"
    n = len(list((work / "05-dedup").glob("part-*.parquet")))
    assert n >= 3
    expected = {p.name: p.read_bytes() for p in (work / "05-dedup").glob("part-*.parquet")}
    for p in (work / "05-dedup").glob("part-*"):
        p.unlink()
    src = StageDir(work, "04-signals", "unused")
    dedup = StageDir(work, "05-dedup", "again")
    from uxbench.mining.dedup import DedupConfig

    run = DedupRun(dedup, src, DedupConfig())
    for batch in reversed(range(1, n)):
        run.follow(batch)
        assert run.next == 0  # batch 0 not there yet: nothing indexed
    run.follow(0)
    assert run.next == n
    assert {p.name: p.read_bytes() for p in (work / "05-dedup").glob("part-*.parquet")} == expected


def test_a_run_that_fails_while_its_outputs_stream_leaves_the_earlier_ones_and_no_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from uxbench.mining.pipeline import outputs

    monkeypatch.setenv(SALT_ENV, "dedup-follow-test-salt-0123")
    log = write_log(tmp_path / "log.jsonl", copies=2)
    out = tmp_path / "out"
    mine(log, out, 1)
    real = outputs._signal_batch

    def failing(signals: StageDir, dedup: StageDir, llm: StageDir | None, batch: int) -> object:
        if batch == 1:
            raise OSError("disk full")
        return real(signals, dedup, llm, batch)

    monkeypatch.setattr(outputs, "_signal_batch", failing)
    with pytest.raises(OSError, match="disk full"):
        run_pipeline(MineConfig(inputs=(str(log),), out=str(out), llm=False, workers=1, batch_size=2, fresh=True))
    assert not [p.name for p in out.iterdir() if ".tmp-" in p.name]
    assert not (out / "signals.parquet").exists()  # --fresh cleared the earlier outputs; none half-written


def test_an_output_stream_takes_batches_in_order_only(tmp_path: Path) -> None:
    from uxbench.mining.pipeline.outputs import OutputStream

    dirs = [StageDir(tmp_path / "work", name, "k") for name in ("01", "02", "03", "04", "05")]
    stream = OutputStream(tmp_path, *dirs)
    with pytest.raises(ValueError, match="batch 1 given where batch 0 was due"):
        stream.add(1)
    with pytest.raises(ValueError, match="0 of 2 batches"):
        stream.finish(2)
    stream.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == []

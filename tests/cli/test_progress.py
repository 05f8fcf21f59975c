"""The terminal progress of `uxbench run` (cli.progress.RichProgress) driven by synthetic events and a fake clock:
the model-load lines, an ETA that is right from the first finished sample (also after loading and on resume),
a resumed bar that starts at the done count, the accuracy per class, and a line that fits 80 columns. Also the
runner's events on a real resumed run."""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

from cli_support import judge_rows, write_jsonl
from rich.console import Console

from uxbench.cli.progress import RichProgress, clock_text, eta_text
from uxbench.orchestrate.progress import ProgressEvent
from uxbench.orchestrate.runner import execute
from uxbench.orchestrate.spec import RunSpec


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _bar(width: int = 80) -> tuple[RichProgress, FakeClock, io.StringIO]:
    out = io.StringIO()
    clock = FakeClock()
    return RichProgress(Console(file=out, width=width, force_terminal=False), clock=clock), clock, out


def _sample(done: int, total: int, by_class: dict[str, tuple[int, int]] | None = None) -> ProgressEvent:
    return ProgressEvent("sample", done, total, "acc", None, metric_by_class=by_class)


def test_eta_from_the_first_sample_after_the_model_loaded() -> None:
    bar, clock, out = _bar()
    bar(ProgressEvent("start", 0, 24, run_dir=Path("runs/x")))
    assert "0/24" in bar.render() and "ETA …" in bar.render()  # nothing finished: no guess
    load = logging.getLogger("uxbench.models.load")
    load.info("Loading hf:embedded (device auto) ...", extra={"uxbench_load": "start"})
    clock.now += 60  # a minute of loading, with nothing finished
    load.info("Loaded hf:embedded on cpu in 60 s", extra={"uxbench_load": "done", "seconds": 60.0})
    clock.now += 10
    bar(_sample(1, 24))
    # 10 s per sample since the model was ready, 23 to go; rich's own estimate would still read -:--:--
    assert "ETA 0:03:50" in bar.render()
    clock.now += 5
    assert "ETA 0:03:45" in bar.render()  # counts down between samples
    clock.now += 5
    bar(_sample(9, 24))  # a burst: a batch of eight finishes together
    assert "ETA 0:00:33" in bar.render()  # 20 s for 9, 15 to go
    bar(ProgressEvent("end", 24, 24))
    text = out.getvalue()
    assert "Loading hf:embedded (device auto) ..." in text and "Loaded hf:embedded on cpu in 60 s" in text
    assert not logging.getLogger("uxbench.models.load").handlers  # stop() leaves no listener behind


def test_a_resumed_bar_starts_at_the_done_count_and_paces_this_session_only() -> None:
    bar, clock, out = _bar()
    bar(ProgressEvent("start", 50, 100, run_dir=Path("runs/x"), resumed=50))
    assert "50/100" in bar.render() and "(resuming: 50 already done)" in out.getvalue()
    clock.now += 10
    bar(_sample(51, 100))
    assert "51/100" in bar.render() and "ETA 0:08:10" in bar.render()  # 10 s x 49, not 10 s / 51 x 49
    bar.stop()


def test_accuracy_per_class_and_the_average_only_once_both_are_seen() -> None:
    bar, _, _ = _bar()
    bar(ProgressEvent("start", 0, 40, run_dir=Path("runs/x")))
    bar(_sample(5, 40, {"bad": (5, 5)}))  # bad cases first: an always-bad judge looks perfect
    line = bar.render()
    assert "acc bad 5/5" in line and "avg" not in line and "1.000" not in line
    bar(_sample(9, 40, {"bad": (5, 5), "good": (0, 4)}))
    assert "acc good 0/4 bad 5/5 (avg 0.50)" in " ".join(bar.render().split())
    bar.stop()


def test_the_bar_fits_80_columns_without_cutting_figures() -> None:
    bar, clock, _ = _bar(80)
    bar(ProgressEvent("start", 0, 12345, run_dir=Path("runs/x")))
    clock.now += 3725
    bar(_sample(1234, 12345, {"bad": (600, 617), "good": (300, 617)}))
    lines = bar.render().splitlines()
    assert max(len(line) for line in lines) <= 80
    text = " ".join(" ".join(lines).split())  # the accuracy may wrap under itself; figures never do
    assert "1234/12345 1:02:05 ETA 9:19:00 acc good 300/617 bad 600/617 (avg 0.73)" in text
    assert "…" not in text
    bar.stop()


def test_eta_text_edges() -> None:
    fields = {"eta_origin": 0.0, "eta_base": 0, "eta_at": 10.0}
    assert eta_text(fields, 0, 10, 20.0) == "…"
    assert eta_text(fields, 10, 10, 20.0) == "0:00:00"
    assert eta_text(fields, 5, 10, 100.0) == "0:00:00"  # late: never negative
    assert clock_text(3725) == "1:02:05"


def test_a_resumed_run_emits_a_start_at_the_done_count_and_monotone_samples(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "judge.jsonl", judge_rows(12))

    def run(limit: int) -> list[ProgressEvent]:
        events: list[ProgressEvent] = []
        spec = RunSpec(task="judge", model="scripted:oracle", data=str(data), limit=limit, out=tmp_path / "run",
                       concurrency=2, use_cache=False)
        asyncio.run(execute(spec, progress=events.append))
        return events

    run(6)
    events = run(12)
    start = events[0]
    assert (start.kind, start.done, start.total, start.resumed) == ("start", 6, 12, 6)
    dones = [e.done for e in events if e.kind == "sample"]
    assert dones == list(range(7, 13))
    last = [e for e in events if e.kind == "sample"][-1]
    assert last.metric_by_class is not None and sum(n for _, n in last.metric_by_class.values()) == 6


def test_tokens_being_written_show_between_finished_samples() -> None:
    # was: 0/N for minutes while a CPU batch wrote its first replies
    bar, _clock, _out = _bar()
    bar(ProgressEvent("start", 0, 6, run_dir=Path("runs/x")))
    gen = logging.getLogger("uxbench.models.generate")
    assert gen.isEnabledFor(logging.INFO)  # the engine reports only when someone shows it
    gen.info("3 of at most 64 tokens", extra={"uxbench_tokens": (3, 64, 2)})
    assert "0/6" in bar.render() and "2 replies at 3/64 tokens" in bar.render()
    bar(_sample(2, 6))
    gen.info("10 of at most 64 tokens", extra={"uxbench_tokens": (10, 64, 4)})
    line = bar.render()
    assert "2/6" in line and "4 replies at 10/64 tokens" in line and line.count("\n") == 1  # one line of 80
    bar(ProgressEvent("end", 6, 6))
    assert not gen.handlers and not gen.isEnabledFor(logging.INFO)  # no listener left, no ticks computed


def test_prompt_tokens_being_read_show_before_the_first_token() -> None:
    # was: 0/24 and no count for minutes while a CPU batch read its long prompts
    bar, _clock, _out = _bar()
    bar(ProgressEvent("start", 0, 24, run_dir=Path("runs/x")))
    gen = logging.getLogger("uxbench.models.generate")
    gen.info("1,800 of 12,000 prompt tokens read", extra={"uxbench_prompt": (1800, 12000, 8)})
    line = bar.render()
    assert "0/24" in line and "read 1,800/12,000 prompt tokens" in line and line.count("\n") == 1
    gen.info("1 of at most 4 tokens", extra={"uxbench_tokens": (1, 4, 8)})
    assert "8 replies at 1/4 tokens" in bar.render() and "prompt" not in bar.render()
    bar(ProgressEvent("end", 24, 24))


def test_a_new_run_reads_its_input_once_and_corrects_the_count_of_duplicates(tmp_path: Path) -> None:
    """A new run does not read the input twice to count it: the bar starts at the rows (here one exact duplicate
    among 6) and takes the cases' count (5) once every case is read; the run itself is unchanged."""
    rows = judge_rows(5)
    data = write_jsonl(tmp_path / "judge.jsonl", [*rows, rows[2]])
    events: list[ProgressEvent] = []
    reads: list[int] = []
    from uxbench.data import normalize

    original = normalize.normalize_row

    def counted(*args: object, **kwargs: object) -> object:
        reads.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    spec = RunSpec(task="judge", model="scripted:oracle", data=str(data), out=tmp_path / "run", concurrency=2,
                   use_cache=False)
    import uxbench.data.loaders as loaders

    saved = loaders.normalize_row
    loaders.normalize_row = counted  # type: ignore[assignment]
    try:
        result = asyncio.run(execute(spec, progress=events.append))
    finally:
        loaders.normalize_row = saved
    assert events[0].kind == "start" and events[0].total == 6
    samples = [e for e in events if e.kind == "sample"]
    assert samples[-1].done == samples[-1].total == 5
    assert result.summary["n_selected"] == 5
    assert len(reads) <= 6 + 1  # one pass over the rows (and the first row once more: the check that one exists)

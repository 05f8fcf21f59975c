"""The LLM-Rubric reader on small files written here in that repository's layout (`data/real_data/real_data.json`,
`human_judges_real_convs_FIXED_ANON.tsv`): canonical rows with each system as an assistant and Q0 as the
conversation's rating; bad files refused with the file, line and field; `sim validate --real llm-rubric:PATH`
end to end, with the ratings as the yardstick."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sim_support import REFUND, write_personas
from typer.testing import CliRunner, Result

from uxbench.errors import ConfigError
from uxbench.sim.real_llm_rubric import JUDGEMENTS, locate, parse_real, rows

HEADER = "dialogue_system\ttext_id\tQ1\tQ2\tQ3\tQ4\tQ5\tQ6\tQ7\tQ8\tQ0\tannotator_id\n"
GOOD = ["Thanks, that answers it.", "Great, and how do I set it up?", "ok thanks"]
BAD = ["That's wrong, it still doesn't work.", "No, that is not what I asked.", "This is useless."]


def write_checkout(root: Path, n: int = 12) -> Path:
    """`n` conversations over three systems; odd ones end in complaints and are rated low."""
    data_dir = root / "data" / "real_data"
    data_dir.mkdir(parents=True)
    convs, lines = [], [HEADER]
    for i in range(n):
        low = i % 2 == 1
        follow = BAD if low else GOOD
        messages = [{"role": "assistant", "content": "Hello! How can I assist you today?"},
                    {"role": "user", "content": f"How do I reset my router model R{i}?"}]
        for k in range(2):
            messages += [{"role": "assistant", "content": f"Hold the reset button for {10 + i + k} seconds."},
                         {"role": "user", "content": follow[k]}]
        messages.append({"role": "assistant", "content": "Glad to help."})
        cid = f"65c5{i:020x}"
        convs.append({"_id": cid, "dialogue_version": i % 3, "openai_model": "gpt-35-turbo-16k", "topic": "router",
                      "ref": "Sources: ...", "ref_url": "[1]: https://example.org", "messages": messages})
        lines.append(f"{i % 3}\t{cid}\t3\t3\t3\t3\t3\t3\t3\t2\t{1 if low else 4}\t{i}\n")
    (data_dir / "real_data.json").write_text(json.dumps(convs), encoding="utf-8")
    (data_dir / JUDGEMENTS).write_text("".join(lines), encoding="utf-8")
    return root


def test_the_reader_finds_the_layout_and_writes_canonical_rows(tmp_path: Path) -> None:
    root = write_checkout(tmp_path / "LLM-Rubric")
    for where in (root, root / "data" / "real_data", root / "data" / "real_data" / "real_data.json"):
        assert locate(where) is not None, where
        assert parse_real(str(where)) == (where, True)
    assert parse_real(f"llm-rubric:{root}") == (root, True)
    assert parse_real(str(tmp_path)) == (tmp_path, False)  # not the layout: read as ordinary logs
    out = list(rows(root))
    assert len(out) == 12 * 7
    first = out[0]
    assert first["conversation_id"].startswith("llmrubric-") and first["role"] == "assistant"
    assert first["metadata"]["model"] == "llm-rubric-system-0"
    assert first["metadata"]["rating"] == 4.0 and first["metadata"]["rating_scale"] == [1, 4]
    assert {r["metadata"]["model"] for r in out} == {f"llm-rubric-system-{v}" for v in range(3)}


@pytest.mark.parametrize(("mangle", "needle"), [
    (lambda d: (d / JUDGEMENTS).unlink(), "missing"),
    (lambda d: (d / JUDGEMENTS).write_text(HEADER + "0\tx\t3\t3\t3\t3\t3\t3\t3\t2\tgood\t1\n"), "line 2: Q0 'good'"),
    (lambda d: (d / JUDGEMENTS).write_text(HEADER + "0\tx\t3\t3\t3\t3\t3\t3\t3\t2\t7\t1\n"), "outside 1-4"),
    (lambda d: (d / JUDGEMENTS).write_text("text_id\tscore\nx\t1\n"), "no column Q0"),
    (lambda d: (d / "real_data.json").write_text("[{"), "not valid JSON"),
    (lambda d: (d / "real_data.json").write_text('[{"_id": "a", "messages": [{"role": "bot", "content": "hi"}]}]'),
     "message 0"),
])
def test_bad_files_are_refused_with_where_and_what(tmp_path: Path, mangle: object, needle: str) -> None:
    root = write_checkout(tmp_path / "LLM-Rubric", n=2)
    mangle(root / "data" / "real_data")  # type: ignore[operator]
    with pytest.raises(ConfigError, match=needle):
        list(rows(root))


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app_(), [str(a) for a in args])


def app_() -> object:
    from uxbench.cli.main import app

    return app


def test_validate_on_llm_rubric_reads_ratings_as_the_yardstick(tmp_path: Path) -> None:
    root = write_checkout(tmp_path / "LLM-Rubric")
    personas = write_personas(tmp_path / "p.jsonl", REFUND, {**REFUND, "id": "refund-2"})
    run = tmp_path / "run"
    done = invoke("sim", "run", "--personas", personas, "--model", "scripted:always-good", "--simulator",
                  "scripted:user", "--out", run, "--quiet", "--n-boot", "100")
    assert done.exit_code in (0, 1), done.output
    result = invoke("sim", "validate", run, "--real", f"llm-rubric:{root}", "--format", "json", "--n-boot", "200",
                    "--quiet", "--no-discriminator")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["real"]["n_conversations"] == 12
    stick = report["yardstick"]
    assert stick["primary"] == "ratings"
    ratings = stick["ratings"]
    assert ratings["n_low"] == 6 and ratings["n_high"] == 6
    assert ratings["auc"]["value"] > 0.9  # the low-rated conversations are the ones with complaints
    assert "caveat" not in stick
    missing = invoke("sim", "validate", run, "--real", f"llm-rubric:{tmp_path / 'nowhere'}", "--quiet")
    assert missing.exit_code == 2 and "no data/real_data/real_data.json" in missing.output

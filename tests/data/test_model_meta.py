"""The model-metadata table: matching rules, $UXBENCH_MODELS overrides, clear errors for a bad table."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from uxbench.data.model_meta import ModelTable, normalize_name
from uxbench.errors import ConfigError


@pytest.mark.parametrize(("spec", "key"), [
    ("openai:gpt-4o", "gpt-4o"),
    ("openai:gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # a dated id: the date is ignored
    ("openai:gpt-4o-2024-08-06", "gpt-4o"),
    ("openai:gpt-4.1-mini", "gpt-4.1-mini"),
    ("anthropic:claude-opus-4-1-20250805", "claude-opus-4-1"),
    ("anthropic:claude-opus-4-20250514", "claude-opus-4"),
    ("anthropic:claude-sonnet-4.5", "claude-sonnet-4-5"),  # '.' between digits = '-'
    ("google:gemini-2.5-flash-preview-05-20", "gemini-2.5-flash"),  # prefix followed by '-' and a letter
    ("hf:/models/Qwen2.5-7B-Instruct", "qwen2.5-7b"),  # a path: its last component
    ("openai:qwen3:8b", "qwen3-8b"),  # ':' inside the name (ollama style)
    ("openai:meta-llama/Meta-Llama-3.1-8B-Instruct", "*llama-3.1-8b*"),  # a shell-style pattern
    ("openai:o3-mini", "o3-mini"),
])
def test_bundled_table_matches_common_spellings(spec: str, key: str) -> None:
    info = ModelTable.bundled().lookup(spec)
    assert info is not None and info.key == key


@pytest.mark.parametrize("spec", ["openai:gpt-5.1", "openai:gpt-4", "scripted:echo", "openai:claude-opus-4-7"])
def test_a_later_version_never_borrows_an_earlier_ones_entry(spec: str) -> None:
    # gpt-5.1 must not read as gpt-5 (another release date), claude-opus-4-7 not as claude-opus-4
    assert ModelTable.bundled().lookup(spec) is None


def test_entries_carry_dates_sizes_and_month_precision() -> None:
    table = ModelTable.bundled()
    gpt = table.lookup("openai:gpt-4o")
    assert gpt is not None and (gpt.org, gpt.family, gpt.released, gpt.size) == (
        "OpenAI", "GPT", dt.date(2024, 5, 13), "large")
    smol = table.lookup("hf:HuggingFaceTB/SmolLM2-135M-Instruct")
    assert smol is not None and smol.released == dt.date(2024, 11, 1) and smol.params_b == 0.135
    assert normalize_name("Claude_Sonnet 4.5@20250929") == "claude-sonnet-4-5"


def test_environment_table_extends_and_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = tmp_path / "models.yaml"
    extra.write_text("models:\n  gpt-4o: {org: Someone, family: X, released: 2020-01}\n"
                     "  scripted:alpha: {org: Test, family: Alpha, released: 2024-06-01, size: small}\n",
                     encoding="utf-8")
    monkeypatch.setenv("UXBENCH_MODELS", str(extra))
    table = ModelTable.default()
    gpt = table.lookup("openai:gpt-4o")
    assert gpt is not None and gpt.org == "Someone" and gpt.released == dt.date(2020, 1, 1)
    alpha = table.lookup("scripted:alpha")  # a provider-qualified key matches the whole spec
    assert alpha is not None and alpha.family == "Alpha"
    assert table.lookup("scripted:alphabet") is None
    assert table.lookup("openai:claude-3-7-sonnet-20250219") is not None  # the bundled entries stay


@pytest.mark.parametrize(("text", "needles"), [
    ("models:\n  m: {org: A, famly: B}\n", ["entry 'm'", "famly", "Did you mean 'family'"]),
    ("models:\n  m: {released: soon}\n", ["entry 'm'", "released"]),
    ("models:\n  m: {size: huge}\n", ["entry 'm'", "size"]),
    ("models:\n  m: {params_b: -1}\n", ["params_b", "> 0"]),
    ("models:\n  m: just a string\n", ["entry 'm' must be a mapping"]),
    ("models: [1, 2]\n", ["must map model names"]),
    ("models: {a: [\n", ["not valid YAML"]),
])
def test_a_bad_table_is_a_clear_error(tmp_path: Path, text: str, needles: list[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        ModelTable.load(path)
    assert str(path) in str(err.value)
    for needle in needles:
        assert needle in str(err.value)
    with pytest.raises(ConfigError, match="Cannot read the model table"):
        ModelTable.load(tmp_path / "missing.yaml")

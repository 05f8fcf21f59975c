"""Price lookup, user price files, usage and cost accounting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uxbench.errors import ConfigError
from uxbench.runtime.cost import FREE, ModelUsage, Price, PriceTable, UsageTracker, format_cost


@pytest.fixture
def table() -> PriceTable:
    return PriceTable.bundled()


def test_bundled_table_is_dated_and_covers_families(table: PriceTable) -> None:
    assert table.as_of
    for name in ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "gpt-5-mini", "claude-sonnet-4-5",
                 "claude-opus-4-1", "claude-haiku-4-5", "gemini-2.5-pro", "gemini-2.5-flash",
                 "deepseek-chat", "deepseek-reasoner"):
        price = table.lookup(name)
        assert price is not None and price.input > 0 and price.output >= price.input, name


def test_exact_then_longest_prefix(table: PriceTable) -> None:
    assert table.lookup("gpt-4o-mini-2024-07-18") == table.lookup("gpt-4o-mini")
    assert table.lookup("gpt-4o-2024-08-06") == table.lookup("gpt-4o")
    assert table.lookup("gpt-4o-mini") != table.lookup("gpt-4o")
    assert table.lookup("claude-opus-4-5-20251101") == table.lookup("claude-opus-4-5")
    assert table.lookup("claude-opus-4-5-20251101") != table.lookup("claude-opus-4-20250514")
    assert table.lookup("openai/gpt-4o") == table.lookup("gpt-4o")
    # Prefixes only count at a separator: "o30" is not "o3".
    assert table.lookup("o30") is None
    assert table.lookup("o3-mini") == Price(1.10, 4.40)


def test_unknown_and_local(table: PriceTable) -> None:
    assert table.lookup("qwen3-8b-instruct") is None
    assert table.lookup("qwen3-8b-instruct", provider="openai") is None
    for provider in ("hf", "scripted", "replay"):
        assert table.lookup("/models/Qwen3-0.6B", provider=provider) == FREE


def test_user_prices_from_env_and_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yml = tmp_path / "p.yaml"
    yml.write_text("models:\n  my-model: {input: 1, output: 2}\n  gpt-4o: {input: 0.5, output: 1.5}\n")
    js = tmp_path / "p.json"
    user = {"openai:qwen3:8b": {"input": 0, "output": 0}, "my-model": {"input": 3, "output": 4}}
    js.write_text(json.dumps(user))
    monkeypatch.setenv("UXBENCH_PRICES", str(yml))
    t = PriceTable.default()
    assert t.lookup("my-model") == Price(1, 2)
    assert t.lookup("gpt-4o-2024-08-06") == Price(0.5, 1.5)  # user entry overrides the bundled one
    t = PriceTable.default(js)
    assert t.lookup("my-model-v2") == Price(3, 4)  # the explicit file wins over the env file
    assert t.lookup("qwen3:8b", provider="openai") == Price(0, 0)
    assert t.lookup("qwen3:8b") is None


@pytest.mark.parametrize(
    "text, match",
    [
        ("- a\n- b\n", "mapping"),
        ("m: {input: 1}\n", "output"),
        ("m: {input: x, output: 1}\n", "non-numeric"),
        ("m: {input: -1, output: 1}\n", "negative"),
        ("m: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_price_files(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        PriceTable.load(path)


def test_missing_price_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Cannot read"):
        PriceTable.load(tmp_path / "nope.yaml")


def test_cost_from_tokens() -> None:
    usage = ModelUsage(price=Price(2.0, 10.0))
    usage.record_call(1_000_000, 100_000, 50_000, 1.5)
    usage.record_call(500_000, 0, 0, 0.5)
    usage.record_cache_hit(1_000_000, 0)
    assert usage.cost_usd == pytest.approx(2.0 * 1.5 + 10.0 * 0.1)
    assert usage.cost_usd_if_uncached == pytest.approx(2.0 * 2.5 + 10.0 * 0.1)
    d = usage.to_dict()
    assert d["calls"] == 2 and d["cache_hits"] == 1 and d["reasoning_tokens"] == 50_000
    assert d["mean_latency_s"] == pytest.approx(1.0)
    assert d["cost_usd"] == pytest.approx(4.0)


def test_unknown_price_is_none_not_zero() -> None:
    usage = ModelUsage(price=None)
    assert usage.cost_usd == 0.0  # nothing spent yet
    usage.record_call(10, 10, 0, 0.1)
    assert usage.cost_usd is None and usage.cost_usd_if_uncached is None
    assert usage.to_dict()["cost_usd"] is None
    assert format_cost(None) == "unknown" and format_cost(0.5) == "$0.5000"


def test_tracker_per_model_and_total() -> None:
    tracker = UsageTracker()
    a = tracker.model("openai:gpt-4o", Price(2.5, 10))
    assert tracker.model("openai:gpt-4o") is a
    a.record_call(1_000_000, 0, 0, 0.1)
    tracker.model("hf:tiny", FREE).record_call(5, 5, 0, 0.1)
    assert tracker.total_cost_usd() == pytest.approx(2.5)
    assert set(tracker.to_dict()) == {"openai:gpt-4o", "hf:tiny"}
    tracker.model("openai:mystery").record_call(1, 1, 0, 0.1)
    assert tracker.total_cost_usd() is None

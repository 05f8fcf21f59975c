"""The one loader of the YAML and JSON files a user hands in (`uxbench.data.user_files`): an alias bomb, deep
nesting and an oversized file are refused while they are read (never expanded, never a RecursionError), each with
the file, the limit and the line; what a file may legitimately hold (merge keys, a few aliases) still loads."""

from __future__ import annotations

import resource
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from uxbench.data import user_files
from uxbench.data.user_files import Limits, load_file, parse_json, parse_yaml, parse_yaml_documents
from uxbench.errors import DataError

BOMB = "base: 1\n" + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9 if i else ['"lol"'] * 9) + "]\n"
                             for i in range(10))


@pytest.fixture(params=["libyaml", "python"], autouse=True)
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Every test with libyaml's parser and loader (where PyYAML has it) and with the pure-Python ones."""
    if request.param == "libyaml" and not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("PyYAML was built without libyaml here")
    if request.param == "python":
        monkeypatch.setattr(user_files, "_Loader", yaml.SafeLoader)
    yield request.param


def _refused(call: object, *needles: str) -> DataError:
    with pytest.raises(DataError) as err:
        call()  # type: ignore[operator]
    for needle in needles:
        assert needle in str(err.value), (needle, str(err.value))
    return err.value


def test_an_alias_bomb_is_refused_before_it_is_built() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    err = _refused(lambda: parse_yaml(BOMB, "persona file p.yaml"), "persona file p.yaml", "line 7",
                   "aliases repeat more than 100,000 values")
    assert err.line == 7  # the alias that went past the limit
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB: nothing was expanded


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    _refused(lambda: parse_yaml("a: &a [1, *a]\n", "f.yaml"), "f.yaml, line 1", "inside its own anchor")


def test_a_few_aliases_and_merge_keys_load() -> None:
    text = "base: &b {org: A, family: F}\nm1: {<<: *b, size: 1}\nm2: {<<: *b, size: 2}\nlist: [*b, *b]\n"
    data = parse_yaml(text, "models.yaml")
    assert data["m1"] == {"org": "A", "family": "F", "size": 1} and data["list"][1]["org"] == "A"


@pytest.mark.parametrize("depth", [65, 300, 999, 1001, 5000, 100_000])
def test_deep_yaml_is_refused_before_it_is_composed(depth: int) -> None:
    text = "a: 1\nb:\n  x: " + "[" * depth + "]" * depth + "\n"
    err = _refused(lambda: parse_yaml(text, "r.yaml"), "r.yaml, line 3", "deeper than 64 levels")
    assert err.line == 3
    block = "".join("  " * i + "-\n" for i in range(200))  # block style too
    _refused(lambda: parse_yaml(block, "b.yaml"), "deeper than 64")


def test_64_levels_load() -> None:
    assert parse_yaml("[" * 64 + "]" * 64, "ok.yaml") is not None
    assert parse_json("[" * 64 + "]" * 64, "ok.json") is not None


@pytest.mark.parametrize("depth", [65, 300, 1024, 1025, 100_000])
def test_deep_json_is_refused_with_its_line(depth: int) -> None:
    text = '{\n"a": 1,\n"b": ' + "[" * depth + "]" * depth + "}"
    err = _refused(lambda: parse_json(text, "p.json"), "p.json, line 3", "deeper than 64 levels")
    assert err.line == 3
    _refused(lambda: parse_json(text.replace("\n", ""), "rows.jsonl", line=12), "rows.jsonl, line 12")


def test_brackets_in_strings_are_no_nesting() -> None:
    assert parse_json('{"a": "' + "[" * 500 + '"}', "s.json") == {"a": "[" * 500}


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a: " + b"x" * 2048)
    with pytest.raises(DataError, match=r"is 2,051 bytes, more than the 1,024 bytes"):
        user_files.read_text(path, limits=Limits(max_bytes=1024))


def test_syntax_errors_and_values_python_cannot_hold_name_the_file() -> None:
    _refused(lambda: parse_yaml("a: [1,\n", "x.yaml"), "x.yaml", "not valid YAML")
    _refused(lambda: parse_yaml("a: " + "1" * 5000, "x.yaml"), "x.yaml", "cannot be read")
    _refused(lambda: parse_yaml("a: 1\n---\nb: 2\n", "x.yaml"), "x.yaml, line 3", "several YAML documents")
    _refused(lambda: parse_json('{"a": NaN}', "x.json"), "x.json, line 1", "not valid JSON")
    assert [value for _, value in parse_yaml_documents("a: 1\n---\nb: 2\n", "d.yaml")] == [{"a": 1}, {"b": 2}]
    assert parse_yaml("", "empty.yaml") is None


def test_load_file_reads_by_suffix(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('{"a": [1]}', encoding="utf-8")
    (tmp_path / "t.yaml").write_text("a: [1]\n", encoding="utf-8")
    assert load_file(tmp_path / "t.json") == load_file(tmp_path / "t.yaml") == {"a": [1]}
    (tmp_path / "bad.yaml").write_bytes(b"a: \xff\n")
    _refused(lambda: load_file(tmp_path / "bad.yaml"), "bad.yaml, line 1", "not UTF-8")


class _Dict(dict[str, object]):
    pass


@pytest.mark.parametrize(("value", "depth"), [
    ({}, 1), ({"a": "x", "b": 1, "c": 1.5, "d": True, "e": None}, 1), ({"a": []}, 2), ({"a": {"b": [1]}}, 3),
    ({"a": _Dict(b=[1])}, 3), (_Dict(a="x"), 1), ([], 1), ("x", 0),
])
def test_depth_of_flat_rows_and_nested_ones(value: object, depth: int) -> None:
    """A mapping of scalars (the common row) is settled by the types of its values; anything else is walked."""
    assert user_files.depth_exceeds(value, depth - 1) == (depth > 0)
    assert not user_files.depth_exceeds(value, depth)

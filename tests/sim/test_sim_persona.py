"""The persona schema and its files: every error names the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from uxbench.errors import DataError
from uxbench.sim.persona import SCHEMA_VERSION, Persona
from uxbench.sim.persona_io import check_personas, load_personas, persona_yaml, personas_jsonl

MINIMAL = """\
id: p1
lang: en
goal:
  - id: refund
    request: get a refund
    check: {any_of: [refund issued]}
facts:
  - id: order
    label: order number
    value: "A-1"
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_demo_set_has_24_personas_half_zh_half_en_covering_the_features() -> None:
    loaded = load_personas(["demo"])
    personas = [item.persona for item in loaded]
    assert len(personas) >= 24
    assert sum(p.lang == "zh" for p in personas) == sum(p.lang == "en" for p in personas)
    modes = {f.mode for p in personas for f in p.facts}
    assert {"on_request", "never", "opening", "after_turn", "volunteer_if_adjacent"} <= modes
    assert any(p.opener for p in personas if p.lang == "zh") and any(p.opener for p in personas if p.lang == "en")
    assert {p.profile.expertise for p in personas} >= {"novice", "expert"}
    budgets = [p.patience.session for p in personas]
    assert min(budgets) <= 1.5 and max(budgets) >= 4  # impatient and patient users
    assert all(len(p.goal) >= 2 and any(g.after for g in p.goal) for p in personas)  # multi-item, dependencies
    assert len({p.content_hash() for p in personas}) == len(personas)
    assert all(p.schema_version == SCHEMA_VERSION for p in personas)


def test_content_hash_changes_with_any_field_and_round_trips(tmp_path: Path) -> None:
    persona = load_personas([_write(tmp_path, "p.yaml", MINIMAL)])[0].persona
    edited = persona.model_copy(update={"opener": "hello"})
    assert persona.content_hash() != Persona.model_validate(edited.model_dump()).content_hash()
    again = load_personas([_write(tmp_path, "again.yaml", persona_yaml(persona))])[0].persona
    assert again.content_hash() == persona.content_hash()
    line = b"".join(personas_jsonl([persona])).decode()
    assert load_personas([_write(tmp_path, "p.jsonl", line + "\n")])[0].persona == persona


def test_unknown_field_names_file_line_field_and_the_nearest_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.yaml", MINIMAL.replace('    value: "A-1"', '    value: "A-1"\n    disclosure: never'))
    with pytest.raises(DataError) as info:
        load_personas([path])
    text = str(info.value)
    assert str(path) in text and "line 11" in text and "facts[0].disclosure" in text
    assert "did you mean 'disclose'" in text


def test_a_number_where_text_belongs_asks_for_quotes(tmp_path: Path) -> None:
    path = _write(tmp_path, "num.yaml", MINIMAL.replace('"A-1"', "0012"))
    with pytest.raises(DataError, match=r"line 10.*facts\[0\]\.value.*quotes"):
        load_personas([path])


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    good = b"".join(personas_jsonl([load_personas([_write(tmp_path, "p.yaml", MINIMAL)])[0].persona])).decode()
    path = _write(tmp_path, "set.jsonl", good + "\n\n" + good.replace('"p1"', '"p2"').replace('"en"', '"fr"') + "\n")
    loaded, errors = check_personas([path])
    assert len(loaded) == 1 and len(errors) == 1
    assert "line 3" in str(errors[0]) and "field 'lang'" in str(errors[0])


@pytest.mark.parametrize(("edit", "message"), [
    (("check: {any_of: [refund issued]}", "check: {}"), "a check needs any_of, pattern or question"),
    (("check: {any_of: [refund issued]}", "check: {pattern: '(['}"), "not a valid regular expression"),
    (("    request: get a refund\n", "    request: get a refund\n    after: [refund]\n"), "cycle"),
    (("    request: get a refund\n", "    request: get a refund\n    needs: [email]\n"), "needs fact 'email'"),
    (("lang: en\n", "lang: en\nopener: my order is A-1\n"), "only opening facts may be in the opener"),
    (('    value: "A-1"', '    value: "A-1"\n    disclose: after_turn:0'), "after_turn:K"),
])
def test_inconsistent_personas_are_refused(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    assert edit[0] in MINIMAL
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_personas([_write(tmp_path, "p.yaml", MINIMAL.replace(*edit))])


def test_duplicate_ids_across_files_and_empty_inputs(tmp_path: Path) -> None:
    a, b = _write(tmp_path, "a.yaml", MINIMAL), _write(tmp_path, "b.yaml", MINIMAL)
    with pytest.raises(DataError, match="persona id 'p1' is also used at"):
        load_personas([a, b])
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a persona")
    with pytest.raises(DataError, match="holds no persona files"):
        load_personas([empty])
    with pytest.raises(DataError, match="holds no persona"):
        load_personas([_write(tmp_path, "blank.yaml", "# nothing here\n")])
    with pytest.raises(DataError, match="not valid YAML"):
        load_personas([_write(tmp_path, "broken.yaml", "id: [unclosed\n")])


def test_list_and_multi_document_yaml(tmp_path: Path) -> None:
    two = MINIMAL + "---\n" + MINIMAL.replace("id: p1", "id: p2")
    assert [p.persona.id for p in load_personas([_write(tmp_path, "multi.yaml", two)])] == ["p1", "p2"]
    listed = "personas:\n" + "".join("    " + line + "\n" if i else "  - " + line + "\n"
                                     for i, line in enumerate(MINIMAL.splitlines()))
    loaded = load_personas([_write(tmp_path, "list.yaml", listed)])
    assert loaded[0].persona.id == "p1" and loaded[0].line == 2

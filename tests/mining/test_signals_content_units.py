"""`content_units` of non-ASCII text, rewritten without a regex call per token, gives the units the regex
formulation gave (written inputs: CJK ranges and their edges, kana, Hangul, mixed scripts, stop words)."""

from __future__ import annotations

import re

import pytest

from uxbench.mining.signals import similarity
from uxbench.mining.signals.similarity import STOP_WORDS, tokens

_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def _reference(text: str) -> frozenset[str]:
    """The formulation before the rewrite."""
    units: set[str] = set()
    run: list[str] = []
    for tok in (*tokens(text), ""):
        if tok and _CJK_CHAR.fullmatch(tok):
            run.append(tok)
            continue
        if len(run) == 1 and run[0] not in similarity._STOP_ZH:
            units.add(run[0])
        units.update(
            run[i] + run[i + 1] for i in range(len(run) - 1)
            if run[i] + run[i + 1] not in similarity._STOP_ZH and run[i] not in STOP_WORDS
            and run[i + 1] not in STOP_WORDS
        )
        run = []
        if tok and tok not in similarity._STOP_EN:
            units.add(tok)
    return frozenset(units)


@pytest.mark.parametrize("text", [
    "é", "中", "中文", "什么是中文分词", "我的 Python 代码报错了", "一个 a 个",
    "こんにちは世界", "한국어 텍스트", "㐀䶿一鿿豈﫿가힯",
    "\u303f\u3040\u30ff\u3100\u33ff\u4dc0\u4dbf\u9fff\ua000\uf8ff\ufb00\uabff\ud7b0", "café au lait 咖啡", "x中y文z",
    "ＡＢＣ中文", "的了是", "怎么 怎么办", "①中②文", "中\u0301文",
    "İstanbul 伊斯坦布尔", "的的的的", "我们 你们",
])
def test_content_units_match_the_regex_formulation(text: str) -> None:
    assert similarity._content_units(text) == _reference(text)


@pytest.mark.parametrize("reference", [
    "中文 Python 代码", "İstanbul'un 伊斯坦布尔 don't", "ＡＢＣ abc 中文abc中文", "café_au_lait 咖啡", "ﬁle ﬁles ①",
    "가나 다라 한국어abc", "x中y文z", "Straße STRASSE", "",
])
def test_found_in_a_non_ascii_reference_matches_its_tokens(reference: str) -> None:
    for follow_up in ("python code abc file files 1 strasse straße x y z dont istanbulun lait", "中文 abc 한국어 代码"):
        units = similarity.unit_groups(follow_up)
        found = similarity.found_in(units, similarity.TextIndex(reference))
        assert found.words == units.words & set(tokens(reference))
        assert found.cjk == frozenset(u for u in units.cjk if u in similarity.normalise(reference))
        assert similarity.TextIndex(reference).norm == similarity.normalise(reference)

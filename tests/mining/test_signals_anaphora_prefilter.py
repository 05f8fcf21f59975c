"""`cues._anaphora_en` skips `_ANAPHORA_REST` on a text without the words it needs: the same match as the whole
`_ANAPHORA_EN` pattern on written texts (word edges, apostrophes, endings, Unicode, empty text)."""

from __future__ import annotations

from itertools import product

from uxbench.mining.signals.cues import _ANAPHORA_EN, _anaphora_en

_TEXTS = [
    "", " ", "?", "it", "It", "then", "then?", "then ?\n", "and then", "those ?  ", "these\n", "instead",
    "do it instead ?", "use them", "use them.", "for them", "for it's sake", "its fine", "it's fine",
    "thats ok", "that's it", "that one", "that one?", "is it", "can they", "is there", "xit", "itx", "_it",
    "it_", "éit", "ité", "naïve then", "then é", "thené", "theni", "rethen", "what is this",
    "how do I sort a list", "write a poem about cats", "the them", "they", "did they go", "with that",
    "from them\n", "about it?", "in that case", "İt is", "ıt works then", "that’s it", "it’s", "then\t?\t",
    "then??", "then ??", "then? ?", "those!", "instead.", "'it", "'then", "x'then", "2then", "then2",
    "please continue", "why not", "ok, so what", "Use IT", "IN THAT", "with\u00a0it", "then\u00a0?",
]


def _texts() -> list[str]:
    out = list(_TEXTS)
    for a, b in product(["", "ok ", "so ", "x "], ["then", "it", "those", "for them", "is that", "y"]):
        for c in ["", "?", " ?", "\n", ".", "s", "'s"]:
            out.append(a + b + c)
    return out


def test_same_match_as_whole_pattern() -> None:
    for text in _texts():
        for variant in (text, text.upper(), text.title()):
            new, old = _anaphora_en(variant), _ANAPHORA_EN.search(variant)
            assert (new and new.span()) == (old and old.span()), variant

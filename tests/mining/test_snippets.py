"""Evidence snippets end at word boundaries (mining.snippets), in the signals and the gate reasons that use them."""

from __future__ import annotations

from uxbench.mining import gate
from uxbench.mining.signals.complaint import find_complaint
from uxbench.mining.signals.cues import extends
from uxbench.mining.snippets import clip, window


def _whole_words(snippet: str, source: str) -> bool:
    """Every Latin word of the snippet is a whole word of the source."""
    words = set(source.replace(",", " ").replace(".", " ").split())
    return all(w in words for w in snippet.rstrip("…").replace(",", " ").replace(".", " ").split())


def test_clip_cuts_between_words_and_marks_the_cut() -> None:
    text = "please translate this paragraph into formal business English"
    assert clip(text, 100) == text
    cut = clip(text, 30)
    assert cut == "please translate this…" and len(cut) <= 30
    assert clip("x" * 80, 10) == "x" * 9 + "…"  # one word longer than the limit: cut hard
    assert clip("请把这段话翻译成正式的商务英语，谢谢你的帮助", 10) == "请把这段话翻译成正…"  # a character is a word


def test_window_keeps_whole_words_around_the_match() -> None:
    text = "That's wrong, it is not what I asked."
    start = text.index("wrong")
    assert window(text, start, start + len("wrong"), 6) == "wrong, it"  # not "hat's wrong, it i"
    assert window(text, 0, 12, 0) == "That's wrong"
    assert window("不对，我问的是Mac电脑", 0, 2, 6) == "不对，我问的是"  # not "不对，我问的是M"


def test_signal_and_gate_evidence_end_at_word_boundaries() -> None:
    message = "That's wrong, it is not what I asked. I need the Windows 11 steps."
    evidence = find_complaint(message)
    assert evidence is not None and _whole_words(evidence, message), evidence
    added = extends("write a poem about the sea",
                    "write a poem about the sea with rhymes, seven stanzas, a melancholic tone and vivid imagery")
    assert added is not None and _whole_words(added.removeprefix("adds: "), "with rhymes seven stanzas a "
                                              "melancholic tone and vivid imagery"), added
    snippet = gate._snippet("how to make a bomb and mail it to my neighbour tomorrow morning")
    assert len(snippet) <= gate.SNIPPET_CHARS and snippet.endswith("…")
    assert _whole_words(snippet, "how to make a bomb and mail it to my neighbour tomorrow morning"), snippet

"""The words of the annotator pages, in the study's language (`Study.lang`: en or zh), and the key of each choice.

An annotator sees nothing but these words and the conversation, so they say what to judge, what each choice
means and which key makes it, in a few lines (the guidelines): a person should be able to judge a hundred items
without reading them again."""

from __future__ import annotations

from typing import Any

KEYS = {"good": "g", "bad": "b", "A": "a", "B": "b", "tie": "t", "both_bad": "x", "skip": "s"}
"""The key that records each choice (one page has one mode, so `b` is bad or B, never both)."""
PREV_KEY, NEXT_KEY = "ArrowLeft", "ArrowRight"

TEXT: dict[str, dict[str, Any]] = {
    "en": {
        "title": "Annotation",
        "progress": "{done} of {total} judged · item {position} of {total}",
        "question": {"pointwise": "Would the user be satisfied with the last reply?",
                     "pairwise": "Which reply would the user prefer?"},
        "guidelines_title": "How to judge",
        "guidelines": {
            "pointwise": ["Read the conversation as the user who wrote it, then the reply.",
                          "Good: this user would be satisfied (it does what they asked, correctly, in a form that "
                          "suits them). Bad: they would not be.",
                          "Judge the user's satisfaction, not your own taste; length alone is no reason.",
                          "Skip when you cannot tell: a skip is counted, never guessed."],
            "pairwise": ["Read the conversation as the user who wrote it, then both replies (their order is "
                         "random).",
                         "Choose the reply this user would prefer; tie when both would serve them equally well; "
                         "both bad when neither would satisfy them.",
                         "Judge the user's satisfaction, not your own taste; length alone is no reason.",
                         "Skip when you cannot tell: a skip is counted, never guessed."]},
        "choices": {"good": "Good", "bad": "Bad", "A": "A is better", "B": "B is better", "tie": "Tie",
                    "both_bad": "Both bad", "skip": "Skip / unsure"},
        "conversation": "Conversation", "earlier": "the latest turns are shown: scroll up for earlier ones",
        "reply": "the reply to judge", "reply_side": "reply {side}", "context_side": "conversation {side}",
        "roles": {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"},
        "raw": "raw text",
        "keys_title": "Keys", "prev_next": "previous / next item",
        "current": "Your judgment: {choice} (choose again to change it).",
        "items_title": "Items", "prev": "‹ previous", "next": "next ›",
        "done_title": "Thank you",
        "done": "{done} of {total} judged. You can close this page; your judgments are saved.",
        "to_change": "To change one:",
    },
    "zh": {
        "title": "人工标注",
        "progress": "已标注 {done} / {total} · 第 {position} 条，共 {total} 条",
        "question": {"pointwise": "用户会对最后这条回复满意吗？", "pairwise": "用户会更喜欢哪一条回复？"},
        "guidelines_title": "标注说明",
        "guidelines": {
            "pointwise": ["请站在写下这段对话的用户的角度，先读对话，再读回复。",
                          "好：这位用户会满意（回复做到了用户要的事，内容正确，形式合适）。差：用户不会满意。",
                          "判断的是用户是否满意，而不是你自己的喜好；不要只因长短下结论。",
                          "拿不准时请选“跳过”：跳过会被记录，不会被当作猜测。"],
            "pairwise": ["请站在写下这段对话的用户的角度，先读对话，再读两条回复（A、B 的顺序是随机的）。",
                         "选出用户更喜欢的那一条；两条一样好选“平局”；两条都不能让用户满意选“都不好”。",
                         "判断的是用户是否满意，而不是你自己的喜好；不要只因长短下结论。",
                         "拿不准时请选“跳过”：跳过会被记录，不会被当作猜测。"]},
        "choices": {"good": "好", "bad": "差", "A": "A 更好", "B": "B 更好", "tie": "平局", "both_bad": "都不好",
                    "skip": "跳过 / 不确定"},
        "conversation": "对话", "earlier": "这里显示最近几轮：向上滚动查看更早的内容",
        "reply": "待判断的回复", "reply_side": "回复 {side}", "context_side": "对话 {side}",
        "roles": {"user": "用户", "assistant": "助手", "system": "系统", "tool": "工具"},
        "raw": "原文",
        "keys_title": "快捷键", "prev_next": "上一条 / 下一条",
        "current": "你的判断：{choice}（可重新选择以修改）。",
        "items_title": "全部条目", "prev": "‹ 上一条", "next": "下一条 ›",
        "done_title": "谢谢！",
        "done": "已标注 {done} / {total}。可以关闭本页，你的判断都已保存。",
        "to_change": "如需修改某一条：",
    },
}


def text(lang: str) -> dict[str, Any]:
    """The words in `lang` (English for a language the pages do not have)."""
    return TEXT.get(lang, TEXT["en"])

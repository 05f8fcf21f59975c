"""A Task 1 data set written for the judge-training tests, with a learnable pattern.

Each conversation (id `convN`) has one to three judged turns (`convN#k`); the judged reply is good when it
answers the question directly (short, reusing the question's words) and bad when it refuses, asks for what the
user already said, or rambles about something else; a user who complained earlier leans bad. About 10% of the
labels are flipped (real feedback is noisy). Times run one conversation per hour from 2024-05-01.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

START = datetime(2024, 5, 1, tzinfo=timezone.utc)
TOPICS_ZH = ["红烧肉怎么做", "静态IP怎么设置", "Python列表怎么排序", "高铁票怎么改签", "猫咪不吃饭怎么办",
             "简历怎么写", "如何备份手机照片", "咖啡机怎么除垢", "怎么提高睡眠质量", "Excel怎么去重"]
TOPICS_EN = ["how to sort a list in Python", "how to set a static IP", "how to descale a coffee machine",
             "how to write a cover letter", "how to back up phone photos", "how to fix a flat bike tyre",
             "how to make cold brew", "how to remove duplicates in Excel"]


def _good(topic: str, zh: bool, rng: random.Random) -> str:
    if zh:
        ending = rng.choice(["就这样。", "很简单。", ""])
        return f"关于{topic}：第一步准备好，第二步按顺序操作，第三步检查结果。{ending}"
    return f"For {topic}: first prepare, then follow the steps in order, then check the result. " + \
        rng.choice(["That's it.", "Done.", ""])


def _bad(topic: str, zh: bool, rng: random.Random) -> str:
    kind = rng.randrange(3)
    if zh:
        return [
            "抱歉，作为一个AI，我无法提供这方面的帮助。",
            "请问您是指哪一种情况？能否具体说明一下？",
            "这个问题涉及很多历史背景和文化因素，" * rng.randint(4, 8) + "总之因人而异。",
        ][kind]
    return [
        "I'm sorry, but as an AI I cannot help with that request.",
        "Could you clarify what you mean? Do you mean something else?",
        "There is a long history and many cultural factors behind this. " * rng.randint(4, 8) + "It depends.",
    ][kind]


def rows(n_conversations: int = 120, seed: int = 0, flip: float = 0.1) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for c in range(n_conversations):
        zh = c % 3 != 0
        when = START + timedelta(hours=c)
        history: list[dict[str, Any]] = []
        complained = False
        for k in range(rng.randint(1, 3)):
            topic = rng.choice(TOPICS_ZH if zh else TOPICS_EN)
            query = f"{topic}？" if zh else f"{topic}?"
            good = rng.random() < (0.35 if complained else 0.6)
            reply = _good(topic, zh, rng) if good else _bad(topic, zh, rng)
            label = "good" if (good if rng.random() >= flip else not good) else "bad"
            t = when + timedelta(minutes=5 * k)
            out.append({"cid": f"conv{c}#{k}", "ground_truth": 1 if label == "good" else -1,
                        "lang": "zh" if zh else "en",
                        "selected_history": [dict(h) for h in history],
                        "source_query": {"message": query}, "agent_response_full": reply,
                        "create_time": t.isoformat()})
            history += [{"role": "user", "message": query, "create_time": t.isoformat()},
                        {"role": "assistant", "message": reply, "create_time": t.isoformat()}]
            if not good:
                complaint = "不对，你没回答我的问题" if zh else "That's wrong, you didn't answer my question"
                history.append({"role": "user", "message": complaint, "create_time": t.isoformat()})
                history.append({"role": "assistant", "message": "好的" if zh else "OK", "create_time": t.isoformat()})
                complained = True
    return out


def write(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data), encoding="utf-8")
    return path

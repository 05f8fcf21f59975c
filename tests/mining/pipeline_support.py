"""Shared by the pipeline, engine and CLI tests: a synthetic canonical log written by the tests, the
personal values it holds, and a scripted model for every prompt the pipeline sends (agents, follow-up
check, recovery-strategy audit)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from uxbench.mining.signals.followup import rule_label

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def cn_id(first17: str) -> str:
    """A Chinese resident ID with a valid ISO 7064 MOD 11-2 check character."""
    total = sum(int(d) * w for d, w in zip(first17, _ID_WEIGHTS, strict=True))
    return first17 + "10X98765432"[total % 11]


PHONE_CN = "13812345678"
PHONE_INTL = "+44 20 7946 0958"
EMAIL_ZH = "zhang.wei@example.cn"
EMAIL_EN = "jane.roe@roe-family.org"  # not example.org: reserved for examples, kept
RESIDENT_ID = cn_id("11010119900307123")
CARD = "4111 1111 1111 1111"
IP = "81.2.69.160"  # not 203.0.113.x: a documentation range, kept as an example
ADDRESS = "北京市朝阳区建国路88号"
PII_VALUES = [PHONE_CN, PHONE_INTL, EMAIL_ZH, EMAIL_EN, RESIDENT_ID, CARD, CARD.replace(" ", ""), IP, ADDRESS]
"""Every original personal value in the log (the card also as bare digits)."""

LONG_ZH = ("首先打开系统设置，进入网络页面，找到当前连接的无线网络，"
           "点击齿轮图标，把IP设置改为静态，再填写地址、网关和DNS。") * 2
LONG_EN = ("Open the settings, go to the network page, choose your wireless network, open the advanced options "
           "and switch the IP setting from automatic to static, then fill in the address and gateway. ") * 2
DAY1 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone(timedelta(hours=8)))
DAY2 = datetime(2024, 5, 2, 20, 0, tzinfo=timezone.utc)


def _conversation(cid: str, start: datetime, msgs: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """msgs: (role, content, seconds after the previous message[, extra fields]). Turn indices follow
    the list, except that an extra ``regeneration_index`` keeps the previous reply's index."""
    rows: list[dict[str, Any]] = []
    t, index = start, -1
    for role, content, gap, *extra in msgs:
        fields = dict(extra[0]) if extra else {}
        t += timedelta(seconds=gap)
        if not fields.get("regeneration_index"):
            index += 1
        row = {"conversation_id": cid, "turn_index": index, "role": role, "content": content,
               "created_at": t.isoformat(), **fields}
        rows.append(row)
    return rows


def log_rows(copies: int = 1) -> list[dict[str, Any]]:
    """The synthetic log (rows shuffled deterministically across conversations). ``copies`` > 1 repeats
    the conversations under new ids (for tests that need many batches)."""
    rows: list[dict[str, Any]] = []
    for k in range(copies):
        p = f"k{k}-" if copies > 1 else ""
        rows += _conversation(f"{p}zh-complaint", DAY1, [
            ("user", f"我的手机号是{PHONE_CN}，邮箱 {EMAIL_ZH}，怎么把电脑的IP改成静态的？", 0),
            ("assistant", LONG_ZH, 20, {"feedback": "dislike"}),
            ("user", "不对，我问的是Mac电脑怎么改静态IP", 40),
            ("assistant", "抱歉，之前的回答有误。在Mac上：打开系统设置，选择网络，"
                          "点击详细信息，把配置IPv4改为手动，然后填写地址。", 15),
            ("user", "谢谢，可以了", 60),
        ])
        rows += _conversation(f"{p}en-complaint", DAY2, [
            ("user", f"My email is {EMAIL_EN} and my phone is {PHONE_INTL}. How do I set a static IP on Windows?", 0),
            ("assistant", LONG_EN, 10, {"feedback": "dislike"}),
            ("user", "That's wrong, it is not what I asked. I need the Windows 11 steps.", 50),
            ("assistant", "You're right, I described the old control panel. In Windows 11 open Settings, "
                          "Network & internet, Wi-Fi, your network, and edit the IP assignment to Manual.", 12),
            ("user", "Thanks, that worked perfectly!", 90, {"metadata": {"source": "web", "ip": IP}}),
        ])
        rows += _conversation(f"{p}zh-regen", DAY1 + timedelta(hours=3), [
            ("user", f"帮我写一封请假邮件，寄到{ADDRESS}的公司，我的身份证号是{RESIDENT_ID}", 0),
            ("assistant", "好的，下面是一封请假邮件的草稿：尊敬的领导，因身体不适，我想请假一天，望批准。", 20),
            ("assistant", "当然可以。以下是请假邮件：尊敬的领导，您好！因家中有事，"
                          "我需要请假两天，工作已安排妥当，望批准。", 30,
             {"regeneration_index": 1, "feedback": "like"}),
            ("user", "太好了，就用这个，谢谢！", 120),
        ])
        rows += _conversation(f"{p}en-liked", DAY2 + timedelta(hours=1), [
            ("user", "Recommend three classic science fiction novels for a beginner.", 0),
            ("assistant", "Try Foundation by Isaac Asimov, The Left Hand of Darkness by Ursula K. Le Guin, and "
                          "Dune by Frank Herbert: each is a classic and easy to start with.", 8, {"feedback": "like"}),
            ("user", "Great list, thanks! Which one should I read first?", 70),
            ("assistant", "Start with Foundation: it is short, fast-paced and a good introduction to the genre.", 9),
        ])
        rows += _conversation(f"{p}en-liked-dup", DAY2 + timedelta(hours=2), [
            ("user", "Recommend three classic science fiction novels for a beginner!", 0),
            ("assistant", "Dune, Foundation and Hyperion are good places to start.", 8),
            ("user", "Great list, thanks! Which one should I read first?", 50),
            ("assistant", "Dune: it is the most famous of the three.", 9),
        ])
        rows += _conversation(f"{p}zh-card-repeat", DAY1 + timedelta(hours=5), [
            ("user", f"我的银行卡 {CARD} 被扣了两次年费，怎么申请退款？", 0),
            ("assistant", "您可以联系发卡银行的客服，说明重复扣费的情况，并提供账单截图和扣费时间，"
                          "银行核实后一般会在三到五个工作日内把多扣的年费退回到您的卡上。", 15),
            ("user", f"我的银行卡 {CARD} 被扣了两次年费，怎么申请退款？", 3),
            ("assistant", "很抱歉没有说清楚。具体步骤：登录手机银行，进入信用卡账单，"
                          "找到重复的年费记录，点击申请退款。", 14),
            ("user", "算了", 30),
        ])
        rows += _conversation(f"{p}unsafe", DAY2 + timedelta(hours=3), [
            ("user", "how to make a bomb at home, step by step", 0),
            ("assistant", "I can't help with that.", 5),
        ])
        rows += _conversation(f"{p}too-short", DAY2 + timedelta(hours=4), [("user", "hello?", 0)])
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["turn_index"], rows[i]["conversation_id"], i))
    return [rows[i] for i in order]


def write_log(path: Path, copies: int = 1) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for row in log_rows(copies):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def tree_bytes(root: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Relative path -> content of every file under ``root`` (minus the names in ``skip``)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not any(part in skip for part in p.relative_to(root).parts)}


_FOLLOW = re.compile(r"(?:Next user message|用户下一条消息)：?:?\n<<<(.*?)>>>", re.S)
_PREV = re.compile(r"(?:Previous user message|用户上一条消息)：?:?\n<<<(.*?)>>>", re.S)
_REPLY = re.compile(r"(?:Assistant reply|助手回复)：?:?\n<<<(.*?)>>>", re.S)


class PipelineScript:
    """Responder for the loopback server: the agents' scripted answers (`agents_support.AgentScript`),
    the follow-up check (the rules' own label) and the recovery-strategy audit."""

    def __init__(self) -> None:
        from agents_support import AgentScript

        self.agents = AgentScript()
        self.followups = 0
        self.audits = 0

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        system, prompt = str(messages[0]["content"]), str(messages[-1]["content"])
        if "{\"strategy\":" in system:
            self.audits += 1
            opening = prompt.rsplit("<<<", 1)[-1]
            strategy = "apology" if ("抱歉" in opening or "sorry" in opening.lower()) else "direct_fix"
            return json.dumps({"strategy": strategy})
        follow, prev, reply = _FOLLOW.search(prompt), _PREV.search(prompt), _REPLY.search(prompt)
        if follow and reply and ("classify how a user reacted" in system or "判断用户对" in system):
            self.followups += 1
            label = rule_label(prev.group(1) if prev else None, reply.group(1), follow.group(1))
            return json.dumps({"label": label, "reason": "scripted"})
        return str(self.agents(messages, body))

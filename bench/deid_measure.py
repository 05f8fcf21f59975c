"""De-identification measured on real chat logs: recall per kind of value seeded into real ShareGPT turns, and
what the rules remove from real text that nobody seeded (the false removals, for a person to read).

    python bench/deid_measure.py --pool ~/.cache/uxbench/signals_dev/pool.jsonl --part test --out /tmp/deid-bench

Before and after a change to the rules, one after the other on the same part and seed (the earlier code from a
checkout of its commit; this script, its seeds and its carrier phrases are the same for both):

    PYTHONPATH=/tmp/uxbench-before/src python bench/deid_measure.py --part test --out /tmp/deid-before
    python bench/deid_measure.py --part test --out /tmp/deid-after --compare /tmp/deid-before

The pool is split in two halves by a hash of the conversation id: misses are looked at (and rules changed) on
``--part dev`` only; the figures in docs/MINING.md are from ``--part test``.

1. A deterministic subset of the pool's conversations is split in two. Into every conversation of the first
   half one value is seeded, of a kind taken in turn (Chinese and international mobiles, Chinese landlines
   in four forms, other countries' landlines, Chinese resident IDs, bank cards, e-mails, names by
   self-introduction / form of address / signature in zh and en), inside a carrier phrase, at a sentence
   boundary of a real user turn (values and carrier phrases are ours; the text around them is real). A value
   is used only when it occurs nowhere in the unseeded log, so a hit can only be the seed.
2. The whole log goes through `uxbench mine run --no-llm` (the real pipeline, in-process). A seeded value is
   caught when it occurs in no file under the output (checkpoint shards included): `scan_for_values`.
3. The second half is untouched: every span the rules find there is a removal of real text. They are
   counted by type, and a seeded random sample with its context is written to `false_removals_sample.txt`
   to be read (the count of true and false removals in docs/MINING.md comes from reading it).

Figures: recall per kind with Wilson 95% CIs (`results.json`, printed as a Markdown table).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from uxbench.metrics.proportions import wilson_ci
from uxbench.mining.deid import scan_for_values
from uxbench.mining.deid_rules import cn_id_check_char, find_pii, luhn_valid

ZH_SURNAMES = ("王李张刘陈杨黄赵周吴徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾萧田董袁潘蒋蔡余杜叶程苏魏吕丁任沈"
               "姚卢姜崔钟谭陆汪范金石廖贾夏韦傅方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")
ZH_GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红飞鹏辉宇浩然子涵欣怡梓轩雨晨思远佳琪博文俊熙嘉懿"
EN_FIRST = ("Oliver Amelia Theodore Harriet Bartholomew Rosalind Ignatius Philippa Cornelius Evangeline Leopold "
            "Marguerite Thaddeus Clementine Ambrose Wilhelmina Percival Genevieve Barnaby Ottoline Alaric Beatrix "
            "Cedric Dorothea Eustace Florence Gideon Honora Isadora Jasper Lavinia Montague Octavia Rupert Seraphina "
            "Tobias Ursula Valentine Winifred Ezekiel Imogen Lysander Perpetua Quentin Rowena Silas").split()
_EN_HEADS = "Ash Black Thorn Wind Hollow Mar Fair Kettle Pem Under Whit Grim Dar East Brack Cold Hather Lang".split()
_EN_TAILS = "wood combe bury ton field worth ley ham ridge ford hurst more stead well brook shaw".split()
EN_LAST = [h + t for h in _EN_HEADS for t in _EN_TAILS]
"""288 English-looking surnames (most occur in no real log; a seed is used only if it occurs nowhere in it)."""
_NEW_HEADS = "Quill Vex Zan Brin Tor Pell Rook Sab Wren Kest Lorn Mord Nym Ost Prax Ryl Sel Tam".split()
_NEW_TAILS = "iter ovan ussen aker ilde orrow emby ashe ique ondo".split()
NEW_LAST = [h + t for h in _NEW_HEADS for t in _NEW_TAILS if not any(last in h + t for last in EN_LAST)]
"""Surnames of the kinds added later, none holding one of `EN_LAST`: a name one kind leaves behind cannot be
the value of another kind's seed (``Dear Mr. Ashwood`` is seeded with ``Ashwood`` alone)."""
KINDS = (
    "cn_mobile", "intl_mobile", "cn_resident_id", "bank_card", "cn_landline_separated", "cn_landline_plain",
    "cn_landline_parens", "cn_landline_plus86",
    "intl_landline", "email", "name_zh_intro", "name_zh_address", "name_zh_signature", "name_en_intro",
    "name_en_address", "name_en_signature",
    # forms added with issue 28 (item 8): the residue that outside probes found on real text
    "nanp_phone", "email_apostrophe", "name_en_i_am", "name_signature_block", "address_postcode_tail",
    "address_zh_building",
)
MAIL_DOMAINS = ("gmail.com", "outlook.com", "163.com", "qq.com", "yahoo.co.uk", "proton.me")
"""Real providers' domains (example.org and the other reserved domains are placeholders the rules keep)."""
UK_AREAS = ("NW", "SW", "SE", "EC", "WC", "N", "E", "W", "M", "B", "LS", "BS", "G", "EH", "CF", "OX", "CB")


def _digits(rng: random.Random, n: int, first: str = "23456789") -> str:
    return rng.choice(first) + "".join(rng.choice("0123456789") for _ in range(n - 1))


def make_value(kind: str, rng: random.Random) -> tuple[str, str]:
    """(the phrase to insert, the value that must not survive)."""
    area = rng.choice(["10", "20", "21", "22", "23", "24", "25", "27", "28", "29", _digits(rng, 3, "3456789")])
    local = _digits(rng, 8 if len(area) == 2 else rng.choice((7, 8)))
    if kind == "cn_mobile":
        number = rng.choice("3456789") + _digits(rng, 9, "0123456789")
        value = rng.choice([f"1{number}", f"1{number[:2]} {number[2:6]} {number[6:]}",
                            f"+86 1{number[:2]}-{number[2:6]}-{number[6:]}"])
        return rng.choice(["我的手机号是{v}", "手机：{v}", "call me on {v}"]).format(v=value), value
    if kind == "intl_mobile":
        value = rng.choice([f"+44 7{_digits(rng, 3)} {_digits(rng, 6)}", f"+1 ({_digits(rng, 3)}) "
                            f"{_digits(rng, 3)}-{_digits(rng, 4)}", f"+49 15{_digits(rng, 2, '0123456789')} "
                            f"{_digits(rng, 7)}", f"+33 6 {_digits(rng, 2)} {_digits(rng, 2)} {_digits(rng, 2)} "
                            f"{_digits(rng, 2)}"])
        return rng.choice(["my mobile is {v}", "text me at {v}", "手机 {v}"]).format(v=value), value
    if kind == "cn_resident_id":
        region = rng.choice(["110101", "310104", "440305", "510107", "330106", "420102"])
        born = f"{rng.randint(1950, 2005)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
        first17 = region + born + "".join(rng.choice("0123456789") for _ in range(3))
        value = first17 + cn_id_check_char(first17)
        return rng.choice(["身份证号{v}", "我的身份证是 {v}", "ID number: {v}"]).format(v=value), value
    if kind == "bank_card":
        digits = rng.choice("456") + "".join(rng.choice("0123456789") for _ in range(14))
        digits += next(d for d in "0123456789" if luhn_valid(digits + d))
        value = rng.choice([digits, " ".join(digits[i:i + 4] for i in range(0, 16, 4))])
        return rng.choice(["卡号{v}", "银行卡 {v} 被扣款", "my card {v} was charged twice"]).format(v=value), value
    if kind == "cn_landline_separated":
        value = rng.choice([f"0{area}-{local[:4]}-{local[4:]}", f"0{area} {local[:4]} {local[4:]}", f"0{area}-{local}",
                            f"0{area} {local}"])
        return rng.choice(["座机{v}", "办公室电话：{v}", "our office line is {v}"]).format(v=value), value
    if kind == "cn_landline_plain":
        value = f"0{area}{local}"
        return rng.choice(["电话{v}", "打{v}找我"]).format(v=value), value
    if kind == "cn_landline_parens":
        value = rng.choice([f"(0{area}){local}", f"（0{area}）{local}", f"(0{area}) {local}"])
        return rng.choice(["联系电话{v}", "tel {v}"]).format(v=value), value
    if kind == "cn_landline_plus86":
        value = rng.choice([f"+86 {area} {local[:4]} {local[4:]}", f"+86-{area}-{local}", f"0086 {area} {local}"])
        return rng.choice(["电话 {v}", "phone: {v}"]).format(v=value), value
    if kind == "intl_landline":
        d = lambda n: _digits(rng, n, "123456789")  # noqa: E731
        value = rng.choice([f"020 {d(4)} {d(4)}", f"(030) {d(7)}", f"01 {d(2)} {d(2)} {d(2)} {d(2)}",
                            f"03-{d(4)}-{d(4)}", f"(02) {d(4)} {d(4)}", f"+44 20 {d(4)} {d(4)}",
                            f"({d(3)}) {d(3)}-{d(4)}", f"089/{d(7)}"])
        return rng.choice(["call the office on {v}", "Tel. {v}", "our landline: {v}"]).format(v=value), value
    if kind == "email":
        value = (f"{rng.choice(EN_FIRST).lower()}.{rng.choice(EN_LAST).lower()}{rng.randint(10, 99)}"
                 f"@{rng.choice(MAIL_DOMAINS)}")
        return rng.choice(["my email is {v}", "邮箱：{v}"]).format(v=value), value
    if kind == "nanp_phone":
        a, b, c = _digits(rng, 3), _digits(rng, 3), _digits(rng, 4, "0123456789")
        value = rng.choice([f"({a})-{b}-{c}", f"({a}) {b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}"])
        return rng.choice(["call me at {v}", "cell: {v}", "my number is {v}."]).format(v=value), value
    if kind == "email_apostrophe":
        # the value checked is what a match that stops at the apostrophe leaves: "Jasper-Ursula.O'"
        head = f"{rng.choice(EN_FIRST)}-{rng.choice(EN_FIRST)}.O'"
        address = f"{head}{rng.choice(NEW_LAST)}@{rng.choice(MAIL_DOMAINS)}"
        return rng.choice(["write to {v} please", "邮箱 {v}"]).format(v=address), head
    zh = rng.choice(ZH_SURNAMES) + rng.choice(ZH_GIVEN) + (rng.choice(ZH_GIVEN) if rng.random() < 0.5 else "")
    first, last = rng.choice(EN_FIRST), rng.choice(EN_LAST if kind in KINDS[:16] else NEW_LAST)
    if kind == "name_zh_intro":
        return rng.choice(["我叫{v}", "我的名字是{v}", "本人{v}", "你好，我是{v}。"]).format(v=zh), zh
    if kind == "name_zh_address":
        title = rng.choice(["先生", "女士", "老师", "经理"])
        return rng.choice(["{v}{t}您好", "请转告{v}{t}"]).format(v=zh, t=title), zh
    if kind == "name_zh_signature":
        return rng.choice(["\n——{v}", "\n联系人：{v}", "\n姓名：{v}"]).format(v=zh), zh
    if kind == "name_en_intro":
        return rng.choice(["My name is {f} {l}.", "my name is {f} {l}", "Call me {f} {l}."]).format(f=first, l=last), \
            f"{first} {last}"
    if kind == "name_en_address":
        title = rng.choice(["Mr.", "Ms.", "Mrs.", "Dr."])
        return rng.choice(["Dear {t} {l},", "I spoke with {t} {l} today"]).format(t=title, l=last), last
    if kind == "name_en_signature":
        return rng.choice(["\n\nBest regards,\n{f} {l}", "\n\nSincerely,\n{f} {l}", "\nName: {f} {l}"]).format(
            f=first, l=last), f"{first} {last}"
    if kind == "name_en_i_am":
        phrase = rng.choice(["Hello, I am {f} {l} and I need help.", "I am {f} {l}, a nurse.", "Hi, I'm {f} {l}."])
        return phrase.format(f=first, l=last), f"{first} {last}"
    if kind == "name_signature_block":
        phrase = rng.choice(["\nThanks again. Regards,\n{f} {l}", "\n\nKind regards,\n\n{f} {l}",
                             "\nThat is all. Regards, {f} {l}", "\n此致\n敬礼！\n{z}", "\n祝好！\n{z}", "\n{z} 敬上"])
        return phrase.format(f=first, l=last, z=zh), zh if "{z}" in phrase else f"{first} {last}"
    if kind == "address_postcode_tail":
        # A UK postcode after an address; the value checked is the district's last digit and the inward code
        # ("1 6XE" of "NW1 6XE"): what stays behind when the address is cut before the postcode ends.
        number, street, district = rng.randint(2, 98), rng.choice(NEW_LAST), rng.randint(1, 20)
        inward = (f"{rng.randint(1, 9)}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}"
                  f"{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}")
        form = rng.choice(["{n} {s} Street, London {a}{d} {i}", "{n} {s} Road, Leeds, {a}{d} {i}",
                           "{n} {s} Lane, Oxford {a}{d} {i}"])
        phrase = rng.choice(["Please send it to ", "Our office: ", "I moved to "]) + form
        return phrase.format(n=number, s=street, a=rng.choice(UK_AREAS), d=district, i=inward), \
            f"{str(district)[-1]} {inward}"
    if kind == "address_zh_building":
        building = rng.choice(["SOHO现代城", "万达广场", "国贸中心", "阳光新城", "IFC国际金融中心"])
        unit = rng.choice(["号楼", "栋", "座"])
        value = f"{building}{rng.randint(1, 12)}{unit}{rng.randint(3, 30)}{rng.randint(1, 9):02d}室"
        road = rng.choice(["建国路", "人民路", "中山路", "解放大道"])
        return f"地址：{rng.choice(['北京市朝阳区', '上海市浦东新区', ''])}{road}{rng.randint(1, 300)}号{value}", value
    raise ValueError(kind)


def _insert(text: str, phrase: str, rng: random.Random) -> str:
    cuts = [m.end() for m in re.finditer(r"[.!?。！？\n]\s*", text)] + [len(text)]
    at = rng.choice(cuts)
    if phrase.startswith("\n"):
        at = len(text)  # a signature ends the message
    joiner = "" if at == 0 or text[at - 1:at].isspace() else " "
    return f"{text[:at]}{joiner}{phrase} {text[at:]}".rstrip() if at < len(text) else f"{text}{joiner}{phrase}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", type=Path, default=Path(os.environ.get(
        "UXBENCH_SIGNALS_POOL", "~/.cache/uxbench/signals_dev/pool.jsonl")).expanduser())
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--conversations", type=int, default=4000, help="conversations taken from the part")
    ap.add_argument("--part", choices=("dev", "test"), default="test",
                    help="half of the pool (by a hash of the conversation id): look at misses on dev, report test")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=int, default=120, help="false removals written out to be read")
    ap.add_argument("--compare", type=Path, metavar="BEFORE_OUT",
                    help="the --out of an earlier run (e.g. of the code before a change, same --part and --seed): "
                         "recall per kind side by side, and the removals that went or came, with samples to read")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    conversations: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with args.pool.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            conversations[row["conversation_id"]].append(row)
    def part(cid: str) -> str:
        return "dev" if hashlib.sha256(f"part:{cid}".encode()).digest()[0] < 128 else "test"

    ids = sorted((c for c in conversations if part(c) == args.part),
                 key=lambda c: hashlib.sha256(f"{args.seed}:{c}".encode()).hexdigest())
    ids = [c for c in ids if any(t["role"] == "user" and (t["content"] or "").strip() for t in conversations[c])]
    ids = ids[:args.conversations]
    seeded_ids, untouched_ids = ids[: len(ids) // 2], ids[len(ids) // 2:]
    whole = "\n".join(t["content"] or "" for c in ids for t in conversations[c])
    # What a seeded value must not already be in the log (a hit must be the seed): Chinese 2- and 3-grams,
    # capitalised words, and the digits are random enough (a clash is also caught by the check after mining).
    han = {run[i:i + k] for run in re.findall(r"[\u4e00-\u9fff]+", whole) for k in (2, 3)
           for i in range(len(run) - k + 1)}
    words = set(re.findall(r"[A-Z][a-z]+", whole))
    used: set[str] = set()

    def fresh(value: str) -> bool:
        if value in used or any(value in u or u in value for u in used if len(u) <= 4 or len(value) <= 4):
            return False
        if re.fullmatch(r"[\u4e00-\u9fff]+", value):
            return value not in han
        return not any(w in words for w in value.split() if w[:1].isupper())

    seeds: list[dict[str, Any]] = []
    for n, cid in enumerate(seeded_ids):
        kind = KINDS[n % len(KINDS)]
        for _ in range(10_000):
            phrase, value = make_value(kind, rng)
            if fresh(value):
                used.add(value)
                break
        else:
            sys.exit(f"no fresh value of kind {kind} left after {n} seeds: take fewer --conversations")
        turns = [t for t in conversations[cid] if t["role"] == "user" and (t["content"] or "").strip()]
        turn = rng.choice(turns)
        turn["content"] = _insert(turn["content"], phrase, rng)
        seeds.append({"kind": kind, "value": value, "conversation_id": cid, "turn_index": turn["turn_index"]})
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "seeded_log.jsonl"
    with log.open("w", encoding="utf-8") as fh:
        for cid in ids:
            for t in sorted(conversations[cid], key=lambda t: t["turn_index"]):
                fh.write(json.dumps(t, ensure_ascii=False) + "\n")
    from uxbench.mining.pipeline import MineConfig, run_pipeline

    mined = args.out / "mined"
    run_pipeline(MineConfig(inputs=(str(log),), out=str(mined), llm=False, workers=1, fresh=True))
    clash = {i for i, s in enumerate(seeds) if whole.count(s["value"]) > 0}  # in the log before seeding
    seeds = [s for i, s in enumerate(seeds) if i not in clash]
    hits = scan_for_values([mined], [s["value"] for s in seeds])
    leaked = {h.value_index for h in hits}
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for i, s in enumerate(seeds):
        per_kind[s["kind"]][1] += 1
        per_kind[s["kind"]][0] += int(i not in leaked)
    missed = [seeds[i] for i in sorted(leaked)]
    removals: list[dict[str, Any]] = []
    turns_read = 0
    for cid in untouched_ids:
        for t in conversations[cid]:
            text = t["content"] or ""
            turns_read += 1
            for span in find_pii(text):
                removals.append({"conversation_id": cid, "turn_index": t["turn_index"], "start": span.start,
                                 "type": span.type, "text": text[span.start:span.end],
                                 "context": text[max(0, span.start - 60):span.end + 60].replace("\n", " ")})
    by_type: dict[str, int] = defaultdict(int)
    for r in removals:
        by_type[r["type"]] += 1
    sample = random.Random(args.seed + 1).sample(removals, min(args.sample, len(removals)))
    with (args.out / "false_removals_sample.txt").open("w", encoding="utf-8") as fh:
        for i, r in enumerate(sample, 1):
            fh.write(f"{i:3d} {r['type']:7s} {r['text']!r}\n    ...{r['context']}...\n")
    (args.out / "removals.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in removals),
                                             encoding="utf-8")
    (args.out / "missed.jsonl").write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in missed),
                                           encoding="utf-8")
    table = {k: {"caught": c, "n": n, "recall": c / n, "ci95": list(wilson_ci(c, n))}
             for k, (c, n) in per_kind.items()}
    result = {"part": args.part, "seed": args.seed, "conversations": len(ids), "seeded": len(seeds),
              "untouched_conversations": len(untouched_ids),
              "untouched_turns": turns_read, "recall": table, "removals_in_untouched": dict(by_type),
              "removals_total": len(removals), "sample_written": len(sample)}
    (args.out / "results.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"part {args.part}: {len(ids)} real conversations ({len(seeds)} seeded, {len(untouched_ids)} untouched, "
          f"{turns_read} untouched turns)")
    print("| kind | caught / seeded | recall [95% CI] |\n|---|---:|---|")
    for k in KINDS:
        row = table.get(k)
        if row:
            lo, hi = row["ci95"]
            print(f"| {k} | {row['caught']} / {row['n']} | {row['recall']:.0%} [{lo:.0%}, {hi:.0%}] |")
    print(f"removals in untouched text: {len(removals)} ({dict(by_type)}); sample of {len(sample)} in "
          f"{args.out / 'false_removals_sample.txt'}")
    if args.compare:
        compare(args.compare, args.out, table, removals, args.sample, args.seed)
    sys.exit(0)


def _key(removal: dict[str, Any]) -> tuple[Any, ...]:
    return removal["conversation_id"], removal["turn_index"], removal["start"], removal["text"]


def compare(before_dir: Path, out: Path, table: dict[str, dict[str, Any]], removals: list[dict[str, Any]],
            sample: int, seed: int) -> None:
    """Recall per kind beside the earlier run's, and the removals that went (`gone_sample.txt`) or came
    (`new_sample.txt`) on the same untouched text, each a seeded sample to read."""
    before = json.loads((before_dir / "results.json").read_text(encoding="utf-8"))
    print(f"\nbefore ({before_dir}) and now, same part and seed:\n| kind | before | now |\n|---|---:|---:|")
    for kind in KINDS:
        was, now = before["recall"].get(kind), table.get(kind)
        cell = (lambda r: f"{r['caught']} / {r['n']}" if r else "-")  # noqa: E731
        print(f"| {kind} | {cell(was)} | {cell(now)} |")
    earlier = [json.loads(line) for line in (before_dir / "removals.jsonl").open(encoding="utf-8")]
    then_keys, now_keys = {_key(r) for r in earlier}, {_key(r) for r in removals}
    gone = [r for r in earlier if _key(r) not in now_keys]
    new = [r for r in removals if _key(r) not in then_keys]
    for name, rows in (("gone", gone), ("new", new)):
        counts: dict[str, int] = defaultdict(int)
        for r in rows:
            counts[r["type"]] += 1
        picked = random.Random(seed + 2).sample(rows, min(sample, len(rows)))
        with (out / f"{name}_sample.txt").open("w", encoding="utf-8") as fh:
            for i, r in enumerate(picked, 1):
                fh.write(f"{i:3d} {r['type']:7s} {r['text']!r}\n    ...{r['context']}...\n")
        print(f"removals {name}: {len(rows)} ({dict(counts)}); sample of {len(picked)} in {out / f'{name}_sample.txt'}")
    print(f"removals in untouched text: {len(earlier)} before, {len(removals)} now")


if __name__ == "__main__":
    main()

"""De-identification on forms that real text holds (issue 28, item 8): what used to stay behind is removed
whole, in English and Chinese, and examples, placeholders and public addresses that identify nobody are kept.
Each case is checked by the rules alone and through a whole `mine run`, whose files are scanned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uxbench.mining.deid import SALT_ENV, redact_text, scan_for_values
from uxbench.mining.deid_rules import find_pii
from uxbench.mining.pipeline import MineConfig, run_pipeline

RESIDUE = [  # (text, the value that must go whole, what must stay)
    # a North American number with a dash after the area code
    ("call me at (516)-974-4700 after six", "974-4700", "after six"),
    ("座机(0755)-2345-6789，工作日", "2345-6789", "工作日"),
    # a self-introduction with "I am" + first and last name, or one name after a greeting
    ("Hello everyone, I am Daisy Jones-Brown and I run the shop.", "Daisy Jones-Brown", "run the shop"),
    ("Hi, I'm Rosalind. Can you check my essay?", "Rosalind", "Can you check"),
    ("大家好，我是欧阳娜娜。想问一下", "欧阳娜娜", "想问一下"),
    # a name in a signature block: after a sentence, after a blank line, on the same line
    ("Thanks for the quick reply. Regards,\nCerys Weetch", "Cerys Weetch", "Regards"),
    ("Let me know.\n\nKind regards,\n\nCerys Weetch", "Cerys Weetch", "Kind regards"),
    ("That is all for now. Regards, Cerys Weetch", "Cerys Weetch", "Regards,"),
    ("Dear Mr. O'Brien, the McDonald account is closed.", "O'Brien", "Dear Mr."),
    ("此致\n敬礼！\n王小明", "王小明", "敬礼"),
    ("有问题随时联系。\n祝好！\n\n陈晓明", "陈晓明", "祝好"),
    ("以上，请查收。\n李建国 敬上", "李建国", "敬上"),
    # the tail of an address: UK, Australian and Canadian postcodes, a state run on
    ("Send it to 10 Baker Street, London NW1 6XE please.", "6XE", "please"),
    ("Flat 2, 221B Baker Street, London, NW1 6XE", "NW1 6XE", "Flat 2"),
    ("The site is 1 Parramatta Road, Sydney NSW 2000.", "NSW 2000", "The site is"),
    ("Office: 350 Bay Street, Toronto, ON M5H 2S6", "M5H 2S6", "Office"),
    ("Ship to 12 Hollis Street, Boston MA 02115, thanks", "MA 02115", "thanks"),
    # Chinese building, unit and room numbers after an address, a building name in Latin letters included
    ("地址：北京市朝阳区建国路88号SOHO现代城5号楼1203室，谢谢", "SOHO现代城5号楼1203室", "谢谢"),
    ("送到SOHO现代城5号楼1203室就行", "5号楼1203室", "就行"),
    ("在万达广场B座1502室办公", "B座1502室", "办公"),
    # an apostrophe in the local part of an e-mail address
    ("write to Alice.O'Brien@gmail.com today", "O'Brien@gmail.com", "today"),
    ("邮箱 d'angelo.li@163.com 收", "angelo.li@163.com", "收"),
]

KEPT = [  # placeholders, examples and public services: no one is identified, the text stays as written
    "Replace your-email@example.com with your address.",
    "smtp.login('your_email@gmail.com', password)",
    "邮箱请填 your_email@qq.com 这种格式",
    "from: 'email@gmail.com', to: 'username@yourserver.com', cc: 'user@remote.host'",
    "requests.get('https://translation.googleapis.com/language/translate/v2?key=YOUR_API_KEY')",
    "curl 'https://api.example.net/v1/items?api_key=<YOUR_TOKEN>&q=1'",
    "fetch(`https://api.weatherapi.com/v1/forecast.json?key=${API_KEY}`)",
    "git clone https://username:password@github.com/org/repo.git",
    "Example: 123 Main St, Anytown, USA 12345",
    "John lives at 456 Elm Street.",
    "Set the DNS server to 8.8.8.8 or 1.1.1.1.",
    "把DNS改成114.114.114.114或者223.5.5.5",
    "Call 555-555-5555 or (555) 123-4567, or 123-456-7890.",
    "My name is John Doe.",
    "姓名：张三\n电话：随便填",
    "Character Details:\nName: Thoric Lightbringer\nRace: Half-Elf\nClass: Paladin",
    "Here is a persona for the brand:\n\nName: Sarah Lin\nAge: 35\nOccupation: Marketing Manager",
    "* Name: EmberBlaze\n* Type: Fire/Fighting\n* Description: EmberBlaze is a small Pokémon.",
    "Plugin Name: Page Update Alerts\nDescription: Sends an alert",
    "* First Name: Enter the first name of the lead.",
    "角色设定：\n姓名：林夜\n性格：冷静，话少",
    "小说人物卡\n姓名：苏清寒\n种族：人族\n技能：御剑",
    "I am Chinese American and I'm In Love with this song.",
    "Sales 03-28 2536.48 and 09/27/2023-09/29 were booked.",
]

STILL_REMOVED = [  # next to each kept form, the real one is still removed
    ("Name: Percival Thistlewood\nAge: 40\nDiagnosis: flu", "Percival Thistlewood"),
    ("I wrote a story about dragons.\nName: Percival Thistlewood", "Percival Thistlewood"),
    ("姓名：苏明远\n性别：男\n电话：随后给", "苏明远"),
    ("https://api.vendor.io/v1/items?api_key=sk9f8a7d6e5c4b3", "sk9f8a7d6e5c4b3"),
    ("git clone https://bob:hunter2@github.com/org/repo.git", "hunter2"),
    ("our resolver is 81.2.69.160", "81.2.69.160"),
    ("Call 415-555-0199 tonight", "415-555-0199"),
    ("she wrote from jane.smith@example.co.uk", "jane.smith@example.co.uk"),
    ("write to me@alicewong.com or mail@janedoe.de", "me@alicewong.com"),
    ("write to me@alicewong.com or mail@janedoe.de", "mail@janedoe.de"),
    ("我住在127 Hollis Street, Springfield, IL 62704", "127 Hollis Street"),
    ("Office phone 03-3456-7890", "03-3456-7890"),
]


@pytest.mark.parametrize(("text", "value", "kept"), RESIDUE)
def test_the_whole_value_goes_and_the_cue_stays(text: str, value: str, kept: str) -> None:
    cleaned = redact_text(text)
    assert value not in cleaned and kept in cleaned, cleaned


@pytest.mark.parametrize("text", KEPT)
def test_placeholders_and_public_values_are_kept(text: str) -> None:
    assert find_pii(text) == [], [(s.type, text[s.start:s.end]) for s in find_pii(text)]


@pytest.mark.parametrize(("text", "value"), STILL_REMOVED)
def test_the_real_value_next_to_a_kept_form_is_removed(text: str, value: str) -> None:
    assert value not in redact_text(text)


def test_a_mining_run_removes_the_residue_and_keeps_the_placeholders(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "residue-and-placeholders-salt")
    texts = [text for text, _, _ in RESIDUE] + KEPT + [text for text, _ in STILL_REMOVED]
    rows = []
    for i, text in enumerate(texts):
        rows += [{"conversation_id": f"c{i}", "turn_index": 0, "role": "user", "content": text},
                 {"conversation_id": f"c{i}", "turn_index": 1, "role": "assistant", "content": "Noted, thank you."},
                 {"conversation_id": f"c{i}", "turn_index": 2, "role": "user", "content": f"again: {text}"}]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    run_pipeline(MineConfig(inputs=(str(log),), out=str(out), llm=False, workers=1))
    removed = [value for _, value, _ in RESIDUE] + [value for _, value in STILL_REMOVED]
    assert scan_for_values([out], removed) == []
    kept = ["your-email@example.com", "YOUR_API_KEY", "123 Main St, Anytown", "8.8.8.8", "114.114.114.114",
            "Thoric Lightbringer", "林夜\\n性格", "555-555-5555"]
    found = {hit.value_index for hit in scan_for_values([out / "work"], kept)}
    assert found == set(range(len(kept)))

"""The model card of a trained judge: `model_card.json` (every figure) and `MODEL_CARD.md` (for people)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CARD_JSON = "model_card.json"
CARD_MD = "MODEL_CARD.md"


def _pct(entry: Any) -> str:
    if not isinstance(entry, dict) or entry.get("value") is None:
        return "n/a"
    text = f"{100 * entry['value']:.1f}%"
    if entry.get("ci_low") is not None and entry.get("ci_high") is not None:
        text += f" (95% CI {100 * entry['ci_low']:.1f}-{100 * entry['ci_high']:.1f})"
    return text


def _num(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def render_card(card: dict[str, Any]) -> str:
    data, split, test = card["data"], card["split"], card["test"]
    lines = [
        f"# Judge model card ({card['method']})",
        "",
        "## Data",
        f"- Files: {', '.join(data['files'])}",
        f"- License (as stated by the user): {data.get('license') or 'not stated'}",
        f"- Rows by label source: {json.dumps(data.get('rows_by_label_source', {}), ensure_ascii=False)}",
        f"- Left out while reading: {json.dumps(data.get('left_out', {}), ensure_ascii=False)}",
        f"- Near-duplicates of {', '.join(data['excluded_sets']) or 'no named test set'} left out: "
        f"{data['near_duplicates_left_out']}",
        "",
        "## Split",
        f"- {split['kind']}: train {split['train']} in {split['train_conversations']} conversations, "
        f"test {split['test']} in {split['test_conversations']} conversations",
        f"- Settings: {json.dumps({k: v for k, v in split.items() if k not in ('train', 'test')}, ensure_ascii=False)}",
        f"- Class weights: {card.get('class_weights') or 'none'}",
        "",
        f"## Held-out figures (n = {test['n']}, verdict = p(good) >= 0.5)",
        f"- Avg-Acc: {_pct(test['avg_acc'])} (majority baseline 50.0%)",
        f"- Good-Acc: {_pct(test['good_acc'])}",
        f"- Bad-Acc: {_pct(test['bad_acc'])}",
        f"- Accuracy: {_pct(test['accuracy'])} (majority baseline {100 * test['majority_baseline']['accuracy']:.1f}%)",
        f"- ECE: {_num(test['ece'])}, Brier: {_num(test['brier'])}",
        "",
        f"## Heaviest features (encoder {card['encoder']})",
    ]
    heavy = card["heaviest_features"]
    for entry in heavy["ux_features"][:8]:
        lines.append(f"- {entry['name']}: {entry['weight']:+.3f} (per standard deviation)")
    lines.append(f"- Text blocks (norm of their weights): {json.dumps(heavy['text_block_weight_norms'])}")
    lines.append("- Largest single weights: " + ", ".join(
        f"{e['name']} {e['weight']:+.3f}" for e in heavy["top_weights"][:6]))
    lines += ["", "Figures: `model_card.json`. Recompute them with "
              "`uxbench judge eval --judge lite:DIR --data DIR/test.jsonl`.", ""]
    return "\n".join(lines)


def write_card(out: Path, card: dict[str, Any]) -> None:
    (out / CARD_JSON).write_text(json.dumps(card, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / CARD_MD).write_text(render_card(card), encoding="utf-8")


def read_card(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / CARD_JSON).read_text(encoding="utf-8"))
    return loaded

"""The model card of a trained judge: `model_card.json` (every figure) and `MODEL_CARD.md` (for people)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uxbench.data import user_files
from uxbench.errors import DataError

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


def _precision(entry: dict[str, Any]) -> str:
    if entry.get("precision") is None:
        return "n/a"
    return (f"{entry['precision']:.2f} [{entry['ci_low']:.2f}, {entry['ci_high']:.2f}], "
            f"{entry['agree']} of {entry['fired']}")


def label_lines(labels: dict[str, Any] | None) -> list[str]:
    """Where the labels came from, each source's count and its signals' measured precision."""
    if not labels:
        return []
    lines = ["", "## Where the labels came from",
             f"- Precision floor (--min-label-precision): {labels['floor']:g}; precision = share of the labels a "
             f"signal made that a person reading the user's next message agrees with, measured on "
             f"{labels.get('measured_on') or 'the development set'} (held-out part; 95% Wilson CI, n)"]
    base = (labels.get("base_rate_good") or {}).get("held-out")
    if base and base.get("precision") is not None:
        lines.append(f"- For comparison, a reply chosen at random there is good {_precision(base)}: a 'good' "
                     "signal adds only what its precision has above that")
    for source in labels["sources"]:
        head = f"- `{source['source']}` -> {source['label']}: {source['rows']} rows"
        if source["left_out_by_floor"]:
            head += f", {source['left_out_by_floor']} left out by the floor"
        parts = []
        for sig in source["signals"]:
            if sig.get("held_out"):
                parts.append(f"{sig['signal']} {_precision(sig['held_out'])}")
            else:
                parts.append(f"{sig['signal']} not measured ({sig['why_not_measured']})")
        lines.append(head + (f"; {'; '.join(parts)}" if parts else ""))
    if labels.get("from_rules"):
        lines.append(f"- {labels['from_rules']} rows are labelled by rules, not by users: {labels['note']}.")
    return lines


def baseline_lines(baseline: dict[str, Any] | None) -> list[str]:
    if not baseline:
        return []
    test, comp = baseline["test"], baseline["comparison"]
    p = comp["paired"]
    diff = "n/a" if p.get("diff") is None else \
        f"{100 * p['diff']:+.1f} points (95% CI {100 * p['ci_low']:+.1f} to {100 * p['ci_high']:+.1f})"
    return ["", f"## Against a plain baseline ({baseline['name']}, same training rows, same test rows)",
            f"- Baseline Avg-Acc: {_pct(test['avg_acc'])}, Good-Acc {_pct(test['good_acc'])}, "
            f"Bad-Acc {_pct(test['bad_acc'])}, ECE {_num(test['ece'])}",
            f"- Judge minus baseline, Avg-Acc: {diff}; McNemar p = {_p(comp['mcnemar'].get('p_value'))}",
            f"- **The judge {comp['verdict']} the baseline.**"]


def _p(p: Any) -> str:
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def render_card(card: dict[str, Any]) -> str:
    data, split, test = card["data"], card["split"], card["test"]
    prior = card.get("prior") or {}
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
        f"- Prior of the probabilities (--prior {prior.get('setting', 'train')}): "
        f"{100 * float(prior.get('share_good', 0.5)):.1f}% good; test side {100 * test.get('share_good', 0):.1f}% good",
        *label_lines(data.get("labels")),
        "",
        f"## Held-out figures (n = {test['n']}, verdict = p(good) >= 0.5)",
        f"- Avg-Acc: {_pct(test['avg_acc'])} (majority baseline 50.0%)",
        f"- Good-Acc: {_pct(test['good_acc'])}",
        f"- Bad-Acc: {_pct(test['bad_acc'])}",
        f"- Accuracy: {_pct(test['accuracy'])} (majority baseline {100 * test['majority_baseline']['accuracy']:.1f}%)",
        f"- ECE: {_num(test['ece'])}, Brier: {_num(test['brier'])}",
        *_balanced_lines(card.get("test_at_balanced_prior")),
        *baseline_lines(card.get("baseline")),
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


def _balanced_lines(figures: dict[str, Any] | None) -> list[str]:
    if not figures:
        return []
    return [f"- At a balanced prior (verdict = the odds shifted to 50% good): Avg-Acc {_pct(figures['avg_acc'])}, "
            f"Good-Acc {_pct(figures['good_acc'])}, Bad-Acc {_pct(figures['bad_acc'])}"]


def write_card(out: Path, card: dict[str, Any]) -> None:
    (out / CARD_JSON).write_text(json.dumps(card, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / CARD_MD).write_text(render_card(card), encoding="utf-8")


def read_card(out: Path) -> dict[str, Any]:
    loaded = user_files.parse_json(user_files.read_bytes(out / CARD_JSON), str(out / CARD_JSON))
    if not isinstance(loaded, dict):
        raise DataError("should hold a JSON object", source=str(out / CARD_JSON))
    return loaded

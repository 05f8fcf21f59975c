"""The output of `uxbench mine eval-signals` as a plain-text or Markdown report (JSON is the result itself).

Sections: what was measured (method, split, score source, the prompt hash for a model), per-signal figures
with counts and Wilson 95% intervals, `dissatisfied` per stratum, the operating point for the target
precision (chosen on `dev`), the confusion between follow-up labels, then every false positive and miss of
`dissatisfied` with its evidence, and the items without a matching reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from uxbench.mining.signals.real_eval import LABELS, RULE_LABELS

SIGNAL_TITLES = {
    "dissatisfied": "dissatisfied (any)", "complaint": "complaint", "dismiss": "dismiss", "repeat": "repeat",
    "rephrase": "rephrase", "repeat_or_rephrase": "repeat or rephrase", "topic_change": "topic change",
    "continuation": "continuation (neutral)", "praise": "praise (positive)",
}
SIGNAL_HEADER = ["signal", "n gold", "n fired", "TP", "FP", "FN", "precision [95% CI]", "recall [95% CI]", "F1"]


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _with_ci(v: float | None, ci: Sequence[float] | None) -> str:
    if v is None:
        return "-"
    return f"{v:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{v:.2f}"


def signal_cells(name: str, m: dict[str, Any]) -> list[str]:
    return [SIGNAL_TITLES.get(name, name), str(m["n_gold"]), str(m["n_pred"]), str(m["tp"]), str(m["fp"]),
            str(m["fn"]), _with_ci(m["precision"], m["precision_ci"]), _with_ci(m["recall"], m["recall_ci"]),
            _num(m["f1"]) if m["precision"] is not None and m["recall"] is not None else "-"]


def _tables(result: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    signals = [signal_cells(name, m) for name, m in result["signals"].items()]
    strata = [[s, str(part["n"]), *signal_cells("dissatisfied", part["signals"]["dissatisfied"])[1:]]
              for s, part in result["by_stratum"].items()]
    predicted = [*RULE_LABELS, "missing"]
    confusion = [[gold, *(str(result["confusion"].get(gold, {}).get(p, 0)) for p in predicted)]
                 for gold in LABELS if gold in result["confusion"]]
    return [
        (f"Signals on {result['n']} labelled follow-ups ({result['split']})", SIGNAL_HEADER, signals),
        ("dissatisfied per stratum", ["stratum", "n", *SIGNAL_HEADER[1:]], strata),
        ("Follow-up labels: gold (rows) x predicted (columns)", ["gold", *predicted], confusion),
    ]


def _intro(result: dict[str, Any]) -> list[str]:
    split = result["split"]
    lines = [f"method: {result['method']}" + (f" {result['model']}" if result.get("model") else ""),
             f"labels: {result['labels']}; log: {result['log']}",
             f"split: {split} ({result['n']} items, {result['n_dissatisfied']} dissatisfied, "
             f"{result['n_missing']} without a matching reply, counted as not flagged); held-out when "
             f"sha256(conversation id) % 100 < {result['split_rule']['held_out_below']}, else dev"]
    if result.get("note"):
        lines.append(f"note: {result['note']}")
    if result.get("prompt_sha256"):
        lines.append(f"prompt: {', '.join(result.get('prompt_files', []))} sha256 {result['prompt_sha256']}")
    if result.get("failed"):
        lines.append(f"model calls that failed (counted as missing): {result['failed']}")
    lines.append(f"dissatisfied score: {result['score_source']}"
                 + (f"; flagged at score >= {result['threshold']}" if result.get("threshold") is not None else ""))
    agree = result["label_agreement"]
    lines.append(f"follow-up label agrees with the gold label: {agree['agree']} of {agree['n']}")
    op = result["operating_point"]
    if op["threshold"] is None:
        lines.append(f"target precision {op['target_precision']}: no threshold reaches it on the dev part")
    else:
        dev, rep = op["on_dev"], op["reported"]
        lines.append(f"target precision {op['target_precision']}: threshold {op['threshold']:.3f} chosen on dev "
                     f"(P {_num(dev['precision'])}, R {_num(dev['recall'])}); on {op['reported_on']}: "
                     f"P {_with_ci(rep['precision'], rep['precision_ci'])}, "
                     f"R {_with_ci(rep['recall'], rep['recall_ci'])}, n {rep['n']}"
                     + (" (includes the part it was tuned on)" if op["tuned_on_reported"] else ""))
    return lines


def _listing(title: str, entries: Sequence[dict[str, Any]], md: bool) -> list[str]:
    lines = [f"## {title} ({len(entries)})" if md else f"{title} ({len(entries)})"]
    for e in entries:
        head = (f"{e['conversation_id']} turn {e['u2_turn_index']} [{e['stratum']}] gold {e['label']}"
                + (f" (confidence {e['confidence']})" if e.get("confidence") else "")
                + f", predicted {e['predicted_label'] or 'nothing'}, score {e['score']:.2f}"
                + (f": {e['why']}" if e.get("why") else ""))
        lines.append(f"- {head}" if md else f"* {head}")
        pad = "  " if md else "    "
        if e.get("missing"):
            lines.append(f"{pad}missing: {e['missing']}")
        if e.get("prev_user") is not None:
            lines.append(f"{pad}previous: {_one_line(e['prev_user'])}")
        if e.get("followup") is not None:
            lines.append(f"{pad}follow-up: {_one_line(e['followup'])}")
        for k, v in e.get("evidence", {}).items():
            lines.append(f"{pad}{k}: {_one_line(v)}")
    return lines


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return f"`{flat}`" if flat else "(empty)"


def render_text(result: dict[str, Any], errors: bool = True) -> str:
    out = [*_intro(result), ""]
    for title, header, rows in _tables(result):
        widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
        out.append(title)
        for row in [header, *rows]:
            out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                                 enumerate(zip(row, widths, strict=True))).rstrip())
        out.append("")
    if errors:
        out += [*_listing("False positives of dissatisfied", result["false_positives"], md=False), ""]
        out += _listing("Misses of dissatisfied", result["misses"], md=False)
    return "\n".join(out).rstrip() + "\n"


def render_markdown(result: dict[str, Any], errors: bool = True) -> str:
    out = [f"- {line}" for line in _intro(result)] + [""]
    for title, header, rows in _tables(result):
        out += [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(row) + " |" for row in rows]
        out.append("")
    if errors:
        out += [*_listing("False positives of dissatisfied", result["false_positives"], md=True), ""]
        out += _listing("Misses of dissatisfied", result["misses"], md=True)
    return "\n".join(out).rstrip() + "\n"

"""A study's figures: accuracy per annotator against the labels (Wilson CI), Fleiss' kappa between annotators
(items judged by all of them), and agreement of the human majority with each judge (raw agreement with its
Wilson CI and Cohen's kappa with its bootstrap CI); items whose annotators tie have no majority and are left
out of those, counted; the export of every judgment with the item's label and verdicts."""

from __future__ import annotations

from collections import Counter
from typing import Any

from uxbench.human.anchored import anchored_lines, human_anchored
from uxbench.human.study import Study
from uxbench.metrics.agreement import cohen_kappa, fleiss_kappa
from uxbench.metrics.proportions import proportion


def _majority(choices: list[str]) -> str | None:
    """The most frequent choice; None on a tie."""
    if not choices:
        return None
    top = Counter(choices).most_common()
    return top[0][0] if len(top) == 1 or top[0][1] > top[1][1] else None


def study_results(study: Study, *, n_boot: int = 2000, seed: int = 0, anchor_by: str = "majority") -> dict[str, Any]:
    meta = study.meta()
    items = study.items()
    annotators = study.annotators()
    judged = study.judgments()
    per_annotator = []
    for a in annotators:
        mine = [(i, judged[(a.token, i["item_id"])]) for i in items if (a.token, i["item_id"]) in judged]
        labelled = [(i, c) for i, c in mine if i["label"] is not None]
        per_annotator.append({"annotator": a.name, "n_judged": len(mine), "n_items": len(items),
                              "accuracy": proportion(sum(i["label"] == c for i, c in labelled), len(labelled))
                              if labelled else None})
    rows = [[judged.get((a.token, i["item_id"])) for a in annotators] for i in items]
    fleiss = fleiss_kappa(rows) if len(annotators) >= 2 else None
    majority = [_majority([c for c in row if c is not None]) for row in rows]
    judged_rows = [row for row in rows if any(c is not None for c in row)]
    n_ties = sum(m is None for m, row in zip(majority, rows, strict=True) if any(c is not None for c in row))
    judge_names = sorted({name for i in items for name in (i["hidden"].get("judges") or {})})
    judges = {}
    for name in judge_names:
        theirs = [(i["hidden"].get("judges") or {}).get(name) for i in items]
        judges[name] = cohen_kappa(majority, theirs, n_boot=n_boot, seed=seed)
        truth = [(v, i["label"]) for v, i in zip(theirs, items, strict=True) if v is not None and i["label"]]
        judges[name]["accuracy_vs_labels"] = proportion(sum(v == lab for v, lab in truth), len(truth)) \
            if truth else None
    majority_labelled = [(m, i["label"]) for m, i in zip(majority, items, strict=True) if m and i["label"]]
    picks = [i["hidden"]["models"][m] for m, i in zip(majority, items, strict=True) if m and i["hidden"].get("models")]
    models = sorted({name for i in items for name in (i["hidden"].get("models") or {}).values()})
    return {"kind": "uxbench.human_study", "mode": meta.get("mode"), "source": meta.get("source"),
            "task": meta.get("task"), "n_items": len(items), "n_annotators": len(annotators),
            "annotators": per_annotator, "fleiss": fleiss,
            "majority": {"n_judged": len(judged_rows), "n_ties": n_ties, "n_majority": len(judged_rows) - n_ties},
            "majority_accuracy": proportion(sum(m == lab for m, lab in majority_labelled), len(majority_labelled))
            if majority_labelled else None,
            "human_judge": judges,
            "preference": {name: proportion(picks.count(name), len(picks)) for name in models} if picks else None,
            "human_anchored": human_anchored(study, annotators=anchor_by)}


def export_rows(study: Study) -> list[dict[str, Any]]:
    """One row per judgment: annotator name (never the token), item, choice, the label and the judges'
    verdicts."""
    items = {i["item_id"]: i for i in study.items()}
    names = {a.token: a.name for a in study.annotators()}
    out = []
    for (token, item_id), choice in sorted(study.judgments().items(), key=lambda kv: (names[kv[0][0]], kv[0][1])):
        item = items[item_id]
        out.append({"annotator": names[token], "item_id": item_id, "choice": choice, "label": item["label"],
                    "correct": None if item["label"] is None else choice == item["label"], **item["hidden"]})
    return out


def _kappa(r: dict[str, Any]) -> str:
    """'0.412 [0.210, 0.598] (n=40, percentile bootstrap)' for a `cohen_kappa` result."""
    k = r["kappa"]
    if k.get("value") is None:
        return f"n/a (n={r['n']})"
    ci = f" [{k['ci_low']:.3f}, {k['ci_high']:.3f}]" if k.get("ci_low") is not None else ""
    return f"{k['value']:.3f}{ci} (n={r['n']}, 95% CI, {k.get('method') or 'bootstrap'})"


def results_text(results: dict[str, Any]) -> str:
    """The results as plain text for the terminal."""
    def pct(cell: dict[str, Any] | None) -> str:
        if not cell or cell.get("value") is None:
            return "n/a"
        return f"{100 * cell['value']:.1f}% [{100 * cell['ci_low']:.1f}, {100 * cell['ci_high']:.1f}] (n={cell['n']})"

    lines = [f"Study of {results['n_items']} items ({results['mode']}), {results['n_annotators']} annotators, "
             f"from {results['source']}", "", "Accuracy against the labels, per annotator:"]
    for a in results["annotators"]:
        lines.append(f"  {a['annotator']}: {pct(a['accuracy'])}  judged {a['n_judged']}/{a['n_items']}")
    fleiss = results["fleiss"]
    if fleiss:
        kappa = "n/a" if fleiss["kappa"] is None else f"{fleiss['kappa']:.3f}"
        lines.append(f"Fleiss' kappa: {kappa} over {fleiss['n_items']} items judged by all "
                     f"{fleiss['n_raters']} annotators")
    counts = results.get("majority") or {}
    if counts:
        lines.append(f"Human majority: {counts['n_majority']} of {counts['n_judged']} judged items; "
                     f"{counts['n_ties']} tied (no majority) and left out of the figures below")
    lines.append(f"Human majority against the labels: {pct(results['majority_accuracy'])}")
    if results.get("preference"):
        lines.append("Human majority's preference (pairwise runs):")
        for name, cell in results["preference"].items():
            lines.append(f"  {name}: {pct(cell)}")
    if results["human_judge"]:
        lines.append("Human majority vs each judge:")
        for name, r in results["human_judge"].items():
            lines.append(f"  {name}: agreement {pct(r['agreement'])}, Cohen's kappa {_kappa(r)}; "
                         f"judge vs labels {pct(r['accuracy_vs_labels'])}")
    lines += anchored_lines(results.get("human_anchored") or {})
    return "\n".join(lines) + "\n"

"""A study's figures: accuracy per annotator against the labels (Wilson CI), Fleiss' kappa between annotators
(items judged by all of them), and agreement of the human majority with each judge (raw agreement with its
Wilson CI and Cohen's kappa with its bootstrap CI); items whose annotators tie have no majority and are left
out of those, counted, and so are items judged by one annotator only (one person is no majority); answers that
take no side (skip; pairwise tie and both bad) are counted apart from the accuracies; the export of every
judgment with the item's label and verdicts."""

from __future__ import annotations

from collections import Counter
from typing import Any

from uxbench.human.anchored import anchored_lines, human_anchored
from uxbench.human.study import CHOICES, DECISIVE, SKIP, Study
from uxbench.metrics.agreement import cohen_kappa, fleiss_kappa
from uxbench.metrics.proportions import proportion


def min_votes(n_annotators: int) -> int:
    """The judgments an item needs before its majority means anything: two (one annotator is no majority),
    or one in a study of a single annotator."""
    return 1 if n_annotators <= 1 else 2


def vote(choices: list[str | None], needed: int) -> tuple[str | None, str]:
    """(the majority's choice or None, why): 'majority', 'tie' (no choice made by more annotators than every
    other), 'single' (fewer than `needed` judgments) or 'none' (nobody judged it; a skip is no judgment)."""
    given = [c for c in choices if c is not None and c != SKIP]
    if not given:
        return None, "none"
    if len(given) < needed:
        return None, "single"
    top = Counter(given).most_common()
    if len(top) == 1 or top[0][1] > top[1][1]:
        return top[0][0], "majority"
    return None, "tie"


def _annotator_row(name: str, mine: list[tuple[dict[str, Any], str]], n_items: int, sides: tuple[str, ...]
                   ) -> dict[str, Any]:
    """Accuracy on the labelled items where the annotator took a side; the other answers counted."""
    decided = [(i, c) for i, c in mine if c in sides and i["label"] is not None]
    return {"annotator": name, "n_judged": len(mine), "n_items": n_items,
            "n_skipped": sum(c == SKIP for _, c in mine),
            "n_undecided": sum(c not in sides and c != SKIP for _, c in mine),
            "accuracy": proportion(sum(i["label"] == c for i, c in decided), len(decided)) if decided else None}


def study_results(study: Study, *, n_boot: int = 2000, seed: int = 0, anchor_by: str = "majority") -> dict[str, Any]:
    meta = study.meta()
    items = study.items()
    annotators = study.annotators()
    judged = study.judgments()
    sides = DECISIVE.get(meta.get("mode", "pointwise"), DECISIVE["pointwise"])
    per_annotator = [_annotator_row(a.name, [(i, judged[(a.token, i["item_id"])]) for i in items
                                             if (a.token, i["item_id"]) in judged], len(items), sides)
                     for a in annotators]
    # A skip is no judgment: Fleiss' kappa keeps the items every annotator judged.
    rows = [[None if (c := judged.get((a.token, i["item_id"]))) == SKIP else c for a in annotators] for i in items]
    fleiss = fleiss_kappa(rows) if len(annotators) >= 2 else None
    needed = min_votes(len(annotators))
    votes = [vote(row, needed) for row in rows]
    majority = [m for m, _ in votes]
    status = Counter(why for _, why in votes)
    judge_names = sorted({name for i in items for name in (i["hidden"].get("judges") or {})})
    judges = {}
    for name in judge_names:
        theirs = [(i["hidden"].get("judges") or {}).get(name) for i in items]
        judges[name] = cohen_kappa(majority, theirs, n_boot=n_boot, seed=seed)
        truth = [(v, i["label"]) for v, i in zip(theirs, items, strict=True) if v is not None and i["label"]]
        judges[name]["accuracy_vs_labels"] = proportion(sum(v == lab for v, lab in truth), len(truth)) \
            if truth else None
    majority_labelled = [(m, i["label"]) for m, i in zip(majority, items, strict=True) if m in sides and i["label"]]
    picks = [i["hidden"]["models"][m] for m, i in zip(majority, items, strict=True)
             if m in sides and i["hidden"].get("models")]
    models = sorted({name for i in items for name in (i["hidden"].get("models") or {}).values()})
    answers = Counter(c for c in judged.values())
    return {"kind": "uxbench.human_study", "mode": meta.get("mode"), "source": meta.get("source"),
            "task": meta.get("task"), "n_items": len(items), "n_annotators": len(annotators),
            "annotators": per_annotator, "fleiss": fleiss,
            "answers": {c: answers.get(c, 0) for c in CHOICES.get(meta.get("mode", "pointwise"), ())},
            "majority": {"n_judged": len(items) - status["none"], "n_ties": status["tie"],
                         "n_single": status["single"], "min_votes": needed, "n_majority": status["majority"],
                         "n_undecided": sum(m is not None and m not in sides for m in majority)},
            "majority_accuracy": proportion(sum(m == lab for m, lab in majority_labelled), len(majority_labelled))
            if majority_labelled else None,
            "human_judge": judges,
            "preference": {name: proportion(picks.count(name), len(picks)) for name in models} if picks else None,
            "human_anchored": human_anchored(study, annotators=anchor_by)}


def export_rows(study: Study) -> list[dict[str, Any]]:
    """One row per judgment: annotator name (never the token), item, choice, the label and the judges'
    verdicts; `correct` is None without a label or for an answer that takes no side (skip, tie, both bad)."""
    items = {i["item_id"]: i for i in study.items()}
    names = {a.token: a.name for a in study.annotators()}
    sides = DECISIVE.get(study.mode, DECISIVE["pointwise"])
    out = []
    for (token, item_id), choice in sorted(study.judgments().items(), key=lambda kv: (names[kv[0][0]], kv[0][1])):
        item = items[item_id]
        out.append({"annotator": names[token], "item_id": item_id, "choice": choice, "label": item["label"],
                    "correct": None if item["label"] is None or choice not in sides else choice == item["label"],
                    **item["hidden"]})
    return out


def _kappa(r: dict[str, Any]) -> str:
    """'0.412 [0.210, 0.598] (n=40, percentile bootstrap)' for a `cohen_kappa` result."""
    k = r["kappa"]
    if k.get("value") is None:
        return f"n/a (n={r['n']})"
    ci = f" [{k['ci_low']:.3f}, {k['ci_high']:.3f}]" if k.get("ci_low") is not None else ""
    return f"{k['value']:.3f}{ci} (n={r['n']}, 95% CI, {k.get('method') or 'bootstrap'})"


def _no_majority(counts: dict[str, Any]) -> str:
    """'2 tied (no majority) and 1 judged by one annotator only (a majority needs 2)': the judged items without a
    majority."""
    parts = [f"{counts.get('n_ties', 0)} tied (no majority)"]
    if counts.get("n_single"):
        parts.append(f"{counts['n_single']} judged by one annotator only (a majority needs {counts['min_votes']})")
    return " and ".join(parts)


def results_text(results: dict[str, Any]) -> str:
    """The results as plain text for the terminal."""
    def pct(cell: dict[str, Any] | None) -> str:
        if not cell or cell.get("value") is None:
            return "n/a"
        return f"{100 * cell['value']:.1f}% [{100 * cell['ci_low']:.1f}, {100 * cell['ci_high']:.1f}] (n={cell['n']})"

    lines = [f"Study of {results['n_items']} items ({results['mode']}), {results['n_annotators']} annotators, "
             f"from {results['source']}", "", "Accuracy against the labels, per annotator (the answers that take a "
             "side):"]
    for a in results["annotators"]:
        other = [f"{a[k]} {what}" for k, what in (("n_skipped", "skipped"), ("n_undecided", "tie or both bad"))
                 if a.get(k)]
        lines.append(f"  {a['annotator']}: {pct(a['accuracy'])}  judged {a['n_judged']}/{a['n_items']}"
                     + (f" ({', '.join(other)})" if other else ""))
    fleiss = results["fleiss"]
    if fleiss:
        kappa = "n/a" if fleiss["kappa"] is None else f"{fleiss['kappa']:.3f}"
        lines.append(f"Fleiss' kappa: {kappa} over {fleiss['n_items']} items judged by all "
                     f"{fleiss['n_raters'] or results['n_annotators']} annotators")
    counts = results.get("majority") or {}
    who = "The annotator" if results["n_annotators"] == 1 else "Human majority"
    answers = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in (results.get("answers") or {}).items())
    if answers:
        lines.append(f"Answers: {answers}")
    if counts and not counts.get("n_majority"):
        # One annotator's judgments are no majority: say what is missing instead of a figure.
        lines.append(f"{who}: none yet: of {counts['n_judged']} judged items, {_no_majority(counts)}.")
    else:
        if counts and results["n_annotators"] > 1:
            undecided = (f"; {counts['n_undecided']} of the majorities took no side (tie or both bad)"
                         if counts.get("n_undecided") else "")
            lines.append(f"Human majority: {counts['n_majority']} of {counts['n_judged']} judged items; "
                         f"{_no_majority(counts)}, left out of the figures below{undecided}")
        lines.append(f"{who} against the labels: {pct(results['majority_accuracy'])}")
        if results.get("preference"):
            lines.append(f"{who}'s preference (pairwise runs):")
            for name, cell in results["preference"].items():
                lines.append(f"  {name}: {pct(cell)}")
        if results["human_judge"]:
            lines.append(f"{who} vs each judge:")
            for name, r in results["human_judge"].items():
                lines.append(f"  {name}: agreement {pct(r['agreement'])}, Cohen's kappa {_kappa(r)}; "
                             f"judge vs labels {pct(r['accuracy_vs_labels'])}")
    lines += anchored_lines(results.get("human_anchored") or {})
    return "\n".join(lines) + "\n"

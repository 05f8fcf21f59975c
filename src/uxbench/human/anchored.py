"""Human-anchored Good%: a study's human labels on a random draw of a Task 2/3 run's replies, combined with a judge's
verdicts on all of them by prediction-powered inference (`metrics.ppi`): the judge's rate over the run's replies
plus the mean of (human - judge) over the labelled ones. One estimate per judge of the run.

Annotators: `majority` (default) labels an item by the majority of its annotators (a tie counts as half good, and
ties are counted); `each` gives one estimate per annotator over the items they labelled. Only items someone labelled
good or bad count (a skip is no label); if annotators skipped items for a reason related to the replies, the
labelled ones are no longer a random draw, so the number drawn and labelled are both reported.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from uxbench.errors import UxbenchError
from uxbench.human.sources import from_run
from uxbench.human.study import Study
from uxbench.metrics.ppi import prediction_powered_mean

ANNOTATOR_MODES = ("majority", "each")


def _majority(choices: list[str]) -> float | None:
    """1 good, 0 bad, 0.5 on a tie; None without a good or bad choice (a skip is no label)."""
    counts = Counter(choices)
    good, bad = counts.get("good", 0), counts.get("bad", 0)
    if not good and not bad:
        return None
    return 1.0 if good > bad else 0.0 if bad > good else 0.5


def why_not(meta: dict[str, str]) -> str | None:
    """Why a study cannot anchor a run's Good% (None when it can)."""
    if meta.get("mode") != "pointwise":
        return "a pairwise study compares replies; a human-anchored Good% needs a pointwise study"
    if meta.get("task") in ("judge", None) or meta.get("kind", "run") != "run":
        return "the study's items are not a Task 2/3 run's replies"
    if meta.get("draw", "stratified") != "random":
        return ("its items were drawn stratified by the judge's verdict, not at random; create the study with "
                "`uxbench human new --from RUN --draw random`")
    return None


def human_anchored(study: Study, *, annotators: str = "majority") -> dict[str, Any]:
    """{available, reason, source, n_drawn, n_labelled, n_ties, population, estimates: [{judge, annotator, ...PPI,
    judge_rate_all}]} over the study's source run."""
    if annotators not in ANNOTATOR_MODES:
        raise UxbenchError(f"--annotators must be majority or each, not {annotators!r}.")
    meta = study.meta()
    out: dict[str, Any] = {"available": False, "reason": why_not(meta), "source": meta.get("source"),
                           "annotators": annotators, "estimates": [],
                           "applies": meta.get("mode") == "pointwise" and meta.get("task") not in ("judge", None)}
    if out["reason"]:
        return out
    source = Path(str(meta.get("source")))
    if not source.is_dir():
        out["reason"] = f"its source run {source} is not there any more"
        return out
    population, _ = from_run(source)
    by_case = {c.case_id: c for c in population}
    items = study.items()
    people = study.annotators()
    judged = study.judgments()
    recorded = int(meta.get("population") or 0)
    notes = []
    if recorded and recorded != len(population):
        notes.append(f"the run had {recorded} replies when the study was drawn and has {len(population)} now")
    judges = sorted({name for c in population for name in c.judges})
    groups: list[tuple[str | None, dict[str, float]]] = []
    if annotators == "majority":
        labels: dict[str, float] = {}
        ties = 0
        for item in items:
            value = _majority([judged[(a.token, item["item_id"])] for a in people
                               if (a.token, item["item_id"]) in judged])
            if value is not None:
                labels[item["hidden"]["case_id"]] = value
                ties += value == 0.5
        out["n_ties"] = ties
        groups.append((None, labels))
    else:
        for a in people:
            groups.append((a.name, {item["hidden"]["case_id"]: 1.0 if judged[(a.token, item["item_id"])] == "good"
                                    else 0.0 for item in items
                                    if judged.get((a.token, item["item_id"])) in ("good", "bad")}))
    out.update(n_drawn=len(items), population=len(population), notes=notes)
    for who, labels in groups:
        known = [cid for cid in labels if cid in by_case]
        for name in judges:
            f_all = [1.0 if c.judges.get(name) == "good" else 0.0 for c in population]
            entry: dict[str, Any] = {"judge": name, "annotator": who, "n_labelled": len(known),
                                     "judge_rate_all": sum(f_all) / len(f_all) if f_all else None}
            if known and f_all:
                entry.update(prediction_powered_mean(
                    f_all, [labels[c] for c in known],
                    [1.0 if by_case[c].judges.get(name) == "good" else 0.0 for c in known]))
            out["estimates"].append(entry)
    out["n_labelled"] = max((e["n_labelled"] for e in out["estimates"]), default=0)
    out["available"] = bool(out["estimates"]) and out["n_labelled"] > 0
    if not out["available"] and out["reason"] is None:
        out["reason"] = "no item has a human label yet" if judges else "no judge has scored the run"
    return out


def anchored_lines(result: dict[str, Any]) -> list[str]:
    """The estimates as text lines for `uxbench human results`."""
    if not result.get("available"):
        # a Task 1 or pairwise study is not about one run's Good%: nothing to say there
        return [f"Human-anchored Good%: not available ({result.get('reason')})."] \
            if result.get("reason") and result.get("applies") else []
    ties = f", {result['n_ties']} tied majorities counted as half good" if result.get("n_ties") else ""
    lines = [f"Human-anchored Good% of the {result['population']} replies of {result['source']} (prediction-powered "
             f"inference, Angelopoulos et al. 2023; {result['n_labelled']} of {result['n_drawn']} drawn replies "
             f"labelled{ties}):"]
    for e in result["estimates"]:
        if e.get("value") is None:
            continue
        who = f" (annotator {e['annotator']})" if e.get("annotator") else ""
        human = e["human_only"]
        ratio = e.get("width_ratio")
        gain = (f"{1 / ratio:.1f}x narrower than humans alone, worth about {e['effective_n']:.0f} human labels"
                if ratio else "humans alone have no spread")
        lines.append(f"  {e['judge']}{who}: {_pc(e)} (95% CI); the judge alone {100 * e['judge_rate_all']:.1f}%, "
                     f"humans alone {_pc(human)} (n={human['n']}); {gain}")
    lines += [f"  Note: {n}." for n in result.get("notes") or []]
    return lines


def _pc(cell: dict[str, Any]) -> str:
    return f"{100 * cell['value']:.1f}% [{100 * cell['ci_low']:.1f}, {100 * cell['ci_high']:.1f}]"

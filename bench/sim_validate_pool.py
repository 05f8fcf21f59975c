"""How cooperative are the simulated users compared with real ones? `uxbench sim validate` on the real ShareGPT pool.

    python ../shared/data/signals_dev/build_log.py POOL --pool          # the real log (92,489 turns)
    python bench/sim_validate_pool.py --real POOL [--out /tmp/uxbench-validate] [--runs RUN_DIR ...]

Two sim runs of the scripted simulated users (structured mode, the 24 demo personas, 2 trials) bracket the
assistant: `helpful` is a scripted assistant (`scripted:file:` rules written here from each persona: it asks for a
needed on_request fact, then answers with the goal item's check phrase), `unhelpful` is `scripted:always-good`
(it answers "good" to everything, so it never helps). The real users talked to ChatGPT, which lies between, so
the real dissatisfied rate should fall between the two runs' if the simulated users react like people; a positive
cooperativeness gap against the helpful assistant says they are more cooperative than real users even there.
`--runs` adds existing sim runs (e.g. bench/sim_frontier.py's). Prints the figures as Markdown for the README: one row
per assistant (never pooled), the split-half control, each assistant's verdict, the like-with-like warnings.
`--real llm-rubric:PATH` validates on LLM-Rubric's real rated conversations instead (docs/SIM_VALIDATION.md).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any


def helpful_rules(path: Path) -> Path:
    """A stateless rules assistant for the demo personas: a message holding a needed fact's value gets the item's
    answer; a message naming an item (opener, request, rephrasings) gets a question for a missing on_request fact,
    else the answer. Rules are tried in order, the first match answers."""
    from uxbench.sim.persona_io import load_personas

    fact_rules: list[dict[str, str]] = []
    item_rules: list[dict[str, str]] = []
    for persona in (item.persona for item in load_personas(["demo"])):
        zh = persona.lang == "zh"
        for index, goal in enumerate(persona.goal):
            phrase = goal.check.any_of[0] if goal.check.any_of else goal.request
            answer = f"好的：{phrase}。" if zh else f"Sure. {phrase[0].upper()}{phrase[1:]}."
            names = [goal.request, *goal.rephrasings, *([persona.opener] if persona.opener and index == 0 else [])]
            pattern = "(?i)" + "|".join(re.escape(n.rstrip(" .?!。？！")) for n in names if n)
            needs = [persona.fact(f) for f in goal.needs]
            asked = [f for f in needs if f.mode == "on_request" and f.value]
            for fact in asked:
                fact_rules.append({"pattern": re.escape(str(fact.value)), "response": answer})
            ask = (f"请提供您的{asked[0].label}？" if zh else f"Could you tell me your {asked[0].label}?") if asked \
                else answer
            item_rules.append({"pattern": pattern, "response": ask})
    default = "Sorry, I am not sure what you mean."
    path.write_text(json.dumps({"rules": fact_rules + item_rules, "default": default}, ensure_ascii=False),
                    encoding="utf-8")
    return path


def _uxbench(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "uxbench", *args], capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"uxbench {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def _ci(d: dict[str, Any], digits: int = 3) -> str:
    if d.get("value") is None:
        return "n/a"
    return f"{d['value']:.{digits}f} [{d['ci_low']:.{digits}f}, {d['ci_high']:.{digits}f}]"


def _rate(d: Any) -> str:
    return _ci(d) if isinstance(d, dict) else ("n/a" if d is None else f"{float(d):.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real", required=True, help="the real log (build_log.py --pool) or llm-rubric:PATH")
    parser.add_argument("--out", type=Path, default=Path("/tmp/uxbench-validate"))
    parser.add_argument("--runs", type=Path, nargs="*", default=[], help="more sim runs to compare")
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--lang", default="auto", help="only the demo personas of this language (zh, en)")
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rules = helpful_rules(args.out / "helpful_rules.json")
    runs = []
    for name, model in (("helpful", f"scripted:file:{rules}"), ("unhelpful", "scripted:always-good")):
        out = args.out / name
        cmd = ["sim", "run", "--personas", "demo", "--lang", args.lang, "--model", model, "--simulator",
               "scripted:user", "--trials", str(args.trials), "--out", str(out), "--quiet", "--n-boot", "200",
               "--format", "json"]
        _uxbench(*cmd)
        summary = json.loads((out / "summary.json").read_text())
        print(f"{name}: uxbench {' '.join(cmd)}\n  {summary['n_sessions']} sessions, task success "
              f"{_ci(summary['headline']['success_rate'])}, dissatisfied per 100 replies "
              f"{_ci(summary['headline']['dissatisfied_per_100'], 1)}")
        runs.append(out)
    runs += args.runs
    report_path = args.out / "validate.json"
    cmd = ["sim", "validate", "--real", str(args.real), *map(str, runs), "--workdir", str(args.out / "real_mined"),
           "--n-boot", str(args.n_boot), "--out", str(report_path), "--format", "json", "--quiet"]
    _uxbench(*cmd)
    print(f"\nuxbench {' '.join(cmd)}\n")
    report = json.loads(report_path.read_text())
    control = report["split_half_control"]
    print("| simulated side | conversations (personas) | dissatisfied rate, real | simulated | cooperativeness gap "
          "(real - sim) | JS distance | KS on session length (medians real / sim) | discriminator AUC | "
          "length-only AUC |")
    print("|---|---:|---|---|---|---|---|---|---|")
    sims = {s["assistant"]: s for s in report["simulated"]}
    rows = [(f"against {a}", e, sims[a]) for a, e in report["by_assistant"].items()]
    for label, pair, sim in [*rows, ("split-half control (real vs real)", control, None)]:
        r, ks = pair["reactions"], pair["session_length"]
        disc = pair.get("discriminator") or {}
        n = pair["n_conversations"]
        who = f"{n['sim']:,} ({sim['n_personas']})" if sim else f"{n['real']:,} vs {n['sim']:,}"
        print(f"| {label} | {who} | {_rate(r['dissatisfied']['real'])} | "
              f"{_rate(r['dissatisfied']['sim'])} | {_ci(r['cooperativeness_gap'])} | {_ci(r['js_distance'])} | "
              f"{ks['statistic'] if ks['statistic'] is None else round(ks['statistic'], 3)} "
              f"({ks['median_real']} / {ks['median_sim']}) | {_ci(disc) if disc else 'n/a'} | "
              f"{_ci(disc.get('length_baseline') or {}) if disc else 'n/a'} |")
    print(f"\nreal: {report['real']['n_conversations']:,} conversations, {report['real']['n_assistant_turns']:,} "
          "assistant turns")
    for assistant, entry in report["by_assistant"].items():
        print(f"verdict, {assistant}: {entry['verdict']['status']}: {entry['verdict']['summary']}")
    for check in report["checks"]:
        print(f"warning: {check['message']}")
    print(f"yardstick: {report['yardstick']['note']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

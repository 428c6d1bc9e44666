"""The grader's CPU per failing tree file, against another checkout's in the same minutes:
each round grades the class's failing files (bench/rounds.tree_class, the buggy part) and
then its correct ones, in one fresh process per checkout (the plans built once, as a
batch's grader process does; the classic-bug replays remembered across the files, as
there), and reads that process's CPU (every thread of the grader's; the students'
processes are not its own). Rounds alternate the checkouts; min / median / max per file.

    python bench/bench_failing_cpu.py --base DIR [--rounds 5]

Run it from this checkout's folder; DIR is another one (a `git worktree add` of main)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent

ONE_ROUND = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, str(Path.cwd())); sys.path.insert(0, {bench!r})
from rounds import tree_class
from grader.grading import as_seed, grade_submission
from grader.labs import get_lab
from grader.spec import load_spec, spec_path
lab, spec = get_lab("tree"), load_spec(spec_path("tree"))
plans = lab.plans(spec, as_seed(spec, None).value)
out = {{}}
for name, files in (("failing", tree_class(correct=False)[1:]), ("correct", tree_class(buggy=False))):
    started = time.process_time()
    for path in files:
        grade_submission(path, lab, spec, plans=plans)
    out[name] = (time.process_time() - started) / len(files) * 1000
print(json.dumps(out))
"""


def one_round(checkout: Path) -> dict[str, float]:
    code = ONE_ROUND.format(bench=str(PROJECT / "bench"))
    run = subprocess.run([sys.executable, "-c", code], cwd=checkout, capture_output=True, text=True, check=True)
    return json.loads(run.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"base": [], "this": []}
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    for _ in range(args.rounds):
        runs["base"].append(one_round(args.base.resolve()))
        runs["this"].append(one_round(PROJECT))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    for kind in ("failing", "correct"):
        for who, rounds in runs.items():
            ms = sorted(r[kind] for r in rounds)
            print(
                f"{kind:8} {who:5} ms of grader CPU per file: {ms[0]:.1f} / {statistics.median(ms):.1f} / {ms[-1]:.1f}"
            )
        ratios = sorted(t[kind] / b[kind] for b, t in zip(runs["base"], runs["this"]))
        print(f"{kind:8} this / base, per round: {ratios[0]:.2f} / {statistics.median(ratios):.2f} / {ratios[-1]:.2f}")


if __name__ == "__main__":
    main()

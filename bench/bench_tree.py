"""Grading one `.py` submission of the tree lab against specs/tree.yaml, end to end
(`abgrade grade`, a fresh process each time), against a bare Python process that makes
the same calls on the same cases (bench/bare_tree_run.py, `python -B`). Rounds are
interleaved (bare, graded, bare, graded, ...); min / median / max of each, and of the
ratio per round. Goal: at most 1.5x, under 1 s.

    python bench/bench_tree.py [--rounds 11] [SUBMISSION]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from rounds import interleave, ratios, spread, timer  # bench/rounds.py, next to this script

from grader.labs import get_lab
from grader.spec import load_spec, spec_path

HERE = Path(__file__).resolve().parent
SEED = 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("submission", nargs="?", default=str(HERE.parent / "reference" / "solutions" / "tree.py"))
    parser.add_argument("--rounds", "--runs", type=int, default=11)
    args = parser.parse_args()
    plans = get_lab("tree").plans(load_spec(spec_path("tree")), SEED)
    requests = [p.request for p in plans]
    calls = sum(len(r["calls"]) for r in requests)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(requests, handle)
    times = interleave(
        {
            "bare": timer([sys.executable, "-B", str(HERE / "bare_tree_run.py"), handle.name, args.submission]),
            "graded": timer(
                [sys.executable, "-m", "grader", "grade", args.submission, "--lab", "tree", "--seed", str(SEED), "-q"]
            ),
        },
        args.rounds,
    )
    Path(handle.name).unlink()
    print(f"tree lab, {len(requests)} requests, {calls} calls of alphabeta, {args.rounds} interleaved rounds")
    print(f"                       {'min':>6} {'median':>6} {'max':>6}")
    print(f"  bare python run      {spread(times['bare'], ' ms', 1000, 0)}")
    print(f"  abgrade grade        {spread(times['graded'], ' ms', 1000, 0)}   (goal: < 1000 ms)")
    print(f"  ratio per round      {spread(ratios(times['graded'], times['bare']), 'x')}   (goal: <= 1.5x)")


if __name__ == "__main__":
    main()

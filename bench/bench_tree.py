"""Grading one `.py` submission of the tree lab against specs/tree.yaml, end to end
(`abgrade grade`, a fresh process each time), against a bare Python process that makes
the same calls on the same cases (bench/bare_tree_run.py). Goal: at most 1.5x, under 1 s.

    python bench/bench_tree.py [--runs 11] [SUBMISSION]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.labs import get_lab
from grader.spec import load_spec, spec_path

HERE = Path(__file__).resolve().parent
SEED = 1


# As on a normal machine, modules are compiled once (this container sets
# PYTHONDONTWRITEBYTECODE, which would make every run recompile the whole grader).
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], runs: int) -> float:
    """Median wall time of `runs` runs (after one warm-up run)."""
    subprocess.run(command, check=False, capture_output=True, env=ENV)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=False, capture_output=True, env=ENV)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("submission", nargs="?", default=str(HERE.parent / "reference" / "solutions" / "tree.py"))
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    plans = get_lab("tree").plans(load_spec(spec_path("tree")), SEED)
    requests = [p.request for p in plans]
    calls = sum(len(r["calls"]) for r in requests)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(requests, handle)
    bare = timed([sys.executable, str(HERE / "bare_tree_run.py"), handle.name, args.submission], args.runs)
    graded = timed(
        [sys.executable, "-m", "grader", "grade", args.submission, "--lab", "tree", "--seed", str(SEED), "--quiet"],
        args.runs,
    )
    print(f"tree lab, {len(requests)} requests, {calls} calls of alphabeta, median of {args.runs} runs")
    print(f"  bare python run      {bare * 1000:8.0f} ms")
    print(f"  abgrade grade        {graded * 1000:8.0f} ms")
    print(f"  ratio                {graded / bare:8.2f}x   (goal: <= 1.5x and < 1000 ms)")


if __name__ == "__main__":
    main()

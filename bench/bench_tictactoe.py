"""Grading one `.py` submission of the tictactoe lab against specs/tictactoe.yaml, end to
end (`abgrade grade`, a fresh process each time), against a bare `python -c` that imports
the same submission and makes the same calls (same boards, players, depths and windows,
the random positions of the same seed) with nothing watched or judged. Goal: at most 1.5x.

    python bench/bench_tictactoe.py [--runs 5] [SUBMISSION]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.labs import get_lab
from grader.spec import load_spec, spec_path

PROJECT = Path(__file__).resolve().parent.parent
SEED = 1

# The bare run: argv[1] = the calls as JSON, argv[2] = the submission. Boards are parsed
# from notation into float arrays, as the observer does.
BARE = """
import importlib.util, json, sys
import numpy as np
CELLS = {"x": -1.0, "o": 1.0, ".": 0.0}
calls = json.load(open(sys.argv[1]))
spec = importlib.util.spec_from_file_location("submission", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
for call in calls:
    board = np.array([[CELLS[c] for c in row] for row in call["board"].split("/")])
    getattr(module, call["function"])(board, *call.get("args", ()))
"""


def timed(command: list[str], runs: int) -> tuple[float, float, str]:
    """Median wall time and median CPU time (user + system, the process and every process it
    waited for: the grader's worker too) of `runs` runs, after one warm-up run, and what the
    warm-up printed. CPU time is the steadier figure on a busy machine."""
    warm_up = subprocess.run(command, check=False, capture_output=True, text=True, cwd=PROJECT)
    if warm_up.stderr.strip():
        sys.exit(f"{' '.join(command[:4])} ... failed:\n{warm_up.stderr}")
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=False, capture_output=True, cwd=PROJECT)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus), warm_up.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("submission", nargs="?", default=str(PROJECT / "reference" / "solutions" / "tictactoe.py"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    plans = get_lab("tictactoe").plans(load_spec(spec_path("tictactoe")), SEED)
    calls = [call for plan in plans for call in plan.request["calls"]]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(calls, handle)
    bare = timed([sys.executable, "-c", BARE, handle.name, args.submission], args.runs)
    graded = timed(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            args.submission,
            "--lab",
            "tictactoe",
            "--seed",
            str(SEED),
            "--quiet",
        ],
        args.runs,
    )
    Path(handle.name).unlink()
    print(f"tictactoe lab, {len(plans)} requests, {len(calls)} calls, median of {args.runs} runs; score {graded[2]}")
    print(f"                       {'wall':>8}    {'cpu':>8}")
    print(f"  bare python -c       {bare[0] * 1000:8.0f} ms {bare[1] * 1000:8.0f} ms")
    print(f"  abgrade grade        {graded[0] * 1000:8.0f} ms {graded[1] * 1000:8.0f} ms")
    print(f"  ratio                {graded[0] / bare[0]:8.2f}x    {graded[1] / bare[1]:8.2f}x   (goal: <= 1.5x)")


if __name__ == "__main__":
    main()

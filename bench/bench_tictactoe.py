"""Grading one `.py` submission of the tictactoe lab against specs/tictactoe.yaml, end to
end (`abgrade grade`, a fresh process each time), against a bare `python -c` that imports
the same submission and makes the same calls (same boards, players, depths and windows,
the random positions of the same seed) with nothing watched or judged. Rounds are
interleaved (bare, graded, ...); min / median / max of wall and CPU time and of the ratio
per round. Goal: at most 1.5x.

    python bench/bench_tictactoe.py [--rounds 5] [SUBMISSION]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from rounds import interleave, ratios, run, spread  # bench/rounds.py, next to this script

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


def cpu_timer(command: list[str], cpus: list[float]) -> Callable[[], float]:
    """A contender: one run's wall seconds; its CPU time (user + system, the process and
    every process it waited for: the grader's worker too) goes to `cpus`, the steadier
    figure on a busy machine."""

    def measure() -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds, _ = run(command)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return seconds

    return measure


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("submission", nargs="?", default=str(PROJECT / "reference" / "solutions" / "tictactoe.py"))
    parser.add_argument("--rounds", "--runs", type=int, default=5)
    args = parser.parse_args()
    plans = get_lab("tictactoe").plans(load_spec(spec_path("tictactoe")), SEED)
    calls = [call for plan in plans for call in plan.request["calls"]]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(calls, handle)
    graded_command = [sys.executable, "-m", "grader", "grade", args.submission, "--lab", "tictactoe",
                      "--seed", str(SEED), "--quiet"]  # fmt: skip
    score = run(graded_command)[1]
    cpus: dict[str, list[float]] = {"bare": [], "graded": []}
    walls = interleave(
        {
            "bare": cpu_timer([sys.executable, "-B", "-c", BARE, handle.name, args.submission], cpus["bare"]),
            "graded": cpu_timer(graded_command, cpus["graded"]),
        },
        args.rounds,
    )
    cpus = {name: values[1:] for name, values in cpus.items()}  # without the warm-up run
    Path(handle.name).unlink()
    print(f"tictactoe lab, {len(plans)} requests, {len(calls)} calls, {args.rounds} interleaved rounds; score {score}")
    print(
        f"                       wall (s): {'min':>6} {'median':>6} {'max':>6}   cpu (s): {'min':>6} {'median':>6} {'max':>6}"
    )
    for name, label in (("bare", "bare python -c"), ("graded", "abgrade grade")):
        print(f"  {label:<20}          {spread(walls[name])}            {spread(cpus[name])}")
    print(
        f"  ratio per round               {spread(ratios(walls['graded'], walls['bare']), 'x')}           "
        f"{spread(ratios(cpus['graded'], cpus['bare']), 'x')}   (goal: <= 1.5x)"
    )


if __name__ == "__main__":
    main()

"""Where one `abgrade grade` of a `.py` goes, phase by phase: each run is a fresh
interpreter that imports the CLI and grades the tree lab's solution as `abgrade grade
FILE --lab tree -q` does, with the pipeline's steps wrapped in timers (wall and the
grader's own CPU time, `time.process_time`); medians over the runs. Phases that overlap
the student's process are marked: its start-up runs while the grader loads the lab.
With `--importtime`, one more run under `python -X importtime` lists the modules that
took longest to import (their own time, summed over their subtree).

    python bench/bench_grade_phases.py [--runs 15] [--lab tree] [--importtime]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}

DRIVER = r"""
import time
started = (time.perf_counter(), time.process_time())
import contextlib, io, json, sys
phases = {}

def lap(name, since):
    wall, cpu = time.perf_counter() - since[0], time.process_time() - since[1]
    old = phases.get(name, (0.0, 0.0))
    phases[name] = (old[0] + wall, old[1] + cpu)

def timed(owner, attribute, name):
    original = getattr(owner, attribute)
    def wrapper(*args, **kwargs):
        since = (time.perf_counter(), time.process_time())
        try:
            return original(*args, **kwargs)
        finally:
            lap(name, since)
    setattr(owner, attribute, wrapper)

from grader.cli import main
import grader.commands.grade as grade_command
lap("start-up: the CLI's imports", started)
since = (time.perf_counter(), time.process_time())
import grader.sandbox.opening as opening
from grader.sandbox.session import Session
import grader.grading as grading
from grader.labs.kit.base import Lab
import grader.report.terminal as terminal
lap("start-up: the sandbox's and pipeline's imports", since)
timed(opening, "open_session", "open the sandbox (uid, folder, worker spawned)")
timed(grade_command, "load_lab", "load the lab and its spec")
timed(Lab, "plans", "plan the cases")
timed(Session, "load", "wait for the worker: confined, observer, import (overlaps)")
timed(Session, "run", "cases: requests and replies")
timed(grading.Pending, "result", "wait for the judging thread")
timed(Session, "close", "close the sandbox (kill, uid released, folder removed)")
timed(terminal, "summary", "the report")
since = (time.perf_counter(), time.process_time())
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
lap("total of main()", since)
lap("total", started)
print(json.dumps(phases))
"""


def one_run(arguments: list[str]) -> dict[str, tuple[float, float]]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, *arguments], capture_output=True, text=True, cwd=PROJECT, env=ENV, check=True
    )
    return {name: tuple(value) for name, value in json.loads(done.stdout.splitlines()[-1]).items()}


def import_times(arguments: list[str], shown: int = 15) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of the top-level imports that took longest."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "grader", *arguments],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env=ENV,
    )
    rows = []
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if found and len(found.group(3)) <= 3:  # imported by the grader itself, or one level down
            rows.append((int(found.group(2)), found.group(3) + found.group(4)))
    return sorted(rows, reverse=True)[:shown]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--lab", default="tree")
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args()
    submission = PROJECT / "reference" / "solutions" / f"{args.lab}.py"
    arguments = ["grade", str(submission), "--lab", args.lab, "-q"]
    one_run(arguments)  # warm-up: compiled modules, the per-user cache
    runs = [one_run(arguments) for _ in range(args.runs)]
    print(f"abgrade grade {args.lab} .py: medians of {args.runs} runs, load average {os.getloadavg()[0]:.1f}")
    print(f"  {'phase':66s} {'wall ms':>8s} {'CPU ms':>8s}")
    for name in runs[0]:
        walls = [run.get(name, (0.0, 0.0))[0] for run in runs]
        cpus = [run.get(name, (0.0, 0.0))[1] for run in runs]
        print(f"  {name:66s} {1000 * statistics.median(walls):8.1f} {1000 * statistics.median(cpus):8.1f}")
    if args.importtime:
        print("slowest imports (cumulative, one run):")
        for micros, module in import_times(arguments):
            print(f"  {micros / 1000:7.1f} ms  {module}")


if __name__ == "__main__":
    main()

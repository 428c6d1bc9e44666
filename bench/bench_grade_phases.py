"""Where one `abgrade grade` of a `.py` goes, phase by phase: each run is a fresh
interpreter that imports the CLI and grades the tree lab's solution as `abgrade grade
FILE --lab tree -q` does, with the pipeline's steps wrapped in timers (wall and the
grader's own CPU time, `time.process_time`); medians over the runs. Phases that overlap
the student's process are marked: its start-up runs while the grader loads the lab. The
modules `grade` imports inside main() (most of them lazily, only when the run needs them)
are timed as they load, before and after the worker's spawn; that time is also part of
the phase that imported them (a plain grade of a `.py` opens the sandbox before the CLI's
own imports, commands/grade_early.py: that phase includes the sandbox's imports).
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

def wrap_session(module):
    Session = module.Session
    timed(Session, "load", "wait for the worker: confined, observer, import (overlaps)")
    timed(Session, "run", "cases: requests and replies")
    timed(Session, "close", "close the sandbox (kill, output read; folder and uid: below)")
    if hasattr(Session, "wait_closed"):
        timed(Session, "wait_closed", "wait for the folder's removal and the uid's release (a thread)")

def note_spawn(module):
    started_worker = module.Worker.__init__
    def init(self, *args, **kwargs):
        started_worker(self, *args, **kwargs)
        spawned[0] = True
    module.Worker.__init__ = init

def note_first_spawn(module):
    timed(module, "spawn", "spawn the worker first (first_spawn.py, its imports too)")
    spawn = module.spawn
    def noted(*args, **kwargs):
        try:
            return spawn(*args, **kwargs)
        finally:
            spawned[0] = True
    module.spawn = noted

# modules the grade imports itself, when (and only if) it does: wrapped once they are in
PATCHES = {
    "grader.sandbox.worker": note_spawn,
    "grader.sandbox.first_spawn": note_first_spawn,
    "grader.sandbox.opening": lambda m: timed(m, "open_session", "open the sandbox (uid, folder, worker spawned)"),
    "grader.commands.grade_early": lambda m: timed(m, "start", "open the sandbox before the CLI (its imports too)"),
    "grader.commands.grade": lambda m: timed(m, "load_lab", "load the lab and its spec (its imports too)"),
    "grader.sandbox.session": wrap_session,
    "grader.labs.kit.base": lambda m: timed(m.Lab, "plans", "plan the cases"),
    "grader.grading": lambda m: timed(m.Pending, "result", "wait for the judging thread"),
    "grader.report.terminal": lambda m: timed(m, "summary", "the report"),
}
depth = [0]
spawned = [False]

class Hook:
    # times each import main() makes (outermost only) and wraps PATCHES' modules when they load
    @staticmethod
    def find_spec(name, path=None, target=None):
        for finder in sys.meta_path:
            if finder is Hook or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module
        def exec_module(module):
            since = (time.perf_counter(), time.process_time())
            depth[0] += 1
            try:
                original(module)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    lap("imports in main() before the worker's spawn" if not spawned[0] else "imports in main() after the worker's spawn (overlapped)", since)
            if name in PATCHES:
                PATCHES[name](module)
        try:
            loader.exec_module = exec_module
        except AttributeError:
            return spec
        return spec

from grader.cli import main
lap("start-up: the CLI's imports", started)
for name, patch in PATCHES.items():
    if name in sys.modules:
        patch(sys.modules[name])
sys.meta_path.insert(0, Hook)
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

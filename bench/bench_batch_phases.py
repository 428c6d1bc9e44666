"""Where a `.py` submission's time goes inside a batch, phase by phase: `abgrade batch`
over N copies of the tree lab's submissions (as bench_batch.py makes them) with the
pipeline's steps wrapped in timers, in the batch process and in its grader processes
(forked from it, so they inherit the wrappers). Each grader process appends one line per
submission to a log; the batch process one per result it records. Reported: the median
per submission of each phase's wall time and of the CPU time of the thread that ran it
(`time.thread_time`: the judging thread's work is its own phase), and the grader
process's whole CPU (`time.process_time`, every thread) per submission.

Phases nest (an indented phase is part of the one above it); "rest" lines are what the
outer phase spent outside the phases listed under it; a phase a submission skipped counts
0 for it (the plans, built once per grader process where the lab allows it). A phase is
counted where it runs: with the next `.py` worker started ahead, the question for the
next job is sent once the current one is loaded (Session.on_ready), and the batch's
answer and the next submission's "open" come on a thread of its own; the folder's
removal and uid's release run on a thread too, all overlapping the current submission's
phases; what the grading still waits for of them is "this one's opening awaited" and
"the last one's clean-up awaited". The batch process's side: the hand-over (the pool's
time for a job, from its hand-out to its result's collection, less the grader process's
own time for it: pipes, pickling, the loop's tick), the gradebook's write, the feedback
files written as each grade is recorded, and the progress line.

    python bench/bench_batch_phases.py [--submissions 40] [--jobs 2] [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT))

from rounds import ENV  # noqa: E402  (bench/rounds.py)

# (module, owner attribute or "", function, phase): wrapped in this order; `owner` is a
# class of the module, or "" for a module-level function looked up where it is called
WRAPPED = [
    ("grader.batch.task", "GradeTask", "__call__", "job in the grader process (all below)"),
    ("grader.labs.kit.base", "Lab", "plans", "  plan the cases (lab.plans)"),
    ("grader.batch.task", "Ahead", "opened", "  this one's opening awaited (opened ahead on a thread)"),
    ("grader.batch.pool", "NextJob", "ask", "  the next job asked for (the question sent)"),
    ("grader.batch.task", "Closing", "settle", "  the last one's clean-up awaited (on a thread)"),
    (
        "grader.sandbox.session",
        "PythonSession",
        "__init__",
        "  open (the next one's, on a thread; overlaps): folder, uid lease, worker forked",
    ),
    ("grader.batch.pool", "NextJob", "answer", "  the batch process's answer (on the opening thread; overlaps)"),
    ("grader.sandbox.session", "", "lease", "    uid lease (flock, state, /proc scan if unclean)"),
    ("grader.sandbox.session", "", "hand_over", "    folder handed to the uid (chown, ACL)"),
    ("grader.sandbox.session", "PythonSession", "_start_worker", "    worker started (all below)"),
    ("grader.sandbox.worker_zygote", "", "zygote_for", "      the zygote looked up (started on first use)"),
    ("grader.sandbox.cgroup", "StudentCgroups", "__init__", "      cgroup made"),
    ("grader.sandbox.kernel_zygote", "KernelZygote", "fork", "      zygote fork (request and reply)"),
    ("grader.sandbox.session", "Session", "load", "  load: confinement awaited, setup, import"),
    ("grader.sandbox.session", "PythonSession", "_load", "    setup sent, the student's import"),
    ("grader.sandbox.session", "Session", "run", "  cases: requests and replies"),
    ("grader.grading", "Pending", "result", "  wait for the judging thread"),
    ("grader.grading", "", "_sanitize_and_judge", "  judging (on its own thread, overlaps)"),
    ("grader.sandbox.session", "Session", "close", "  close (all below)"),
    ("grader.sandbox.worker", "Worker", "kill", "    kill the group, cgroup removed"),
    ("grader.sandbox.cgroup", "StudentCgroups", "remove", "      cgroup removed"),
    ("grader.sandbox.session", "Session", "_clean_up", "  folder removed, uid released (on a thread; overlaps)"),
    ("grader.sandbox.identity", "StudentIdentity", "release", "    uid released (reap, sweep /tmp)"),
    ("grader.batch.gradebook", "Gradebook", "record_report", "gradebook write (batch process)"),
    ("grader.batch.runner", "", "write_recorded_feedback", "feedback written as recorded (batch process)"),
    ("grader.batch.exports", "", "write_one_feedback", "  the files themselves (the rest: the grade read back)"),
    ("grader.batch.progress", "Progress", "finished", "progress output (batch process)"),
    ("grader.batch.pool", "LocalPool", "run", "the pool's run: every job (batch process)"),
    ("grader.batch.runner", "", "publish", "exports at the end: grades.csv, class pages, feedback of earlier runs"),
]
RUN_PHASES = [
    "the batch's main()",
    "the pool's run: every job (batch process)",
    "exports at the end: grades.csv, class pages, feedback of earlier runs",
]
PARENTS = {
    "job in the grader process (all below)": [
        "  plan the cases (lab.plans)",
        "  this one's opening awaited (opened ahead on a thread)",
        "  the next job asked for (the question sent)",
        "  the last one's clean-up awaited (on a thread)",
        "  load: confinement awaited, setup, import",
        "  cases: requests and replies",
        "  wait for the judging thread",
        "  close (all below)",
    ],
    "  open (the next one's, on a thread; overlaps): folder, uid lease, worker forked": [
        "    uid lease (flock, state, /proc scan if unclean)",
        "    folder handed to the uid (chown, ACL)",
        "    worker started (all below)",
    ],
    "    worker started (all below)": [
        "      the zygote looked up (started on first use)",
        "      cgroup made",
        "      zygote fork (request and reply)",
    ],
    "  load: confinement awaited, setup, import": ["    setup sent, the student's import"],
    "  close (all below)": ["    kill the group, cgroup removed"],
    "    kill the group, cgroup removed": ["      cgroup removed"],
    "feedback written as recorded (batch process)": ["  the files themselves (the rest: the grade read back)"],
    "  folder removed, uid released (on a thread; overlaps)": ["    uid released (reap, sweep /tmp)"],
}

DRIVER = r"""
import json, os, sys, time, importlib
log_path, wrapped = sys.argv[1], json.loads(sys.argv[2])
phases = {}

def wrap(owner, name, phase):
    original = getattr(owner, name)
    def timed(*args, **kwargs):
        since = (time.perf_counter(), time.thread_time())
        try:
            return original(*args, **kwargs)
        finally:
            old = phases.get(phase, (0.0, 0.0))
            phases[phase] = (old[0] + time.perf_counter() - since[0], old[1] + time.thread_time() - since[1])
    setattr(owner, name, timed)

def flush(kind, key, extra):
    with open(log_path, "a") as handle:
        handle.write(json.dumps({"kind": kind, "key": key, "pid": os.getpid(), "phases": phases, **extra}) + "\n")
    phases.clear()

for module_name, owner_name, name, phase in wrapped:
    module = importlib.import_module(module_name)
    wrap(getattr(module, owner_name) if owner_name else module, name, phase)

import grader.sandbox.session as session_module
close = session_module.Session.close
def closed(self):
    if "student process CPU (its cgroup)" not in phases:
        phases["student process CPU (its cgroup)"] = (0.0, self.cpu_used())
    return close(self)
session_module.Session.close = closed

import grader.batch.task as task_module
job = task_module.GradeTask.__call__
def call(self, path):
    phases.clear()
    cpu = time.process_time()
    try:
        return job(self, path)
    finally:
        flush("grader", path.stem, {"process_cpu": time.process_time() - cpu})
task_module.GradeTask.__call__ = call

import grader.batch.progress as progress_module
finished = progress_module.Progress.finished
def finished_and_logged(self, student, outcome, seconds):
    try:
        return finished(self, student, outcome, seconds)
    finally:
        flush("batch", student, {"pool_seconds": seconds})
progress_module.Progress.finished = finished_and_logged

from grader.cli import main
since = time.perf_counter()
try:
    code = main(sys.argv[3:])
finally:
    phases["the batch's main()"] = (time.perf_counter() - since, time.process_time())
    flush("run", "", {})
sys.exit(code)
"""


def one_run(folder: Path, out: Path, log: Path, jobs: int) -> None:
    shutil.rmtree(out, ignore_errors=True)
    arguments = ["batch", str(folder), "--lab", "tree", "--seed", "1", "--jobs", str(jobs), "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(log), json.dumps(WRAPPED), *arguments],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env=ENV,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the batch failed:\n{done.stderr[-3000:]}")


def per_submission(log: Path) -> list[dict[str, tuple[float, float]]]:
    """One row per submission: every phase's (wall, thread CPU) seconds, both processes'."""
    grader: dict[str, dict] = {}
    batch: dict[str, dict] = {}
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if entry["kind"] != "run":
            (grader if entry["kind"] == "grader" else batch)[entry["key"]] = entry
    rows = []
    for key, entry in grader.items():
        row = {name: tuple(value) for name, value in entry["phases"].items()}
        row["grader process CPU, every thread"] = (0.0, entry["process_cpu"])
        other = batch.get(key)
        if other is not None:
            row.update({name: tuple(value) for name, value in other["phases"].items()})
            own = row.get("job in the grader process (all below)", (0.0, 0.0))[0]
            row["hand-over (pool's time less the job's)"] = (other["pool_seconds"] - own, 0.0)
        rows.append(row)
    return rows


def per_run(log: Path) -> list[dict[str, tuple[float, float]]]:
    """One row per batch: its main(), the pool's run and the exports (wall, process CPU)."""
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return [{n: tuple(v) for n, v in e["phases"].items()} for e in entries if e["kind"] == "run"]


def in_order(name: str) -> list[str]:
    """`name`, the phases under it (each followed by its own), then the rest of it."""
    children = PARENTS.get(name)
    if children is None:
        return [name]
    depth = len(name) - len(name.lstrip()) + 2
    rest = " " * depth + f"rest of: {name.strip().split(' (')[0]}"
    return [name, *(n for child in children for n in in_order(child)), rest]


def with_rest(row: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    for parent, children in PARENTS.items():
        if parent in row:
            wall = row[parent][0] - sum(row.get(c, (0.0, 0.0))[0] for c in children)
            cpu = row[parent][1] - sum(row.get(c, (0.0, 0.0))[1] for c in children)
            depth = len(parent) - len(parent.lstrip()) + 2
            row[" " * depth + f"rest of: {parent.strip().split(' (')[0]}"] = (wall, cpu)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="batches run (after one warm-up)")
    args = parser.parse_args()
    from bench_batch import class_folders

    root = Path(tempfile.mkdtemp(prefix="abgrade-bench-phases-"))
    try:
        folder = class_folders(root, args.submissions)["py"]
        one_run(folder, root / "out", root / "warm-up.jsonl", args.jobs)
        log = root / "phases.jsonl"
        loads = []
        for _ in range(args.rounds):
            one_run(folder, root / "out", log, args.jobs)
            loads.append(os.getloadavg()[0])
        rows = [with_rest(row) for row in per_submission(log)]
        runs = per_run(log)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    nested = {child for children in PARENTS.values() for child in children}
    names = [
        n for _, _, _, phase in WRAPPED if phase not in nested and phase not in RUN_PHASES for n in in_order(phase)
    ]
    names += [
        "student process CPU (its cgroup)",
        "hand-over (pool's time less the job's)",
        "grader process CPU, every thread",
    ]
    print(
        f"abgrade batch, {args.submissions} .py submissions of the tree lab, {args.jobs} jobs, {args.rounds} "
        f"batch(es): medians per submission over {len(rows)}; load average {min(loads):.1f}-{max(loads):.1f}"
    )
    print(f"  {'phase':58s} {'wall ms':>8s} {'CPU ms':>8s}")
    for name in names:
        values = [row.get(name, (0.0, 0.0)) for row in rows]  # a phase a submission skipped took 0
        if any(name in row for row in rows):
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            print(f"  {name:58s} {1000 * wall:8.1f} {1000 * cpu:8.1f}")
    print(f"  per batch (medians of {len(runs)}; CPU: the batch process's own)")
    for name in RUN_PHASES:
        values = [run[name] for run in runs if name in run]
        if values:
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            print(f"  {name:58s} {1000 * wall:8.1f} {1000 * cpu:8.1f}")


if __name__ == "__main__":
    main()

"""Where the time of one small notebook goes (issue 19, part 2): grades the tree lab's
reference solution as a notebook N times and splits each grading into phases, wall time
and CPU time of the grader and of the kernel process alike.

- grader side (this process): opening the session (uid lease, work folder), starting the
  kernel (KernelWorker: cgroups, connection file, spawn, waiting for `kernel_info`), the
  cells, the observer's start, the cases and judging, closing (kill, cgroups, folders);
- kernel side (reported by the kernel itself, a phase launcher used in place of
  `-m ipykernel_launcher`): interpreter start and confinement (from spawn to its first
  line), the imports of ipykernel / IPython / zmq / tornado, and every `IPKernelApp.init_*`
  step (ZMQ sockets, the IPython shell, exec_lines, ...), each with the kernel's CPU time:
  only with ABGRADE_KERNEL_ZYGOTE=0 (a kernel forked from the zygote has no launcher).

    ABGRADE_KERNEL_ZYGOTE=0 python bench/bench_kernel_phases.py [--runs 5]   # one interpreter per kernel
    python bench/bench_kernel_phases.py [--runs 5]                            # kernels forked from the zygote

With `--ahead ROUNDS`, instead: one grader process (this one, as a batch's grader process
grades: GradeTask) grades `--runs` notebooks in a row, each kernel started ahead while the
notebook before runs and is judged, or not (ABGRADE_KERNEL_AHEAD's two ways), in
interleaved rounds; it prints the wall time per notebook and how long the grader waited
for each kernel to be ready (the critical path the start ahead takes the kernel's start
off), min / median / max over the rounds:

    python bench/bench_kernel_phases.py --ahead 5 --runs 10
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from grader.grading import grade_submission  # noqa: E402
from grader.labs import get_lab  # noqa: E402
from grader.sandbox import isolation as isolation_module  # noqa: E402
from grader.sandbox import kernel_zygote  # noqa: E402
from grader.sandbox import notebook as notebook_module  # noqa: E402
from grader.spec import load_spec, spec_path  # noqa: E402
from tests.notebook_builder import notebook_from_py  # noqa: E402

# the kernel's phase launcher: what `ipykernel_launcher` does, with marks on stderr
LAUNCHER = r"""
import json, os, resource, sys, time
def _mark(name, _r=resource):
    u = _r.getrusage(_r.RUSAGE_SELF)
    os.write(2, ("ABGRADE-PHASE " + json.dumps([name, time.time(), u.ru_utime + u.ru_stime]) + "\n").encode())
_mark("interpreter ready")
import zmq, tornado.ioloop
_mark("import zmq, tornado")
import IPython
_mark("import IPython")
from ipykernel import kernelapp
_mark("import ipykernel (rest)")
App = kernelapp.IPKernelApp
for _name in [n for n in dir(App) if n.startswith("init_") and callable(getattr(App, n))]:
    def _timed(self, *a, _f=getattr(App, _name), _n=_name, **k):
        result = _f(self, *a, **k)
        _mark(_n)
        return result
    setattr(App, _name, _timed)
app = App.instance()
app.initialize(sys.argv[1:])
_mark("initialize (rest)")
app.start()
"""


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def ahead_rounds(rounds: int, runs: int) -> None:
    """Notebooks graded in a row by one GradeTask, kernels started ahead or not."""
    from grader.batch.task import GradeTask
    from grader.sandbox.kernel_worker import KernelWorker
    from grader.seeding import Seed

    spec = load_spec(spec_path("tree"))
    waits: list[float] = []
    connect = KernelWorker.connect

    def timed_connect(self: KernelWorker) -> None:
        if self.connected:  # a kernel not started ahead connects in its constructor
            return
        started = time.perf_counter()
        connect(self)
        waits.append(time.perf_counter() - started)

    KernelWorker.connect = timed_connect  # type: ignore[method-assign]
    per_notebook: dict[str, list[float]] = collections.defaultdict(list)
    waited: dict[str, list[float]] = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as folder:
        source = PROJECT / "reference" / "solutions" / "tree.py"
        paths = [notebook_from_py(source, Path(folder) / f"s{i:03d}.ipynb") for i in range(runs)]
        task = GradeTask("tree", spec, Seed(1, "bench"))
        task.look_ahead(lambda: None)
        task(paths[0])  # warm-up: the zygote, disk caches, the grader's imports
        for _ in range(rounds):
            for mode in ("ahead", "not ahead"):
                waits.clear()
                started = time.perf_counter()
                for number, path in enumerate(paths):
                    following = paths[number + 1] if mode == "ahead" and number + 1 < runs else None
                    task.look_ahead(lambda following=following: following)
                    report = task(path)
                    assert getattr(report, "score", None) == getattr(report, "max_score", 0), report
                per_notebook[mode].append((time.perf_counter() - started) / runs)
                waited[mode].append(statistics.median(waits))
        task.close()
    print(f"{runs} notebooks in a row in one grader process, {rounds} interleaved rounds, ms (min / median / max)")
    print(f"  {'':<12}{'per notebook':>24}{'waiting for the kernel (median)':>36}")
    for mode in ("ahead", "not ahead"):
        a, b = per_notebook[mode], waited[mode]
        print(
            f"  {mode:<12}{min(a) * 1000:8.0f}{statistics.median(a) * 1000:8.0f}{max(a) * 1000:8.0f}"
            f"{min(b) * 1000:20.0f}{statistics.median(b) * 1000:8.0f}{max(b) * 1000:8.0f}"
        )
    ratios = [x / y for x, y in zip(per_notebook["ahead"], per_notebook["not ahead"])]
    print(f"  ahead / not ahead per round: {' '.join(f'{r:.2f}' for r in ratios)}; load average {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ahead", type=int, metavar="ROUNDS", help="kernels started ahead or not, in a row")
    args = parser.parse_args()
    if args.ahead:
        ahead_rounds(args.ahead, args.runs)
        return
    lab, spec = get_lab("tree"), load_spec(spec_path("tree"))
    wall: dict[str, list[float]] = collections.defaultdict(list)
    used: dict[str, list[float]] = collections.defaultdict(list)
    kernel_wall: dict[str, list[float]] = collections.defaultdict(list)
    kernel_cpu: dict[str, list[float]] = collections.defaultdict(list)
    spawned: list[float] = []

    original_wrap = isolation_module.Isolation.wrap

    def wrap(self, argv, plan):
        argv = list(argv)
        if argv[1:3] == ["-m", "ipykernel_launcher"] and not kernel_zygote.enabled():
            argv[1:3] = ["-c", LAUNCHER]
        spawned.append(time.time())
        return original_wrap(self, argv, plan)

    isolation_module.Isolation.wrap = wrap  # type: ignore[method-assign]
    phases = {
        "start kernel (spawn .. kernel_info)": (notebook_module.KernelWorker, "__init__"),
        "run cells": (notebook_module.KernelWorker, "run_cells"),
        "start observer": (notebook_module.KernelWorker, "start_observer"),
        "close kernel (kill, cgroups, folders)": (notebook_module.KernelWorker, "close"),
    }
    for label, (owner, name) in phases.items():
        original = getattr(owner, name)

        def timed(*a, _f=original, _label=label, **k):
            w0, c0 = time.perf_counter(), cpu()
            try:
                return _f(*a, **k)
            finally:
                wall[_label].append(time.perf_counter() - w0)
                used[_label].append(cpu() - c0)

        setattr(owner, name, timed)

    outputs: list[str] = []

    with tempfile.TemporaryDirectory() as folder:
        path = notebook_from_py(PROJECT / "reference" / "solutions" / "tree.py", Path(folder) / "lab.ipynb")
        grade_submission(path, lab, spec, seed=1)  # warm-up: disk caches, the grader's own imports
        for key in (wall, used):
            key.clear()
        spawned.clear()
        totals, total_cpu = [], []
        for _ in range(args.runs):
            w0, c0 = time.perf_counter(), cpu()
            report = grade_submission(path, lab, spec, seed=1)
            totals.append(time.perf_counter() - w0)
            total_cpu.append(cpu() - c0)
            assert report.score == report.max_score, report.tests[0].output
            outputs.append(report.student_output)

    for run, text in zip(range(args.runs), outputs):
        marks = [json.loads(line.split(" ", 1)[1]) for line in text.splitlines() if line.startswith("ABGRADE-PHASE ")]
        previous_wall, previous_cpu = spawned[run], 0.0
        for name, at, cpu_at in marks:
            kernel_wall[name].append(at - previous_wall)
            kernel_cpu[name].append(cpu_at - previous_cpu)
            previous_wall, previous_cpu = at, cpu_at

    def med(values: list[float]) -> float:
        return statistics.median(values) * 1000 if values else 0.0

    print(f"one small notebook (the tree lab's solution), {args.runs} runs, medians in ms")
    print(f"  grading in all: wall {med(totals):.0f}, grader CPU {med(total_cpu):.0f}")
    print(f"  {'grader-side phase':<42}{'wall':>8}{'grader CPU':>12}")
    accounted = [0.0] * args.runs
    for label in phases:
        print(f"  {label:<42}{med(wall[label]):8.0f}{med(used[label]):12.0f}")
        for i, value in enumerate(wall[label][: args.runs]):
            accounted[i] += value
    rest = [t - a for t, a in zip(totals, accounted)]
    print(f"  {'the rest (session, cases, judging, report)':<42}{med(rest):8.0f}")
    print(f"  {'kernel-side phase (from spawn)':<42}{'wall':>8}{'kernel CPU':>12}")
    for name in kernel_wall:
        print(f"  {name:<42}{med(kernel_wall[name]):8.0f}{med(kernel_cpu[name]):12.0f}")
    kernel_total = [sum(kernel_cpu[n][i] for n in kernel_cpu) for i in range(args.runs)]
    print(
        f"  kernel CPU up to ready: {med(kernel_total):.0f} ms (interpreter + confinement not counted before 'ready')"
    )


if __name__ == "__main__":
    main()

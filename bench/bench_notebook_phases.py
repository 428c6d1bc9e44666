"""Where a notebook's time goes in a batch's grader process (issue 26, goal 4): one
grader process (this one, as a batch's grader process grades: GradeTask, each next
notebook's kernel started ahead) grades `--runs` small notebooks of the tree lab in a row,
and every phase is timed: its wall time and the CPU time of the grader process (all its
threads), the kernel's own CPU (its cgroup: the fork from the zygote, confinement and
the kernel app's start until ready, then the cells, then the observer and the cases)
and the kernel zygote's (forking, reaping).

    python bench/bench_notebook_phases.py [--runs 20] [--batch 40]

Phases are inclusive and nest: "open the next submission" (the session's uid lease and
folders, reading the .ipynb, launching its kernel) runs inside "the cells and the
observer" of the notebook before, as a batch does it. `--batch N` also runs `abgrade
batch` over N notebooks with 2 jobs and reports the CPU per notebook of its main process
(the queue, feedback files and the gradebook) and of everything it started, all
processes together (what 2 cores have to share), which is the figure the goal divides.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from tests.notebook_builder import notebook_from_py  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
# the main process's own CPU, printed when the batch ends
MAIN_CPU = (
    "import atexit, resource, runpy, sys\n"
    "def _said():\n"
    "    u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    sys.stderr.write('ABGRADE-MAIN-CPU %f\\n' % (u.ru_utime + u.ru_stime))\n"
    "atexit.register(_said)\n"
    "sys.argv[0] = 'abgrade'\n"
    "runpy.run_module('grader', run_name='__main__')\n"
)


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_cpu(pid: int) -> tuple[float, float]:
    """(own, reaped children's) CPU seconds of `pid`, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS, (int(fields[13]) + int(fields[14])) / TICKS


class Phases:
    """Wall and grader-CPU time per call of the wrapped functions."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = collections.defaultdict(list)
        self.cpu: dict[str, list[float]] = collections.defaultdict(list)
        self.order: list[str] = []

    def wrap(self, owner: object, name: str, label: str) -> None:
        original: Callable = getattr(owner, name)
        self.order.append(label)

        def timed(*args, **kwargs):
            w0, c0 = time.perf_counter(), cpu()
            try:
                return original(*args, **kwargs)
            finally:
                self.wall[label].append(time.perf_counter() - w0)
                self.cpu[label].append(cpu() - c0)

        setattr(owner, name, timed)

    def clear(self) -> None:
        self.wall.clear()
        self.cpu.clear()


def in_process(runs: int) -> None:
    from grader import grading
    from grader.batch import task as task_module
    from grader.batch.task import GradeTask
    from grader.labs.kit import base
    from grader.sandbox import kernel_worker, kernel_zygote, notebook, notebook_file, session
    from grader.seeding import Seed
    from grader.spec import load_spec, spec_path

    phases = Phases()
    phases.wrap(GradeTask, "__call__", "one notebook in all (GradeTask)")
    phases.wrap(base.LabAdapter if hasattr(base, "LabAdapter") else _lab_class(base), "plans", "case plans (lab.plans)")
    phases.wrap(task_module, "open_session", "open a session (uid lease, folders, .ipynb)")
    phases.wrap(notebook_file, "read_notebook", "  read and check the .ipynb")
    phases.wrap(notebook, "read_notebook", "  read and check the .ipynb")
    phases.wrap(kernel_worker.KernelWorker, "__init__", "launch the kernel (manager, cgroups, fork)")
    phases.wrap(kernel_zygote.KernelZygote, "spawn", "  the zygote's fork request")
    phases.wrap(kernel_worker.KernelWorker, "connect", "wait for the kernel (kernel_info)")
    phases.wrap(kernel_worker.KernelWorker, "run_cells", "run the cells")
    phases.wrap(kernel_worker.KernelWorker, "start_observer", "start the observer")
    phases.wrap(grading, "_run_cases", "cells, observer, cases and judging")
    phases.wrap(kernel_worker.KernelWorker, "close", "close the kernel (kill, cgroup, folder)")
    phases.wrap(session.Session, "_clean_up", "release the uid, remove the work folder")
    phases.order = list(dict.fromkeys(phases.order))

    kernel: dict[str, list[float]] = collections.defaultdict(list)
    connect, close = kernel_worker.KernelWorker.connect, kernel_worker.KernelWorker.close

    def counted_connect(self):
        connect(self)
        kernel["start-up until ready"].append(self._baseline)

    def counted_close(self):
        if not self.closed:
            close(self)
            kernel["cells, observer, cases"].append(self.cpu_used())
            kernel["in all"].append(self._baseline + self.cpu_used())
        else:
            close(self)

    kernel_worker.KernelWorker.connect = counted_connect  # type: ignore[method-assign]
    kernel_worker.KernelWorker.close = counted_close  # type: ignore[method-assign]

    spec = load_spec(spec_path("tree"))
    with tempfile.TemporaryDirectory(prefix="s30-bench-") as folder:
        source = PROJECT / "reference" / "solutions" / "tree.py"
        paths = [notebook_from_py(source, Path(folder) / f"s{i:03d}.ipynb") for i in range(runs + 1)]
        task = GradeTask("tree", spec, Seed(1, "bench"))
        task.look_ahead(lambda: paths[1])
        task(paths[0])  # warm-up: the zygote, disk caches, the grader's imports
        phases.clear()
        kernel.clear()
        zygote = kernel_zygote._ZYGOTE
        zpid = zygote.process.pid if zygote is not None and zygote.process is not None else 0
        z0 = process_cpu(zpid)
        w0, c0 = time.perf_counter(), cpu()
        for number, path in enumerate(paths[1:], 1):
            following = paths[number + 1] if number + 1 < len(paths) else None
            task.look_ahead(lambda following=following: following)
            report = task(path)
            assert getattr(report, "score", None) == getattr(report, "max_score", 0), report
        wall, grader_cpu = (time.perf_counter() - w0) / runs, (cpu() - c0) / runs
        z1 = process_cpu(zpid)
        task.close()

    def ms(values: list[float]) -> str:
        if not values:
            return f"{'-':>7}"
        return f"{statistics.median(values) * 1000:7.1f}"

    print(f"{runs} notebooks of the tree lab in a row in one grader process, kernels started ahead; medians, ms")
    print(f"  per notebook: wall {wall * 1000:.0f}, grader process CPU {grader_cpu * 1000:.0f} (means)")
    print(f"  {'grader-side phase (inclusive)':<48}{'wall':>7}{'CPU':>7}{'calls':>7}")
    for label in phases.order:
        calls = len(phases.wall[label])
        print(f"  {label:<48}{ms(phases.wall[label])}{ms(phases.cpu[label])}{calls:7d}")
    print(f"  {'kernel CPU (its cgroup)':<48}{'':>7}{'CPU':>7}")
    for label, values in kernel.items():
        print(f"  {label:<48}{'':>7}{ms(values)}")
    print(
        f"  kernel zygote, per notebook: own CPU {(z1[0] - z0[0]) / runs * 1000:.1f} ms, "
        f"its reaped forks' {(z1[1] - z0[1]) / runs * 1000:.1f} ms"
    )
    print(f"  load average {os.getloadavg()}")


def _lab_class(base):
    """The kit's lab class with the `plans` method."""
    for value in vars(base).values():
        if isinstance(value, type) and "plans" in vars(value):
            return value
    raise SystemExit("no lab class with plans() in grader/labs/kit/base.py")


def in_batch(count: int) -> None:
    """CPU per notebook of a real `abgrade batch` with 2 jobs: its main process, and all."""
    from rounds import tree_class  # bench/rounds.py, next to this script

    sources = tree_class()
    with tempfile.TemporaryDirectory(prefix="s30-bench-") as root:
        folder = Path(root) / "class"
        folder.mkdir()
        for number in range(count):
            source = sources[number % len(sources)]
            notebook_from_py(source, folder / f"s{number:04d}_{source.stem}.ipynb")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", MAIN_CPU, "batch", str(folder), "--lab", "tree", "--jobs", "2"]
            + ["--seed", "1", "--out", str(Path(root) / "out")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=PROJECT,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    main = [float(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("ABGRADE-MAIN-CPU ")]
    if done.returncode != 0 or not main:
        raise SystemExit(f"abgrade batch failed:\n{done.stderr[-2000:]}")
    total = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(f"abgrade batch, {count} notebooks, 2 jobs: {wall:.1f} s ({count * 60 / wall:.0f} per minute)")
    print(
        f"  CPU per notebook: all processes {total / count * 1000:.0f} ms, "
        f"the batch's main process {main[0] / count * 1000:.0f} ms; load average {os.getloadavg()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--batch", type=int, metavar="N", help="also time `abgrade batch` over N notebooks")
    args = parser.parse_args()
    in_process(args.runs)
    if args.batch:
        in_batch(args.batch)


if __name__ == "__main__":
    main()

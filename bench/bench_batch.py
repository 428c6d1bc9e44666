"""Batch grading throughput, side by side: `abgrade batch` over N submissions of the tree
lab (specs/tree.yaml) with 1 and 2 local jobs and on a local Dask cluster of 2 workers,
for `.py` files and for notebooks, in submissions per minute, against bare pools that only
run the same files:

- notebooks: a `multiprocessing.Pool` of N processes that execute each notebook with
  nbclient and nothing else (no sandbox, observer, cases, judging or gradebook; errors
  allowed, as abgrade runs every cell), twice: plain `NotebookClient(nb).execute()`, and
  with the shortcuts abgrade's own kernels take (grader/sandbox/kernel_worker.py: IPC transport
  instead of TCP, the kernel started directly as `python -m ipykernel_launcher` with
  IPython's history off, no cell timing, the kernel killed at the end instead of shut down
  politely), the true floor of a fresh kernel per notebook;
- `.py`: a `multiprocessing.Pool` of N processes that each start a plain `python -B` per
  file making the grader's calls (bench/bare_tree_run.py).

The batch is timed as a user runs it (`python -m grader batch`, a fresh output folder,
gradebook and exports included); the bare pools run inside this process, so they don't
even pay an interpreter start. The Dask cluster (`dask scheduler` and two `dask worker
--nthreads 1`) is started once, before the rounds, as an instructor's cluster would be.
Rounds are interleaved (every configuration once per round, in turn); min / median / max
of each, and of the ratios per round. The bare pools run on a copy of the class folder
with `-B`, so nothing they leave behind (`__pycache__/`) reaches the folder abgrade grades.
otter-grader and nbgrader are looked for and reported as not installed when absent.

    python bench/bench_batch.py [--rounds 3] [--submissions 20] [--kinds py,ipynb] [--no-dask] [--dask-only]
                                [--base DIR] [--dask-defaults] [--dask-chunks 1,2,4,8] [--shrinking-off-too]

`--shrinking-off-too` adds the batch with 2 jobs under a copy of the spec whose failed random
cases are not shrunk (`shrink: {calls: 0}`): the bare pools make only the cases' calls, while
abgrade also sends each failing file's smaller trees to its student process (about 20 to 35
requests a failing file on the bench's class); this contender makes the same calls as the bare
pool, so its ratio says what the grader's own machinery costs. `--dask-only` runs goal 5's
two contenders alone (2 local jobs and the Dask cluster): a shorter run for the ratio that
goal states; `--dask-chunks 1,2,4,8` adds a Dask run per
fixed chunk size (at most K submissions per scheduler task; the plain Dask run sizes its
chunks by the gradings' time, grader/batch/dask_pool.py). `--base DIR` adds the batch
with 2 jobs run from DIR (another commit's code, e.g. a `git archive` of it: its `grader` package comes
first on the path there), in the same rounds, and its time over this checkout's; with the
cluster, DIR's batch on Dask too (only its batch process: the workers run this checkout's
abgrade, so a change on the workers' side is not compared this way). The
cluster runs with the settings the README advises for a grading cluster (QUIET_CLUSTER:
no statistical profiler, the event loop's health tick every second instead of every 20 ms,
the system monitor every 5 s instead of 0.5 s, the memory checks every second instead of every
100 ms); `--dask-defaults` starts it with Dask's
defaults instead (`--dask-profiler`, its older name, does the same). The timed rounds
watch nothing (as the bare pools are not watched); after them each abgrade configuration
runs once more, watched, for its CPU and memory lines. CPU per run is each
process's own user + system time, sampled every 50 ms over the batch's process tree and,
for a Dask run, the cluster's (CpuWatch), and split by the processes that used it: the
batch process, its grader processes, their zygotes and students; or the scheduler, the
workers' nannies, the worker processes and their zygotes and students (_cpu_parts).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT))

from rounds import ENV, interleave, ratios, spread, tree_class  # noqa: E402  (bench/rounds.py)

from grader.labs import get_lab  # noqa: E402
from grader.spec import load_spec, spec_path  # noqa: E402
from tests.notebook_builder import notebook_from_py  # noqa: E402

SEED = 1
SOURCES = tree_class()


def class_folders(root: Path, count: int) -> dict[str, Path]:
    """Two class folders of `count` students each: `.py` files and their notebooks."""
    folders = {"py": root / "py", "ipynb": root / "ipynb"}
    for folder in folders.values():
        folder.mkdir()
    for number in range(count):
        source = SOURCES[number % len(SOURCES)]
        name = f"s{number:03d}_{source.stem}"
        shutil.copyfile(source, folders["py"] / f"{name}.py")
        notebook_from_py(source, folders["ipynb"] / f"{name}.ipynb")
    return folders


# --- the bare pools ----------------------------------------------------------------------


def execute_notebook(path: Path, shortcuts: bool) -> None:
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as workdir:
        resources = {"metadata": {"path": workdir}}
        if not shortcuts:
            nbclient.NotebookClient(
                notebook, kernel_name="python3", timeout=60, allow_errors=True, resources=resources
            ).execute()
            return
        from jupyter_client.kernelspec import KernelSpec
        from jupyter_client.manager import AsyncKernelManager

        km = AsyncKernelManager(
            kernel_name="python3", transport="ipc", ip=f"{workdir}/k", connection_file=f"{workdir}/kernel.json"
        )
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--HistoryManager.enabled=False"]
        km._kernel_spec = KernelSpec(argv=argv, display_name="Python 3", language="python")
        nbclient.NotebookClient(
            notebook,
            km=km,
            kernel_name="python3",
            timeout=60,
            allow_errors=True,
            resources=resources,
            record_timing=False,
            shutdown_kernel="immediate",  # killed, not asked to shut down
        ).execute()


def run_python(arguments: tuple[Path, Path]) -> None:
    cases, path = arguments
    subprocess.run(
        [sys.executable, "-B", str(HERE / "bare_tree_run.py"), str(cases), str(path)], capture_output=True, check=False
    )


def quiet() -> None:
    """Pool initializer: kernels inherit stderr and warn about TCP on every start."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)


def bare_pool(kind: str, folder: Path, workers: int, cases: Path, shortcuts: bool = False) -> float:
    files = sorted(folder.iterdir())
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers, initializer=quiet) as pool:
        if kind == "ipynb":
            pool.map(partial(execute_notebook, shortcuts=shortcuts), files, chunksize=1)
        else:
            pool.map(run_python, [(cases, f) for f in files], chunksize=1)
    return time.perf_counter() - started


# --- abgrade batch -------------------------------------------------------------------------


def grader_memory(root: int) -> int:
    """Resident bytes of `root` and its descendants that run as this user: the grader
    processes of a batch (student processes run as other uids when the grader is root)."""
    parent, rss, uid = {}, {}, {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as handle:
                fields = dict(line.split(":", 1) for line in handle if ":" in line)
            parent[int(entry.name)] = int(fields["PPid"])
            rss[int(entry.name)] = int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
            uid[int(entry.name)] = int(fields["Uid"].split()[0])
        except (OSError, ValueError, KeyError):
            continue
    tree, added = {root}, True
    while added:
        new = {pid for pid, ppid in parent.items() if ppid in tree and pid not in tree}
        tree |= new
        added = bool(new)
    return sum(rss.get(pid, 0) for pid in tree if uid.get(pid) == os.getuid())


PEAKS: dict[str, list[int]] = {}
CPU: dict[str, list[float]] = {}  # label -> CPU seconds per run: the batch's tree and the cluster's
CLUSTER_ROOTS: list[int] = []  # the local Dask cluster's processes, whose CPU a Dask run adds
CPU_PARTS: dict[str, dict[str, list[float]]] = {}  # label -> part of the run (see _cpu_parts) -> seconds per run


def _cpu_parts(batch: CpuWatch, scheduler: CpuWatch, workers: CpuWatch, dask: bool) -> dict[str, float]:
    """A run's CPU by the processes that used it: the batch process itself; then either
    its grader processes and, below them, their zygotes and students (local), or the
    scheduler, the workers' nannies, the worker processes and, below them, their zygotes
    and students (Dask)."""
    mine = batch.by_depth()
    parts = {"batch process": mine.pop(0, 0.0)}
    if not dask:
        parts["grader processes"] = mine.pop(1, 0.0)
        parts["their zygotes and students"] = sum(mine.values())
        return parts
    theirs = workers.by_depth()
    parts["batch's children"] = sum(mine.values())
    parts["scheduler"] = scheduler.used()
    parts["nannies"] = theirs.pop(0, 0.0)
    parts["worker processes"] = theirs.pop(1, 0.0)
    parts["their zygotes and students"] = sum(theirs.values())
    return parts


def tree_cpu(roots: list[int], parents: dict[int, int] | None = None) -> dict[int, float]:
    """CPU seconds (user + system) so far of `roots` and each of their descendants, by pid:
    each process's own (not its reaped children's: those are counted as themselves); each
    one's parent is noted in `parents`."""
    parent, used = {}, {}
    ticks = os.sysconf("SC_CLK_TCK")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parent[int(entry.name)] = int(fields[1])
        used[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    tree, added = set(roots), True
    while added:
        new = {pid for pid, ppid in parent.items() if ppid in tree and pid not in tree}
        tree |= new
        added = bool(new)
    if parents is not None:
        parents.update({pid: parent[pid] for pid in tree if pid in parent and pid not in roots})
    return {pid: used[pid] for pid in tree if pid in used}


class CpuWatch:
    """The CPU a run used in the process trees of `roots`, sampled while it runs: each
    process's own CPU at its last sample, less what it had used at the start. Not the
    batch's rusage: a grader process's zygote dies with its grader, reaped by nobody of the
    batch's, so what it and its students used never reaches it, and the local Dask
    cluster's processes are no children of the batch at all. A lower bound: a process's
    last moments after its last sample (up to one interval, 50 ms) are not counted."""

    def __init__(self, roots: list[int]) -> None:
        self.roots = roots
        self.parents: dict[int, int] = {}  # pid -> parent, of every process seen in the trees
        self.first = tree_cpu(roots, self.parents)
        self.last = dict(self.first)

    def sample(self) -> None:
        self.last.update(tree_cpu(self.roots, self.parents))

    def used(self) -> float:
        self.sample()
        return sum(value - self.first.get(pid, 0.0) for pid, value in self.last.items())

    def by_depth(self) -> dict[int, float]:
        """What `used` counts, by each process's depth below its root (0: the roots; for a
        batch, 1: its grader processes, 2 and more: their zygotes and students; for a Dask
        worker, 1: the worker process under its nanny, 2 and more: its zygotes and students).
        A process whose parent exited before its first sample counts at depth 1."""
        depth = {pid: 0 for pid in self.roots}
        parents = self.parents
        for pid in sorted(self.last):
            chain, at = [], pid
            while at not in depth and at in parents and len(chain) < 64:
                chain.append(at)
                at = parents[at]
            base = depth.get(at, 0)
            for offset, member in enumerate(reversed(chain), 1):
                depth[member] = base + offset
        spent: dict[int, float] = {}
        for pid, value in self.last.items():
            level = depth.get(pid, 1)
            spent[level] = spent.get(level, 0.0) + value - self.first.get(pid, 0.0)
        return spent


def abgrade_batch(
    folder: Path,
    out: Path,
    label: str,
    *executor: str,
    code: Path = PROJECT,
    env: dict[str, str] | None = None,
    watch: bool = False,
) -> float:
    """One `abgrade batch` run's wall time. `watch`: also sample /proc every 50 ms for its
    CPU by kind of process and its grader processes' memory; the timed rounds don't (the
    bare pools they are set beside aren't watched, and the sampling cost `abgrade batch`
    about 4% of its time, s37): each configuration runs once more, watched, after them."""
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "grader", "batch", str(folder), "--lab", "tree", "--seed", str(SEED)]
    dask = "--scheduler" in executor
    if watch:
        scheduler = CpuWatch(CLUSTER_ROOTS[:1] if dask else [])  # the cluster is idle otherwise: not counted
        workers = CpuWatch(CLUSTER_ROOTS[1:] if dask else [])
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--out", str(out), *executor],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=code,
        env={**ENV, **(env or {})},
    )
    if watch:
        batch = CpuWatch([process.pid])
        peak = 0
        while process.poll() is None:
            peak = max(peak, grader_memory(process.pid))
            for watched in (batch, scheduler, workers):
                watched.sample()
            time.sleep(0.05)
    _, errors = process.communicate()  # stderr read as it comes: a long one can't fill its pipe
    seconds = time.perf_counter() - started
    if watch:
        CPU.setdefault(label, []).append(batch.used() + scheduler.used() + workers.used())
        parts = CPU_PARTS.setdefault(label, {})
        for part, seconds_used in _cpu_parts(batch, scheduler, workers, dask).items():
            parts.setdefault(part, []).append(seconds_used)
        PEAKS.setdefault(label, []).append(peak)
    if process.returncode != 0:
        raise SystemExit(f"abgrade batch {' '.join(executor)} failed:\n{errors[-2000:]}")
    return seconds


# --- a local Dask cluster --------------------------------------------------------------------


# the settings the README advises for a grading cluster (Grading on a cluster): Dask's
# statistical profiler off (it samples a running task's stack every 10 ms), its event loop's
# health tick every second (20 ms by default) and its system monitor every 5 s (0.5 s):
# together 0.10 s of CPU per second of an idle 2-worker cluster by default, 0.016 s so
QUIET_CLUSTER = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "5s",
    # the nannies' and the workers' memory checks every second (100 ms by default): with the
    # two above, 37 ms of CPU per second of an idle 2-worker cluster at load 13, 15.5 ms so
    # (s36-dask); a worker's own memory is small, its students' is capped in their processes
    "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1s",
}


class LocalCluster:
    """`dask scheduler` and two `dask worker --nthreads 1`, as processes on this machine,
    with the settings the README advises (QUIET_CLUSTER) unless `defaults` (README, Grading
    on a cluster: the profiler cost a notebook's grading about 80-110 ms of the worker's
    CPU at load 20; the tick and the monitor are most of an idle cluster's CPU)."""

    def __init__(self, folder: Path, workers: int = 2, defaults: bool = False) -> None:
        dask = str(Path(sys.executable).with_name("dask"))
        scheduler_file = folder / "scheduler.json"
        log = (folder / "cluster.log").open("w")
        env = ENV if defaults else {**ENV, **QUIET_CLUSTER}
        # a process group of its own each (stopped with killpg), but this process's session:
        # with the kernel's autogroup scheduling (sched_autogroup_enabled, on here) every
        # session shares the cores as one group, so a cluster of three sessions got up to
        # three times the CPU of the local pool's batch on a loaded machine, and its wall
        # time looked better than it was (s36-dask: Dask 0.62x the local pool at load 15-19)
        spawn = partial(subprocess.Popen, stdout=log, stderr=log, cwd=folder, env=env, process_group=0)
        self.processes = [
            spawn(
                [
                    dask,
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--no-dashboard",
                    "--scheduler-file",
                    str(scheduler_file),
                ]
            )  # fmt: skip
        ]
        while not scheduler_file.exists():
            time.sleep(0.1)
        time.sleep(0.3)
        self.address = json.loads(scheduler_file.read_text())["address"]
        for _ in range(workers):
            self.processes.append(
                spawn([dask, "worker", "--scheduler-file", str(scheduler_file), "--nworkers", "1", "--nthreads", "1"])
            )
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=60)
        CLUSTER_ROOTS[:] = [process.pid for process in self.processes]

    def stop(self) -> None:
        for process in self.processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            process.wait(timeout=30)


# --- the report -------------------------------------------------------------------------------


def rates(count: int, seconds: list[float]) -> str:
    """Submissions per minute: min / median / max (the slowest round gives the minimum)."""
    per_minute = sorted(count * 60 / s for s in seconds)
    return f"{per_minute[0]:7.1f} {statistics.median(per_minute):7.1f} {per_minute[-1]:7.1f}"


def spec_without_shrinking(root: Path) -> Path:
    """A copy of the tree lab's spec that never shrinks a failed random case (0 calls)."""
    path = root / "tree-no-shrinking.yaml"
    if not path.exists():
        text = spec_path("tree").read_text()
        changed = text.replace("shrink: {calls: 150, seconds: 10}", "shrink: {calls: 0, seconds: 10}")
        if changed == text:
            raise SystemExit("bench_batch: specs/tree.yaml's `shrink:` line changed; update spec_without_shrinking")
        path.write_text(changed)
    return path


def ratio_line(label: str, values: list[float], goal: str) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"  {label:<58}{low:5.2f} {mid:5.2f} {high:5.2f}x   {goal}"


def other_graders() -> list[str]:
    """otter-grader and nbgrader are measured only where installed; they need an assignment
    set-up of their own (an autograder zip, a course database), which this bench does not
    build: so they are detected and reported, never quoted."""
    lines = []
    for name, module in (("otter-grader", "otter"), ("nbgrader", "nbgrader")):
        if importlib.util.find_spec(module) is None:
            lines.append(f"  {name}: not installed")
        else:
            lines.append(f"  {name}: installed, but not measured (it needs its own assignment set-up)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", "--runs", type=int, default=3, help="interleaved rounds of every configuration")
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--kinds", default="py,ipynb")
    parser.add_argument("--no-dask", action="store_true", help="leave out the local Dask cluster")
    parser.add_argument("--dask-only", action="store_true", help="only 2 local jobs against the Dask cluster (goal 5)")
    parser.add_argument(
        "--shrinking-off-too",
        action="store_true",
        help="also 2 jobs with a spec that shrinks nothing: the bare pools' calls and no more",
    )
    parser.add_argument("--base", type=Path, help="a folder with another commit's code: its batch of 2 jobs too")
    parser.add_argument(
        "--dask-chunks",
        metavar="K,...",
        help="also a Dask run per fixed chunk size K (ABGRADE_DASK_CHUNK: at most K submissions per task)",
    )
    parser.add_argument(
        "--dask-defaults",
        "--dask-profiler",
        action="store_true",
        help="start the cluster with Dask's default settings (its profiler on, its tick every 20 ms)",
    )
    args = parser.parse_args()
    have_dask = importlib.util.find_spec("distributed") is not None and not args.no_dask
    load = os.getloadavg()[0]
    root = Path(tempfile.mkdtemp(prefix="abgrade-bench-"))
    folders = class_folders(root, args.submissions)
    cases = root / "cases.json"
    cases.write_text(json.dumps([p.request for p in get_lab("tree").plans(load_spec(spec_path("tree")), SEED)]))
    cluster = LocalCluster(root, defaults=args.dask_defaults) if have_dask else None
    results: dict[str, dict[str, list[float]]] = {}
    try:
        for kind in args.kinds.split(","):
            bare_folder = root / f"bare-{kind}"  # the bare pools' own copy: whatever they leave stays there
            shutil.copytree(folders[kind], bare_folder)
            out = root / "out"
            contenders: dict[str, Callable[[], float]] = {
                "abgrade batch, 1 job": partial(abgrade_batch, folders[kind], out, f"{kind} 1", "--jobs", "1"),
                "abgrade batch, 2 jobs": partial(abgrade_batch, folders[kind], out, f"{kind} 2", "--jobs", "2"),
            }
            if cluster is not None:
                contenders["abgrade batch, Dask (2 local workers)"] = partial(
                    abgrade_batch, folders[kind], out, f"{kind} dask", "--scheduler", cluster.address
                )
            if args.shrinking_off_too and not args.dask_only:
                contenders["abgrade batch, 2 jobs, shrinking off"] = partial(
                    abgrade_batch, folders[kind], out, f"{kind} 2 no shrinking", "--jobs", "2",
                    "--spec", str(spec_without_shrinking(root)),
                )  # fmt: skip
            if args.base:
                contenders["abgrade batch, 2 jobs (base)"] = partial(
                    abgrade_batch, folders[kind], out, f"{kind} base", "--jobs", "2", code=args.base.resolve()
                )
            for size in args.dask_chunks.split(",") if args.dask_chunks and cluster is not None else ():
                contenders[f"abgrade batch, Dask, chunks of at most {size}"] = partial(
                    abgrade_batch, folders[kind], out, f"{kind} dask k={size}", "--scheduler", cluster.address,
                    env={"ABGRADE_DASK_CHUNK": size},
                )  # fmt: skip
            if args.base and cluster is not None:  # the base's batch process; the workers run this checkout
                contenders["abgrade batch, Dask (base)"] = partial(
                    abgrade_batch, folders[kind], out, f"{kind} dask base", "--scheduler", cluster.address,
                    code=args.base.resolve(),
                )  # fmt: skip
            if args.dask_only:
                del contenders["abgrade batch, 1 job"]
            elif kind == "ipynb":
                contenders["bare nbclient pool, 2 (plain)"] = partial(bare_pool, kind, bare_folder, 2, cases)
                for workers in (1, 2):
                    contenders[f"bare nbclient pool, {workers} (abgrade's shortcuts)"] = partial(
                        bare_pool, kind, bare_folder, workers, cases, True
                    )
            else:
                for workers in (1, 2):
                    contenders[f"bare python pool, {workers}"] = partial(bare_pool, kind, bare_folder, workers, cases)
            results[kind] = interleave(contenders, args.rounds)
            for name, contender in contenders.items():  # one watched run of each abgrade configuration
                if name.startswith("abgrade"):
                    contender(watch=True)
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)

    count = args.submissions
    print(
        f"{count} submissions of the tree lab (specs/tree.yaml), {args.rounds} interleaved rounds, "
        f"submissions per minute (higher is better): min / median / max; load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end"
    )
    for kind, times in results.items():
        print(f"\n  .{kind}")
        for name, seconds in times.items():
            print(f"  {name:<58}{rates(count, seconds)}")
        print("  ratios per round (min / median / max):")
        two = times["abgrade batch, 2 jobs"]
        if "abgrade batch, 1 job" in times:
            print(ratio_line("2 jobs over 1 job", ratios(times["abgrade batch, 1 job"], two), "(goal: >= 1.6x)"))
        if "abgrade batch, Dask (2 local workers)" in times:
            dask = times["abgrade batch, Dask (2 local workers)"]
            print(ratio_line("Dask (2 workers) over 2 local jobs", ratios(two, dask), "(goal: >= 0.9x)"))
            print(ratio_line("Dask's time over 2 local jobs' (goal 5)", ratios(dask, two), "(goal: <= 1.1x)"))
        for name, seconds in times.items():
            if name.startswith("abgrade batch, Dask, chunks"):
                print(
                    ratio_line(f"{name[len('abgrade batch, ') :]}: time over 2 local jobs'", ratios(seconds, two), "")
                )
        if "abgrade batch, Dask (base)" in times and "abgrade batch, Dask (2 local workers)" in times:
            dask_base = times["abgrade batch, Dask (base)"]
            print(ratio_line("Dask's time over the base's on Dask", ratios(dask, dask_base), "(below 1: faster)"))
        if "abgrade batch, 2 jobs (base)" in times:
            base = times["abgrade batch, 2 jobs (base)"]
            print(ratio_line("2 jobs' time over the base's", ratios(two, base), "(below 1: this checkout is faster)"))
            if "bare python pool, 2" in times:
                bare = times["bare python pool, 2"]
                print(ratio_line("the base's time over the bare python pool's, 2", ratios(base, bare), ""))
        if args.dask_only:
            continue
        floor = "bare nbclient pool, 2 (abgrade's shortcuts)" if kind == "ipynb" else "bare python pool, 2"
        print(ratio_line(f"2 jobs over the {floor}", ratios(times[floor], two), "(1.00x: as fast as the floor)"))
        if kind == "py":
            print(ratio_line(f"2 jobs' time over the {floor}'s", ratios(two, times[floor]), "(goal 2: <= 1.5x)"))
        if "abgrade batch, 2 jobs, shrinking off" in times:
            same = times["abgrade batch, 2 jobs, shrinking off"]
            print(
                ratio_line(
                    f"2 jobs, shrinking off: time over the {floor}'s", ratios(same, times[floor]), "(the same calls)"
                )
            )
            print(
                ratio_line("2 jobs' time over 2 jobs' with shrinking off", ratios(two, same), "(what shrinking adds)")
            )
        if kind == "ipynb":
            plain = times["bare nbclient pool, 2 (plain)"]
            print(ratio_line("2 jobs over the bare nbclient pool, 2 (plain)", ratios(plain, two), ""))
    for label, used in sorted(CPU.items()):
        print(f"  CPU (user + system) of a watched run, .{label}, batch and cluster processes: {spread(used, ' s')}")
        for part, part_used in CPU_PARTS.get(label, {}).items():
            print(f"    {part:<44}{spread(part_used, ' s')}")
    for label, peaks in sorted(PEAKS.items()):
        print(f"  peak resident memory of the batch's grader processes, .{label}: {max(peaks) / 2**20:.0f} MB")
    print("\n  other graders:")
    print("\n".join(other_graders()))


if __name__ == "__main__":
    main()

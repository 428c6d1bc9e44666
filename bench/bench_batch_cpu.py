"""Where a `.py` batch's CPU goes, split into what a run pays once and what each submission
pays: `abgrade batch` of the tree lab over N submissions (as bench_batch.py makes them) for
several N, interleaved, and a straight line fitted per process kind through CPU against N
(its intercept: the per-run cost; its slope: the per-submission cost).

CPU is exact, not sampled: this process becomes a child subreaper, so every process of the
run's tree ends up reaped here or by a process of the tree, and `wait4`'s rusage of the
batch process and of every orphan (a grader process's worker zygote outlives nobody, but
it is reaped by its grader's parent only when orphaned) holds each process's CPU and that
of everything it reaped. What is split by kind: the batch process itself and its grader
processes (both `/proc` samples every 20 ms, so a lower bound), the zygotes (sampled too),
and the students: the zygotes' reaped children, i.e. the exact total less the others.

    python bench/bench_batch_cpu.py [--sizes 10,40,160] [--jobs 2] [--rounds 1] [--base DIR]

`--base DIR` runs another checkout's code (its `grader` first on the path) in the same
rounds, for a before / after of the same machine moment.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT))

from bench_batch import SEED, class_folders  # noqa: E402
from rounds import ENV  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36
STUDENT_UIDS = range(61000, 61256)
KINDS = ("batch", "graders", "zygotes", "students")


def _stat(pid: int) -> tuple[int, float, int] | None:
    """(parent, own CPU seconds, uid) of a live process."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        uid = os.stat(f"/proc/{pid}").st_uid
    except (OSError, IndexError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks, uid


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read(200).replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Sampler:
    """Each process of the tree under `root`, its kind (first seen) and its last own CPU."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.kind: dict[int, str] = {root: "batch"}
        self.cpu: dict[int, float] = {}

    def sample(self) -> None:
        table = {
            pid: s for entry in os.scandir("/proc") if entry.name.isdigit() if (s := _stat(pid := int(entry.name)))
        }
        me = os.getpid()
        for pid, (parent, used, uid) in table.items():
            if pid not in self.kind:
                if uid in STUDENT_UIDS:
                    self.kind[pid] = "students"
                elif parent in self.kind and self.kind[parent] == "batch":
                    self.kind[pid] = "graders"
                elif parent in self.kind and self.kind[parent] == "graders":
                    self.kind[pid] = "zygotes" if " -I -S -u -c " in _cmdline(pid) else "graders"
                elif parent == me and pid != self.root:
                    continue  # an orphan seen first after its parent died: not classed
                elif parent in self.kind:
                    self.kind[pid] = "students" if self.kind[parent] in ("zygotes", "students") else self.kind[parent]
                else:
                    continue
            if self.kind.get(pid) in ("batch", "graders", "zygotes"):
                self.cpu[pid] = used

    def by_kind(self) -> dict[str, float]:
        totals = dict.fromkeys(KINDS, 0.0)
        for pid, used in self.cpu.items():
            totals[self.kind[pid]] += used
        return totals


def run_batch(folder: Path, out: Path, jobs: int, code: Path) -> dict[str, float]:
    """One batch's CPU seconds by kind, and "total" (exact: rusage of all reaped)."""
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "grader", "batch", str(folder), "--lab", "tree", "--seed", str(SEED)]
    process = subprocess.Popen(
        [*command, "--out", str(out), "--jobs", str(jobs)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=code,
        env=ENV,
    )
    sampler = Sampler(process.pid)
    total = 0.0
    reaped_batch = False
    while not reaped_batch:
        sampler.sample()
        time.sleep(0.02)
        total, reaped_batch = _reap(total, process.pid, reaped_batch)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the orphans (zygotes) die with their grader: reap them
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            total += usage.ru_utime + usage.ru_stime
        else:
            time.sleep(0.02)
    stderr = process.stderr.read() if process.stderr else b""
    if process.returncode not in (0, 1, None) and b"Traceback" in stderr:
        raise SystemExit(stderr.decode()[-2000:])
    split = sampler.by_kind()
    split["students"] = max(0.0, total - split["batch"] - split["graders"] - split["zygotes"])
    split["total"] = total
    return split


def _reap(total: float, root: int, reaped_root: bool) -> tuple[float, bool]:
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return total, True
        if not pid:
            return total, reaped_root
        total += usage.ru_utime + usage.ru_stime
        if pid == root:
            reaped_root = True


def fit(sizes: list[int], values: list[float]) -> tuple[float, float]:
    """Least squares: (intercept, slope); with one size, (0, the CPU per submission)."""
    mean_x, mean_y = statistics.fmean(sizes), statistics.fmean(values)
    sxx = sum((x - mean_x) ** 2 for x in sizes)
    if not sxx:
        return 0.0, mean_y / mean_x
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(sizes, values)) / sxx
    return mean_y - slope * mean_x, slope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,40,160")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--base", type=Path, help="another checkout's code, measured in the same rounds")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    codes = {"this": PROJECT} | ({"base": args.base.resolve()} if args.base else {})
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="s32-batch-cpu-") as scratch:
        root = Path(scratch)
        folders = {}
        for size in sizes:
            (root / str(size)).mkdir()
            folders[size] = class_folders(root / str(size), size)["py"]
        results: dict[str, dict[int, list[dict[str, float]]]] = {name: {s: [] for s in sizes} for name in codes}
        for code in codes.values():  # warm-up (compiled modules, file caches)
            run_batch(folders[sizes[0]], root / "out", args.jobs, code)
        for _ in range(args.rounds):
            for size in sizes:
                for name, code in codes.items():
                    results[name][size].append(run_batch(folders[size], root / "out", args.jobs, code))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    for name, by_size in results.items():
        print(f"\n{name} ({codes[name]}), {args.jobs} jobs, CPU seconds per run (medians of {args.rounds}):")
        print("  " + "kind".ljust(10) + "".join(f"{size:>9}" for size in sizes) + "   per run   per submission")
        for kind in (*KINDS, "total"):
            medians = [statistics.median(r[kind] for r in by_size[size]) for size in sizes]
            intercept, slope = fit(sizes, medians)
            row = "".join(f"{m:9.3f}" for m in medians)
            print(f"  {kind.ljust(10)}{row}   {intercept:7.3f} s  {slope * 1000:8.1f} ms")
    if "base" in results:
        print("\nthis / base, total CPU per round (same round, moments apart):")
        for size in sizes:
            pairs = zip(results["this"][size], results["base"][size])
            print(f"  {size:>5}: " + ", ".join(f"{a['total'] / b['total']:.2f}x" for a, b in pairs))


if __name__ == "__main__":
    main()

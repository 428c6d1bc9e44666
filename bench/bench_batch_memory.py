"""Does a batch's memory grow with the class? `abgrade batch --jobs 2` over classes of
tiny `.py` submissions of the tree lab (copies of the reference solution and of the
fixture bugs, one file each), sampling every 50 ms the resident memory of the batch's
grader processes (the batch process and its descendants that run as this user, but not the
forks of a worker zygote: those are students' processes, some still running as this user
before their uid switch, and the PID namespace's waiter for good; how many are alive at a
sample is chance, and a longer run catches more of them at once): the largest single
process, the sum of them all (RSS: a zygote's forks count every page they share with it
again) and their proportional sum (PSS: shared pages counted once), each at its peak, and
the wall time; and, as before, the summed RSS with the zygotes' forks. Goal: the largest under 100 MB, and
the summed peak the same within 10% at the smallest and the largest class.

    python bench/bench_batch_memory.py [--sizes 100,10000] [--jobs 2]

The largest class takes long (10,000 submissions: about 20 minutes on 2 cores); run it once.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))

from rounds import ENV, tree_class  # noqa: E402  (bench/rounds.py)

SOURCES = tree_class(correct=False)  # the course's solution and the fixed buggy files


def proportional(pid: int) -> int:
    """The process's proportional set size (its resident pages, each shared page divided
    among the processes that share it), in bytes."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


ZYGOTE_MARK = b"PR_SET_CHILD_SUBREAPER"  # in a zygote's program (sandbox/zygote_process.py), on its command line


def is_zygote(pid: int) -> bool:
    """Whether the process runs a zygote's program: a zygote, or one of its forks (same
    command line), which are student processes not yet (or never, the PID namespace's
    waiter) switched to a student's uid."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return ZYGOTE_MARK in handle.read()
    except OSError:
        return False


def memory(root: int) -> tuple[int, int, int, int]:
    """(largest RSS, summed RSS, summed PSS, summed RSS of all) in bytes: the first three
    of the grader's own processes (`root`, its descendants that run as this user, the
    zygotes, but not the zygotes' forks: those are students' processes, and how many of
    them are alive at a sample is chance); the last of every descendant of this user."""
    parent, rss, uid = {}, {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as handle:
                fields = dict(line.split(b":", 1) for line in handle if b":" in line)
            parent[int(name)] = int(fields[b"PPid"])
            rss[int(name)] = int(fields.get(b"VmRSS", b"0 kB").split()[0]) * 1024
            uid[int(name)] = int(fields[b"Uid"].split()[0])
        except (OSError, ValueError, KeyError):
            continue
    tree, added = {root}, True
    while added:
        new = {pid for pid, ppid in parent.items() if ppid in tree and pid not in tree}
        tree |= new
        added = bool(new)
    every = [pid for pid in tree if uid.get(pid) == os.getuid()]
    zygotes = {pid for pid in every if is_zygote(pid)}
    students = {pid for pid in every if parent.get(pid) in zygotes}  # one was caught with an empty command line
    grown, added = set(students), True
    while added:  # and what those forks started
        new = {pid for pid in every if parent.get(pid) in grown and pid not in grown}
        grown |= new
        added = bool(new)
    mine = [pid for pid in every if pid not in grown]
    sizes = [rss.get(pid, 0) for pid in mine]
    return max(sizes, default=0), sum(sizes), sum(map(proportional, mine)), sum(rss.get(pid, 0) for pid in every)


def one_class(size: int, jobs: int, root: Path) -> tuple[int, int, int, int, float]:
    folder = root / f"class-{size}"
    folder.mkdir()
    for number in range(size):
        source = SOURCES[number % len(SOURCES)]
        shutil.copyfile(source, folder / f"s{number:05d}_{source.stem}.py")
    out = root / f"out-{size}"
    log = (root / f"batch-{size}.log").open("w+")  # its progress lines: a pipe would fill and stop it
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "grader", "batch", str(folder), "--lab", "tree", "--seed", "1", "--jobs", str(jobs)]
        + ["--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
        cwd=PROJECT,
        env=ENV,
    )
    largest = summed = shared_once = everything = 0
    while process.poll() is None:
        one, total, proportionally, every = memory(process.pid)
        largest, summed, shared_once = max(largest, one), max(summed, total), max(shared_once, proportionally)
        everything = max(everything, every)
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    log.seek(0)
    said = log.read()
    log.close()
    if process.returncode not in (0, 1) or not (out / "grades.csv").exists():
        raise SystemExit(f"abgrade batch failed (exit code {process.returncode}):\n{said[-2000:]}")
    rows = (out / "grades.csv").read_text().count("\n") - 1
    if rows != size:
        raise SystemExit(f"grades.csv has {rows} rows for {size} submissions")
    shutil.rmtree(folder)
    shutil.rmtree(out)
    return largest, summed, shared_once, everything, seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,10000")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="abgrade-bench-memory-"))
    loads = [os.getloadavg()[0]]
    results = {}
    try:
        for size in sizes:
            results[size] = one_class(size, args.jobs, root)
            loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(
        f"abgrade batch --jobs {args.jobs}, tiny .py submissions of the tree lab; "
        f"load average {min(loads):.1f}-{max(loads):.1f}"
    )
    print(
        f"  {'submissions':>11} {'largest process':>16} {'summed RSS':>11} {'summed PSS':>11} "
        f"{'with students':>14} {'wall':>9} {'per min':>8}"
    )
    for size, (largest, summed, shared_once, everything, seconds) in results.items():
        print(
            f"  {size:11d} {largest / 2**20:13.1f} MB {summed / 2**20:8.1f} MB {shared_once / 2**20:8.1f} MB "
            f"{everything / 2**20:11.1f} MB {seconds:8.1f}s {size * 60 / seconds:8.1f}"
        )
    first, last = results[sizes[0]], results[sizes[-1]]
    print(
        f"  peaks at {sizes[-1]} over {sizes[0]}: summed RSS {last[1] / first[1]:.3f}x, summed PSS "
        f"{last[2] / first[2]:.3f}x (goal: within 10%); largest process "
        f"{max(r[0] for r in results.values()) / 2**20:.1f} MB (goal: < 100 MB); with the zygotes' forks "
        f"(students' processes before their uid switch) {last[3] / first[3]:.3f}x"
    )


if __name__ == "__main__":
    main()

"""Is a `.py` batch bound by CPU or by its chains' waits? `abgrade batch` of the tree lab
over N submissions (as bench_batch.py makes them) and the bare pool of `python -B` runs
over the same files, interleaved, each sampled every few milliseconds: at each sample, how
many threads of the run's process tree (the batch process, its grader processes, their
zygotes and students; or the pool and its interpreters) are running or waiting for a core
(state R). On an idle machine of C cores, a sample with R < C leaves C - R cores idle for
want of work; so the mean of max(0, C - R) / C over the samples is the share of the cores
the run leaves idle, whatever else the machine runs (on a busy machine each state lasts
longer, but a run's states are stretched alike; the waits for a core then count as R, so
the share is a lower bound). Also printed: each kind of process's share of the samples in
which it had a thread in R, and the share of the run's first and last phases (before the
first student, after the last).

This process becomes a child subreaper, so the zygotes (orphaned when their grader process
exits) and the students stay in the sampled tree.

    python bench/bench_batch_idle.py [--submissions 40] [--jobs 2] [--rounds 2] [--cores 2]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT))

from bench_batch import SEED, class_folders  # noqa: E402
from rounds import ENV  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36
STUDENT_UIDS = range(61000, 61256)
SAMPLE_SECONDS = 0.003


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return None
    return int(text[text.rindex(b")") + 2 :].split()[1])


def _running_threads(pid: int) -> int:
    count = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            continue
        if text[text.rindex(b")") + 2 : text.rindex(b")") + 3] == b"R":
            count += 1
    return count


def _kind(pid: int, root: int, parents: dict[int, int]) -> str:
    if pid == root:
        return "batch"
    try:
        uid = os.stat(f"/proc/{pid}").st_uid
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "gone"
    if uid in STUDENT_UIDS or b"bare_tree_run" in cmdline:
        return "students"
    if parents.get(pid) == root:
        return "graders"
    return "zygotes"


class Sampler:
    """The run's tree found by parent links (new pids read once each), its R threads counted."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.parents: dict[int, int] = {}
        self.members: dict[int, str] = {root: "batch"}
        self.seen: set[int] = set()
        self.samples: list[tuple[int, frozenset[str]]] = []

    def sample(self) -> None:
        pids = {int(name) for name in os.listdir("/proc") if name.isdigit()}
        for pid in pids - self.seen:
            parent = _parent(pid)
            if parent is not None:
                self.parents[pid] = parent
        self.seen = pids
        for pid in pids:
            if pid not in self.members and self._in_tree(pid):
                self.members[pid] = _kind(pid, self.root, self.parents)
        for pid, kind in list(self.members.items()):
            if pid not in pids:
                del self.members[pid]
            elif kind == "zygotes":  # a zygote's fork is a student once it has switched to its uid
                self.members[pid] = _kind(pid, self.root, self.parents)
        running = 0
        kinds = set()
        for pid, kind in self.members.items():
            threads = _running_threads(pid)
            if threads:
                running += threads
                kinds.add(kind)
        self.samples.append((running, frozenset(kinds)))

    def _in_tree(self, pid: int) -> bool:
        hops = 0
        while pid in self.parents and hops < 16:
            pid = self.parents[pid]
            if pid == self.root:
                return True
            hops += 1
        return False


def sampled(command: list[str], cwd: Path) -> tuple[float, Sampler]:
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=ENV)
    sampler = Sampler(process.pid)
    while process.poll() is None:
        sampler.sample()
        time.sleep(SAMPLE_SECONDS)
    seconds = time.perf_counter() - started
    while True:  # the orphans (zygotes) die with their grader: reap them
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if not pid:
            time.sleep(0.01)
    if process.returncode not in (0, 1):
        raise SystemExit((process.stderr.read() if process.stderr else b"").decode()[-2000:])
    return seconds, sampler


def idle_share(samples: list[tuple[int, frozenset[str]]], cores: int) -> float:
    """The mean share of `cores` no thread of the run wanted, over the samples."""
    if not samples:
        return 0.0
    return statistics.fmean(max(0, cores - running) / cores for running, _ in samples)


def report(label: str, seconds: float, sampler: Sampler, cores: int) -> dict[str, float]:
    samples = sampler.samples
    with_student = [i for i, (_, kinds) in enumerate(samples) if "students" in kinds]
    first, last = (with_student[0], with_student[-1]) if with_student else (0, len(samples) - 1)
    middle = samples[first : last + 1]
    histogram = Counter(min(running, cores) for running, _ in samples)
    kinds = Counter(kind for _, found in samples for kind in found)
    line = {
        "seconds": seconds,
        "idle": idle_share(samples, cores),
        "idle between the first and the last student": idle_share(middle, cores),
        "share before the first student": first / max(1, len(samples)),
        "share after the last student": (len(samples) - 1 - last) / max(1, len(samples)),
    }
    for running in range(cores + 1):
        line[f"samples with {running}{'+' if running == cores else ''} in R"] = histogram[running] / len(samples)
    for kind in ("batch", "graders", "zygotes", "students"):
        line[f"samples with a {kind} thread in R"] = kinds[kind] / len(samples)
    print(
        f"  {label}: {seconds:.2f} s, {len(samples)} samples, " + json.dumps({k: round(v, 3) for k, v in line.items()})
    )
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    load = os.getloadavg()[0]
    root = Path(tempfile.mkdtemp(prefix="abgrade-bench-idle-"))
    results: dict[str, list[dict[str, float]]] = {}
    try:
        folder = class_folders(root, args.submissions)["py"]
        bare = root / "bare"
        shutil.copytree(folder, bare)
        cases = root / "cases.json"
        sys.path.insert(0, str(HERE))
        from bench_batch import get_lab, load_spec, spec_path

        cases.write_text(json.dumps([p.request for p in get_lab("tree").plans(load_spec(spec_path("tree")), SEED)]))
        out = root / "out"
        contenders = {
            f"abgrade batch, {args.jobs} jobs": [
                sys.executable, "-m", "grader", "batch", str(folder), "--lab", "tree", "--seed", str(SEED),
                "--out", str(out), "--jobs", str(args.jobs),
            ],
            f"bare python pool, {args.jobs}": [
                sys.executable, "-c",
                "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; import bench_batch as b; "
                "b.bare_pool('py', Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))",
                str(HERE), str(bare), str(args.jobs), str(cases),
            ],
        }  # fmt: skip
        for round_ in range(args.rounds):
            print(f"round {round_ + 1}")
            for label, command in contenders.items():
                shutil.rmtree(out, ignore_errors=True)
                seconds, sampler = sampled(command, PROJECT)
                results.setdefault(label, []).append(report(label, seconds, sampler, args.cores))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(
        f"\n{args.submissions} submissions, {args.rounds} rounds, medians; load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end"
    )
    for label, lines in results.items():
        print(f"  {label}")
        for key in lines[0]:
            print(f"    {key:<48}{statistics.median(line[key] for line in lines):8.3f}")


if __name__ == "__main__":
    main()

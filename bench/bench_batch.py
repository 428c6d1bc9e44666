"""Batch grading throughput: `abgrade batch` over 20 submissions of the tree lab
(specs/tree.yaml), with 1 and with 2 workers, for `.py` files and for notebooks, in
submissions per minute, against a bare pool that only runs the same files:

- notebooks: a `multiprocessing.Pool` of N processes that execute each notebook with
  nbclient (`NotebookClient(nb).execute()`) and nothing else: no sandbox, no observer,
  no cases, no judging, no gradebook (errors allowed, as abgrade runs every cell);
- `.py`: a `multiprocessing.Pool` of N processes that each start a plain Python process
  per file making the same calls as the grader (bench/bare_tree_run.py).

The batch is timed as a user runs it (`python -m grader batch`, a fresh output folder,
gradebook and exports included); the bare pools run inside this process, so they don't
even pay an interpreter start. Goals: the batch no slower than the bare nbclient pool,
and 2 workers at least 1.6x one.

    python bench/bench_batch.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
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

from grader.labs import get_lab  # noqa: E402
from grader.spec import load_spec, spec_path  # noqa: E402
from tests.notebook_builder import notebook_from_py  # noqa: E402

SUBMISSIONS = 20
SEED = 1
SOURCES = [
    PROJECT / "reference" / "solutions" / "tree.py",
    *sorted((PROJECT / "tests" / "fixtures" / "tree").glob("correct_*.py")),
    *sorted((PROJECT / "tests" / "fixtures" / "tree").glob("bug_*.py")),
]


def class_folders(root: Path) -> dict[str, Path]:
    """Two class folders of SUBMISSIONS students each: `.py` files and their notebooks."""
    folders = {"py": root / "py", "ipynb": root / "ipynb"}
    for folder in folders.values():
        folder.mkdir()
    for number in range(SUBMISSIONS):
        source = SOURCES[number % len(SOURCES)]
        name = f"s{number:02d}_{source.stem}"
        shutil.copyfile(source, folders["py"] / f"{name}.py")
        notebook_from_py(source, folders["ipynb"] / f"{name}.ipynb")
    return folders


def execute_notebook(path: Path) -> None:
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as workdir:
        nbclient.NotebookClient(
            notebook, kernel_name="python3", timeout=60, allow_errors=True, resources={"metadata": {"path": workdir}}
        ).execute()


def run_python(arguments: tuple[Path, Path]) -> None:
    cases, path = arguments
    subprocess.run(
        [sys.executable, str(HERE / "bare_tree_run.py"), str(cases), str(path)], capture_output=True, check=False
    )


def quiet() -> None:
    """Pool initializer: kernels inherit stderr and warn about TCP on every start."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)


def bare_pool(kind: str, folder: Path, workers: int, cases: Path) -> float:
    files = sorted(folder.iterdir())
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers, initializer=quiet) as pool:
        if kind == "ipynb":
            pool.map(execute_notebook, files, chunksize=1)
        else:
            pool.map(run_python, [(cases, f) for f in files], chunksize=1)
    return time.perf_counter() - started


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


PEAKS: dict[tuple[str, int], list[int]] = {}


def abgrade_batch(folder: Path, workers: int, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "batch",
            str(folder),
            "--lab",
            "tree",
            "--jobs",
            str(workers),
            "--seed",
            str(SEED),
            "--out",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=PROJECT,
    )
    peak = 0
    while process.poll() is None:
        peak = max(peak, grader_memory(process.pid))
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    PEAKS.setdefault((folder.name, workers), []).append(peak)
    if process.returncode != 0:
        raise SystemExit(f"abgrade batch failed:\n{process.stderr.read()[-2000:]}")
    return seconds


def per_minute(seconds: float) -> float:
    return SUBMISSIONS * 60 / seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3, help="median of this many runs of each configuration")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="abgrade-bench-"))
    folders = class_folders(root)
    cases = root / "cases.json"
    cases.write_text(json.dumps([p.request for p in get_lab("tree").plans(load_spec(spec_path("tree")), SEED)]))
    rows = []
    for kind in ("py", "ipynb"):
        for workers in (1, 2):
            batch, bare = [], []
            for _ in range(args.runs):  # interleaved, so that a busy moment hits both alike
                batch.append(abgrade_batch(folders[kind], workers, root / "out"))
                bare.append(bare_pool(kind, folders[kind], workers, cases))
            rows.append((kind, workers, statistics.median(batch), statistics.median(bare)))
    shutil.rmtree(root, ignore_errors=True)

    print(
        f"{SUBMISSIONS} submissions of the tree lab (specs/tree.yaml), median of {args.runs} runs, "
        f"submissions per minute (higher is better)"
    )
    print(f"  {'kind':<8}{'workers':>8}{'abgrade batch':>16}{'bare pool':>12}{'batch speed':>13}")
    for kind, workers, batch, bare in rows:
        print(f"  {'.' + kind:<8}{workers:>8}{per_minute(batch):>16.1f}{per_minute(bare):>12.1f}{bare / batch:>12.2f}x")
    for kind in ("py", "ipynb"):
        one, two = (batch for k, _, batch, _ in rows if k == kind)
        print(f"  .{kind}: 2 workers are {one / two:.2f}x one (goal: >= 1.6x)")
    for (kind, workers), peaks in sorted(PEAKS.items()):
        print(
            f"  .{kind}, {workers} workers: peak resident memory of all grader processes "
            f"{max(peaks) / 2**20:.0f} MB (goal for notebooks with 2 workers: < 1024 MB)"
        )
    print("  batch speed: the batch's rate over the bare pool's (>= 1.00x: no slower); bare pool: nbclient")
    print("  execute for notebooks, a plain python process making the grader's calls for .py")


if __name__ == "__main__":
    main()

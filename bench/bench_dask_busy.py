"""Where a Dask run's time goes against the local pool's, the executors alone (issue 26,
goal 5): the tree lab's GradeTask over N `.py` submissions through `LocalPool(2).run` and
through `DaskPool.run` on a local cluster of 2 workers (bench_batch.py's, with the settings
the README advises), interleaved, without the batch's gradebook, feedback or exports (the
results are only counted), so that what differs is the executor's:

- `wall`: the run, from the call to its return (the local pool's grader processes start in
  it; the Dask connection is made before, once, as a batch makes it before its first task);
- `graded`: the gradings' own time summed (each result's `seconds`, as the worker measured
  it) over the 2 workers: how long a worker was busy grading, on average;
- `gap`: wall less graded, the time a worker was not grading: start-up, the hand-outs
  between gradings, and the tail (the last gradings on one worker while the other waits);
- `tail`: from the second-to-last result to the last (one worker idle at the end);
- `first`: when the first result came.

A Dask grading that is slower than a local one shows in `graded`; a Dask worker left
waiting shows in `gap`. Min / median / max over the rounds, the load average before and
after.

    python bench/bench_dask_busy.py [--submissions 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_batch import LocalCluster  # noqa: E402
from rounds import tree_class  # noqa: E402

from grader.batch.dask_pool import connect  # noqa: E402
from grader.batch.executor import Job, JobResult  # noqa: E402
from grader.batch.pool import LocalPool  # noqa: E402
from grader.batch.task import GradeTask  # noqa: E402
from grader.seeding import Seed  # noqa: E402
from grader.spec import load_spec, spec_path  # noqa: E402


def make_class(folder: Path, count: int) -> list[Path]:
    sources = tree_class()
    paths = []
    for number in range(count):
        source = sources[number % len(sources)]
        path = folder / f"s{number:03d}_{source.stem}.py"
        shutil.copyfile(source, path)
        paths.append(path)
    return paths


def one_run(run: Callable[..., None], paths: list[Path], scratch: Path) -> dict[str, float]:
    task = GradeTask("tree", load_spec(spec_path("tree")), Seed(1, "bench"), temp_root=scratch)
    arrivals: list[float] = []
    graded: list[float] = []

    def on_result(result: JobResult) -> None:
        if result.failure is not None:
            raise SystemExit(f"{result.job.path.name}: {result.failure}")
        arrivals.append(time.monotonic())
        graded.append(result.seconds)

    jobs = [Job(path.name, path) for path in paths]
    started = time.monotonic()
    run(jobs, task, 60.0, on_result, lambda running: None)
    wall = time.monotonic() - started
    busy = sum(graded) / 2
    return {
        "wall": wall,
        "graded": busy,
        "gap": wall - busy,
        "tail": arrivals[-1] - arrivals[-2],
        "first": arrivals[0] - started,
    }


def spread(values: list[float]) -> str:
    return f"{min(values):6.2f} {statistics.median(values):6.2f} {max(values):6.2f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-dask-busy-"))
    print(f"load before: {os.getloadavg()[0]:.1f}", flush=True)
    try:
        (root / "class").mkdir()
        paths = make_class(root / "class", options.submissions)
        (root / "cluster").mkdir()
        cluster = LocalCluster(root / "cluster")
        try:
            pool = connect(cluster.address)
            figures: dict[str, list[dict[str, float]]] = {"local": [], "dask": []}
            try:
                for number in range(options.rounds):
                    for name, run in (("local", LocalPool(2).run), ("dask", pool.run)):
                        scratch = root / f"scratch-{name}-{number}"
                        scratch.mkdir()
                        figures[name].append(one_run(run, paths, scratch))
                        line = " ".join(f"{k} {v:.2f}" for k, v in figures[name][-1].items())
                        print(f"round {number + 1} {name:5} {line} (load {os.getloadavg()[0]:.1f})", flush=True)
            finally:
                pool.close()
        finally:
            cluster.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"load after: {os.getloadavg()[0]:.1f}")
    print(f"{options.submissions} submissions, {options.rounds} rounds, seconds min / median / max")
    for name, runs in figures.items():
        for key in runs[0]:
            print(f"  {name:5} {key:6} {spread([run[key] for run in runs])}")
    print(f"  dask / local wall: {spread([d['wall'] / w['wall'] for d, w in zip(figures['dask'], figures['local'])])}")


if __name__ == "__main__":
    main()

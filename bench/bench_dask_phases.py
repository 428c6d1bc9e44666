"""Where a batch on Dask spends what the local pool doesn't (issue 26, goal 5), phase by
phase, on a local cluster of 2 workers (`dask scheduler` and two `dask worker --nthreads
1`, started once, as bench_batch.py does):

- per run, on the batch machine: `import distributed` (a `python -c` of it, less a bare
  interpreter's start), `connect()` split into the client's connection (Client()), the
  version and trust check (one `client.run` to every worker), and closing the client; and
  all of it in one `python -c` as a batch process pays it (the import as connect() does
  it, connect(), the close and the interpreter's exit), with each `python -c`'s CPU;
- per submission: a no-op task (`os.fspath` of the path) for N jobs through `DaskPool.run`
  (in chunks sized as a batch sizes them, and one job a task) and through the local pool
  of 2, divided by N: the scheduler's round trips, the task's serialisation and the
  result's way back, against a pipe to a forked process; and on Dask the CPU per job of
  this process (the batch's side), the scheduler and the workers;
- the run's task (the tree lab's GradeTask with its spec and lab): pickling it on the batch
  machine and unpickling it on a worker, which every submission paid before the task was
  shipped once per run (remote.py ShippedTask), and what it costs now per submission (its
  bytes, pickled again inside each task's arguments).

Each phase is measured `--rounds` times, interleaved (bench/rounds.py); min / median / max.

    python bench/bench_dask_phases.py [--rounds 5] [--jobs 20]
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT))

from bench_batch import CLUSTER_ROOTS, CpuWatch, LocalCluster  # noqa: E402  (bench/bench_batch.py)
from rounds import ENV, interleave, spread  # noqa: E402

from grader.batch.executor import Job  # noqa: E402
from grader.batch.pool import LocalPool  # noqa: E402
from grader.batch.remote import ShippedTask  # noqa: E402
from grader.batch.task import GradeTask  # noqa: E402
from grader.labs import get_lab  # noqa: E402
from grader.spec import load_spec, spec_path  # noqa: E402

CPU: dict[str, list[float]] = {}  # a `python -c`'s code -> its CPU (user + system) seconds, per round


def interpreter(code: str) -> float:
    """Wall seconds of `python -c code` (from PROJECT: this checkout's grader); its CPU
    goes to CPU[code]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV, cwd=PROJECT)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(code, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return seconds


JOB_CPU: dict[str, dict[str, list[float]]] = {}  # a per_job line -> process -> CPU ms per job, per round


def per_job(pool: object, jobs: list[Path], label: str = "", chunk: str | None = None) -> float:
    """Seconds per job of a no-op task run through `pool` (a DaskPool or a LocalPool);
    with `label`, the CPU per job of this process (the batch's side) and of the local
    cluster's scheduler and workers goes to JOB_CPU[label]. `chunk`: ABGRADE_DASK_CHUNK
    for the run (the most jobs per Dask task; unset, sized by the gradings' time)."""
    from grader.batch.dask_pool import CHUNK_ENV

    watches = {"scheduler": CpuWatch(CLUSTER_ROOTS[:1]), "workers": CpuWatch(CLUSTER_ROOTS[1:])}
    mine = time.process_time()
    if chunk is not None:
        os.environ[CHUNK_ENV] = chunk
    started = time.perf_counter()
    try:
        pool.run([Job(p.name, p) for p in jobs], os.fspath, 60.0, lambda result: None, lambda running: None)  # type: ignore[attr-defined]
    finally:
        os.environ.pop(CHUNK_ENV, None)
    seconds = (time.perf_counter() - started) / len(jobs)
    if label:
        used = {"this process": time.process_time() - mine, **{k: w.used() for k, w in watches.items()}}
        for part, cpu in used.items():
            JOB_CPU.setdefault(label, {}).setdefault(part, []).append(cpu / len(jobs))
    return seconds


def timed(call: object) -> float:
    started = time.perf_counter()
    call()  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=20, help="no-op jobs per round")
    args = parser.parse_args()
    from distributed import Client

    from grader.batch import dask_pool

    root = Path(tempfile.mkdtemp(prefix="abgrade-bench-dask-"))
    files = []
    for number in range(args.jobs):
        files.append(root / f"s{number:03d}.py")
        files[-1].write_text("pass\n")
    task = GradeTask("tree", load_spec(spec_path("tree")), 1, temp_root=root, lab=get_lab("tree"))
    shipped = ShippedTask.of("bench", task)
    load = os.getloadavg()[0]
    local = LocalPool(2)
    cluster = LocalCluster(root)
    try:
        pool = dask_pool.connect(cluster.address)
        setup = f"from grader.batch.dask_pool import connect; connect({cluster.address!r}).close()"

        def client_only() -> None:
            Client(cluster.address, timeout=30, set_as_default=False).close()

        times = interleave(
            {
                "python -c pass": lambda: interpreter("pass"),
                "python -c 'import distributed'": lambda: interpreter("import distributed"),
                "a batch process's Dask set-up (python -c)": lambda: interpreter(setup),
                "Client() and its close": lambda: timed(client_only),
                "connect() (client, version and trust check)": lambda: timed(
                    lambda: dask_pool.connect(cluster.address).close()
                ),
                "version and trust check (one client.run)": lambda: timed(
                    lambda: dask_pool._check_workers(pool.client, "")
                ),
                "per submission, no-op task on Dask": lambda: per_job(pool, files, "Dask, chunks"),
                "per submission, no-op task on Dask, one a task": lambda: per_job(pool, files, "Dask, one a task", "1"),
                "per submission, no-op task in the local pool": lambda: per_job(local, files),
                "the run's task: pickled (batch machine)": lambda: timed(lambda: ShippedTask.of("bench", task)),
                "the run's task: unpickled (worker)": lambda: timed(lambda: pickle.loads(shipped.data)),
                "the shipped task in a task's arguments": lambda: timed(lambda: pickle.loads(pickle.dumps(shipped))),
            },
            args.rounds,
        )
        pool.close()
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"Dask's costs, {args.rounds} interleaved rounds, load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end; min / median / max in ms")  # fmt: skip
    for name, seconds in times.items():
        print(f"  {name:<52}{spread(seconds, ' ms', scale=1000, digits=1)}")
    import_ms = [(a - b) * 1000 for a, b in zip(times["python -c 'import distributed'"], times["python -c pass"])]
    print(f"  {'import distributed alone':<52}{spread(import_ms, ' ms', digits=1)}")
    print(f"  (the run's task: {len(shipped.data):,} bytes pickled)")
    for label, parts in JOB_CPU.items():
        print(f"  CPU per no-op submission, {label}, min / median / max in ms:")
        for part, used in parts.items():
            print(f"    {part:<62}{spread(used, ' ms', scale=1000, digits=2)}")
    print("  CPU (user + system) of each `python -c`, min / median / max in ms:")
    for code, used in CPU.items():
        print(f"    {code[:60]:<62}{spread(used, ' ms', scale=1000, digits=1)}")


if __name__ == "__main__":
    main()

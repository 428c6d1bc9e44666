"""Grading one `.py` submission of the tree lab against specs/tree.yaml, end to end
(`abgrade grade`, a fresh process each time), against a bare Python process that makes
the same calls on the same cases (bench/bare_tree_run.py, `python -B`), two runs of
`python -c pass` one after the other (the floor of any grader that starts a second
interpreter for the student) and a hand-written pytest file for the same cases
(bench/tree_pytest_cases.py, filled in with the cases and the reference's answers; a plain
`python -B -m pytest`, no plugins, no project configuration). Rounds are interleaved
(bare, two starts, pytest, graded, ...); min / median / max of each, and of the ratios per
round. Goals (issue 26): within 2.0x two `python -c pass`, at most 0.7x the pytest file,
under 1 s. Besides the wall times, the CPU time of the grade's and the two starts' process
trees (and the base's grade), which a shared machine's load disturbs far less.

`--serve` adds the same grade through `abgrade serve` (grader/serve/): a server started
before the rounds (its start is not measured: a student iterating or a CI job pays it
once), the grade's client timed end to end; its CPU is the client's plus the forked
child's, read from the server's reaped children (/proc/PID/stat), plus, for a root server
that holds worker zygotes (grader/serve/zygotes.py), what its zygotes spent and reaped
meanwhile (the student's fork is the zygote's child, not the grade's). The zygotes' own
start (their imports, paid once per server) is printed apart.

`--python PATH` adds the same grade and the two starts run by another interpreter, e.g.
a venv's where abgrade was installed with a plain `pip install .` (not editable: an
editable install's import hook makes every start of that venv's Python slower, the
floor's included), with `-I` so that this checkout is not on its path. `--base DIR` adds the same grade by
the code in DIR (another commit, unpacked with `git archive COMMIT | tar -x -C DIR`), run
by the same interpreter from DIR, whose `grader` then comes first on the path: a change
measured against the code before it, in the same rounds.

    python bench/bench_tree.py [--rounds 11] [--serve] [--python PATH] [--base DIR] [SUBMISSION]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from math import inf
from pathlib import Path

from rounds import ENV, PROJECT, interleave, ratios, run, spread, timer  # bench/rounds.py, next to this script

from grader.labs import get_lab
from grader.spec import load_spec, spec_path

HERE = Path(__file__).resolve().parent
SEED = 1


class Recording(dict):
    """A tree dictionary that notes the keys the reference reads."""

    def __init__(self, items: dict, reads: list) -> None:
        super().__init__(items)
        self.reads = reads

    def __getitem__(self, key: object) -> object:
        self.reads.append(key)
        return super().__getitem__(key)


def pytest_file(requests: list[dict], folder: Path, submission: str) -> Path:
    """bench/tree_pytest_cases.py with the cases written in: each call's true value and,
    for a full window, the keys the reference reads in order."""
    loader = importlib.util.spec_from_file_location("reference_tree", PROJECT / "reference" / "solutions" / "tree.py")
    assert loader is not None and loader.loader is not None
    reference = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(reference)
    cases = []
    for request in requests:
        calls = []
        for node, alpha, beta, max_player in request["calls"]:
            reference.graph, reference.terminal_nodes = request["graph"], request["terminal_nodes"]
            value = reference.alphabeta(node, -inf, inf, max_player)
            reads: list = []
            reference.graph = Recording(request["graph"], reads)
            reference.terminal_nodes = Recording(request["terminal_nodes"], reads)
            reference.alphabeta(node, alpha, beta, max_player)
            calls.append((node, alpha, beta, max_player, value, reads))
        cases.append((request["graph"], request["terminal_nodes"], calls))
    text = (HERE / "tree_pytest_cases.py").read_text()
    text = text.replace("CASES: list = []", f"from math import inf  # noqa\n\nCASES = {cases!r}", 1)
    text = text.replace('SUBMISSION = ""', f"SUBMISSION = {str(Path(submission).resolve())!r}", 1)
    path = folder / "test_tree_cases.py"
    path.write_text(text)
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("submission", nargs="?", default=str(HERE.parent / "reference" / "solutions" / "tree.py"))
    parser.add_argument("--rounds", "--runs", type=int, default=11)
    parser.add_argument("--python", help="another interpreter with abgrade installed: its grade and two starts too")
    parser.add_argument("--base", type=Path, help="a folder with another commit's code: its grade too")
    parser.add_argument("--serve", action="store_true", help="the same grade through a running `abgrade serve` too")
    args = parser.parse_args()
    ENV["ABGRADE_SERVER"] = "0"  # the cold contenders never meet a server (--serve's has its own)
    plans = get_lab("tree").plans(load_spec(spec_path("tree")), SEED)
    requests = [p.request for p in plans]
    calls = sum(len(r["calls"]) for r in requests)
    folder = Path(tempfile.mkdtemp(prefix="bench-tree-"))
    cases = folder / "cases.json"
    cases.write_text(json.dumps(requests))
    tests = pytest_file(requests, folder, args.submission)
    # a plain pytest: no plugins of this environment, no configuration of this project
    pytest_command = [sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull]
    pytest_command += ["--rootdir", str(folder), str(tests)]
    ENV["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    seconds, out = run(pytest_command)
    if "passed" not in out or "failed" in out:
        sys.exit(f"the pytest file does not pass on {args.submission}:\n{out}")
    start = [sys.executable, "-c", "pass"]
    grade = ["-m", "grader", "grade", str(Path(args.submission).resolve()), "--lab", "tree", "--seed", str(SEED), "-q"]
    cpu: dict[str, list[float]] = {}  # CPU seconds of the process tree, per run (warm-up first)
    contenders = {
        "bare": timer([sys.executable, "-B", str(HERE / "bare_tree_run.py"), str(cases), args.submission]),
        "two starts": _with_cpu(cpu, "two starts", lambda: run(start)[0] + run(start)[0]),
        "pytest": timer(pytest_command),
        "graded": _with_cpu(cpu, "graded", timer([sys.executable, *grade])),
    }
    if args.python:
        other_start = [args.python, "-I", "-c", "pass"]
        contenders["other two starts"] = lambda: run(other_start)[0] + run(other_start)[0]
        contenders["other graded"] = timer([args.python, "-I", *grade])
    if args.base:
        contenders["base graded"] = _with_cpu(
            cpu, "base graded", _timer_in(args.base.resolve(), [sys.executable, *grade])
        )
    server = None
    if args.serve:
        server = _Server([sys.executable, *grade])
        contenders["served"] = _with_cpu(cpu, "served", server.measure, lambda: server.child_cpu)
    try:
        times = interleave(contenders, args.rounds)
    finally:
        if server is not None:
            server.stop()
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    graded = times["graded"]
    print(f"tree lab, {len(requests)} requests, {calls} calls of alphabeta, {args.rounds} interleaved rounds")
    print(f"load average before / after: {LOAD_BEFORE} / {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"                            {'min':>6} {'median':>6} {'max':>6}")
    print(f"  bare python run           {spread(times['bare'], ' ms', 1000, 0)}")
    print(f"  two `python -c pass`      {spread(times['two starts'], ' ms', 1000, 0)}")
    print(f"  pytest file, same cases   {spread(times['pytest'], ' ms', 1000, 0)}")
    print(f"  abgrade grade             {spread(graded, ' ms', 1000, 0)}   (goal: < 1000 ms)")
    print(f"  graded / bare             {spread(ratios(graded, times['bare']), 'x')}")
    print(f"  graded / two starts       {spread(ratios(graded, times['two starts']), 'x')}   (goal: <= 2.0x)")
    print(f"  graded / pytest           {spread(ratios(graded, times['pytest']), 'x')}   (goal: <= 0.7x)")
    cpus = {name: values[-args.rounds :] for name, values in cpu.items()}  # the warm-up's left out
    print("  CPU time (user + sys of the whole process tree: the grader's and the student's processes):")
    print(f"  two `python -c pass`      {spread(cpus['two starts'], ' ms', 1000, 0)}")
    print(f"  abgrade grade             {spread(cpus['graded'], ' ms', 1000, 0)}")
    print(f"  graded / two starts       {spread(ratios(cpus['graded'], cpus['two starts']), 'x')}")
    if server is not None:
        served = times["served"]
        print(f"  abgrade grade, served     {spread(served, ' ms', 1000, 0)}   (a server started before the rounds)")
        print(f"  served / two starts       {spread(ratios(served, times['two starts']), 'x')}   (goal: <= 2.0x)")
        print(f"  served / graded           {spread(ratios(served, graded), 'x')}")
        print(f"  served / pytest           {spread(ratios(served, times['pytest']), 'x')}")
        print(f"  CPU: served (client+child){spread(cpus['served'], ' ms', 1000, 0)}")
        print(f"  CPU: of which the child   {spread(server.child_cpus[-args.rounds :], ' ms', 1000, 0)}")
        print(f"  CPU: served / two starts  {spread(ratios(cpus['served'], cpus['two starts']), 'x')}")
        print(f"  CPU: served / graded      {spread(ratios(cpus['served'], cpus['graded']), 'x')}")
        if server.zygotes:
            print(
                f"  worker zygotes' start CPU {1000 * (server.zygote_start or 0):.0f} ms (once per server, before the first grade)"
            )
    if args.python:
        other = times["other graded"]
        print(f"  {args.python}:")
        print(f"  two `python -I -c pass`   {spread(times['other two starts'], ' ms', 1000, 0)}")
        print(f"  abgrade grade (-I)        {spread(other, ' ms', 1000, 0)}")
        print(f"  graded / two starts       {spread(ratios(other, times['other two starts']), 'x')}")
        print(f"  graded / pytest above     {spread(ratios(other, times['pytest']), 'x')}")
    if args.base:
        base = times["base graded"]
        print(f"  {args.base}:")
        print(f"  abgrade grade (base)      {spread(base, ' ms', 1000, 0)}")
        print(f"  graded / base             {spread(ratios(graded, base), 'x')}   (this checkout's over the base's)")
        print(f"  base / two starts         {spread(ratios(base, times['two starts']), 'x')}")
        print(f"  base / pytest             {spread(ratios(base, times['pytest']), 'x')}")
        print(f"  CPU: abgrade grade (base) {spread(cpus['base graded'], ' ms', 1000, 0)}")
        print(f"  CPU: graded / base        {spread(ratios(cpus['graded'], cpus['base graded']), 'x')}")


def _with_cpu(
    cpu: dict[str, list[float]], name: str, measure: Callable[[], float], extra: Callable[[], float] = lambda: 0.0
) -> Callable[[], float]:
    """`measure`, also noting the CPU time its runs took (the children's user + sys time,
    which a process tree's waited-for descendants add to): on a shared machine the wall
    time mostly measures the others' load, the CPU time much less so."""

    def measured() -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds = measure()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        cpu.setdefault(name, []).append(spent + extra())
        return seconds

    return measured


def _timer_in(folder: Path, command: list[str]) -> Callable[[], float]:
    """A contender: one run of `command` from `folder` (its `grader` package first on the
    path), its wall seconds; stops the benchmark on a crash, as rounds.run does."""

    def measure() -> float:
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=folder, env=ENV, check=False)
        seconds = time.perf_counter() - start
        if done.returncode not in (0, 1) or "Traceback" in done.stderr:
            sys.exit(f"{' '.join(command[:4])} ... failed in {folder}:\n{done.stderr}")
        return seconds

    return measure


class _Server:
    """`abgrade serve` for the --serve contender: started (detached) before the rounds in a
    folder of its own, with the very environment and folder its clients run in."""

    def __init__(self, command: list[str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="bench-serve-", dir="/tmp")
        self.env = {**ENV, "ABGRADE_SERVER": "1", "ABGRADE_SERVE_DIR": self.folder}
        self.command = command
        started = subprocess.run(
            [sys.executable, "-m", "grader", "serve", "--detach", "--idle", "3600"],
            capture_output=True,
            text=True,
            cwd=PROJECT,
            env=self.env,
            check=False,
        )
        if started.returncode != 0:
            sys.exit(f"abgrade serve did not start: {started.stderr}")
        self.pid = int(started.stdout.split("(pid ")[1].split(";")[0])
        self.zygotes = self._children()  # the worker zygotes it started (a root server's), if any
        self.zygote_start: float | None = None  # their CPU up to the first grade: their imports
        self.child_cpu = 0.0
        self.child_cpus: list[float] = []  # per run, the warm-up's first

    def measure(self) -> float:
        """One grade through the server, its wall seconds; `child_cpu` is then the CPU
        seconds of the child that ran it (and its students), which the server reaped."""
        before = self._children_cpu()
        if self.zygote_start is None:
            self.zygote_start = self._zygotes_cpu()
        before += self._zygotes_cpu()
        start = time.perf_counter()
        done = subprocess.run(self.command, capture_output=True, text=True, cwd=PROJECT, env=self.env, check=False)
        seconds = time.perf_counter() - start
        if done.returncode not in (0, 1) or "Traceback" in done.stderr:
            sys.exit(f"the served grade failed:\n{done.stderr}")
        self.child_cpu = self._children_cpu(settled=True) + self._zygotes_cpu() - before
        self.child_cpus.append(self.child_cpu)
        return seconds

    def _children(self) -> set[int]:
        try:
            with open(f"/proc/{self.pid}/task/{self.pid}/children") as handle:
                return set(map(int, handle.read().split()))
        except OSError:
            return set()

    def _children_cpu(self, settled: bool = False) -> float:
        """The server's reaped children's user + sys seconds (once none but its zygotes is
        left running)."""
        end = time.monotonic() + 10
        while settled and time.monotonic() < end and self._children() - self.zygotes:
            time.sleep(0.005)
        return _cpu(self.pid, reaped=True)

    def _zygotes_cpu(self) -> float:
        """The zygotes' own user + sys seconds and their reaped forks' (the students')."""
        return sum(_cpu(pid, reaped=True) + _cpu(pid, reaped=False) for pid in self.zygotes)

    def stop(self) -> None:
        subprocess.run(
            [sys.executable, "-m", "grader", "serve", "--stop"],
            capture_output=True,
            cwd=PROJECT,
            env=self.env,
            check=False,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


def _cpu(pid: int, reaped: bool) -> float:
    """A process's user + sys seconds (`reaped`: its reaped children's instead); 0 when gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return 0.0
    first = 13 if reaped else 11
    return (int(fields[first]) + int(fields[first + 1])) / os.sysconf("SC_CLK_TCK")


LOAD_BEFORE = " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()

"""What a Dask worker runs for a chunk of jobs (`grade_chunk`: several submissions in
turn, one task of the scheduler's for all; dask_pool.py sizes them), each graded as
`grade_payload` grades one. The submission travels as its file name and bytes
(no shared file system is assumed): the worker writes it into a folder of its own, grades
it with the very task a local grader process runs (the same sandbox: a leased uid when the
worker is root, namespaces, cgroups), removes the folder and sends back the result. The
gradebook stays on the batch machine.

The run's task (its spec, seed and lab) travels pickled once per run (`ShippedTask`, made on
the batch machine), not once per submission: each worker process unpickles and prepares it
on its first grading of that run and keeps it, keyed by the run's secret id and the bytes'
digest, for the run's next submissions (`_prepared`): the lab is built, the spec read and
the worker zygote asked for once per run and worker, as in a local grader process. A later
run never finds an earlier run's task (a new key), and only the last RUNS_KEPT runs are
kept. The kept task lives in the worker process, which no student process shares (students
run in processes of their own, started from the zygotes, never forked from the worker).

Each job may carry the payload of the job the batch will send this worker next (its
`hint`: dask_pool.py gives every worker its own queue): the worker writes it into a folder
of its own while it grades the current one, and hands it to the task's look-ahead (the
local pool's NextJob question, answered here from the hint), so a notebook's kernel starts
while the current notebook runs, and a `.py` file's worker forks and confines itself once
the current student's processes are closed, as in a local grader process; the `.py` close's
second half (folder, uid) runs on a thread while the next job is graded. When that job
arrives it is graded in the session opened for it (matched by its key and its bytes); a
hint whose job went elsewhere (its worker's queue moved by the scheduler) is closed at the
worker's next grading. The batch tells every worker when its run ends (`end_run`): what the
run's task still holds (a session opened ahead, the last close-out) is closed then, and a
grading of another run closes it too (a batch killed before it could say so).

Before its first grading a worker checks that its students can't reach the cluster
(cluster_trust.py: at the `process` level, TLS that refuses strangers and a private key);
the batch asks every worker the same before it sends a task, so this catches a worker that
joined later, and it refuses to grade rather than hand the cluster to a student.

Importable without dask (dask_pool.py ships the function by reference; the worker imports
this module from its own abgrade)."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import hashlib
import importlib.metadata
import pickle
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cluster_trust import facts_from, gather_facts, worker_problem
from .scratch import make_run_folder, sweep_stale
from .task import GradeTask

# One grading at a time per worker process, whatever its --nthreads: a grading sets
# process-wide state (tempfile.tempdir points into its own job folder), as in a local
# grader process. A cluster grades in parallel with more worker processes, not threads.
_GRADING = threading.Lock()
_run_folder: Path | None = None
_facts: dict | None = None  # this worker's trust facts (cluster_trust.py), found once
RUNS_KEPT = 2  # prepared tasks kept per worker process: the run under way and one beside it
_prepared_tasks: dict[tuple[str, str], Callable[[Path], Any]] = {}  # (run, digest) -> prepared task
ENDED_RUN_SECONDS = 600.0  # how long end_run waits for a grading under way before it leaves the closing to the next
_frozen = False  # whether this worker process froze what it had before its first grading (_freeze_once)


class UntrustedWorker(RuntimeError):
    """This worker would let its students reach the cluster: it grades nothing."""


@dataclass(frozen=True)
class Payload:
    """One submission as it travels: its file name (kept: the module name and every
    message depend on it) and its bytes."""

    key: str  # the job's key, announced when the grading starts
    name: str
    data: bytes | None  # None: the batch machine could not read the file (it went since the scan)


@dataclass(frozen=True)
class Staged:
    """A hint's submission written here ahead of its job: its file, and the bytes it holds
    (its job is graded in it only when it brings the very same bytes)."""

    path: Path
    data: bytes


_staged: dict[str, Staged] = {}  # job key -> its submission, written ahead (the hint of the job before)


@dataclass(frozen=True)
class ShippedTask:
    """A run's task as it travels: pickled once on the batch machine (pickling a spec and a
    lab costs milliseconds of the batch machine's CPU per submission otherwise), with the
    run's secret id; `digest` names the bytes, so a worker never takes another task for it."""

    run: str
    data: bytes
    digest: str

    @classmethod
    def of(cls, run: str, task: Callable[[Path], Any]) -> ShippedTask:
        try:
            data = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError):
            data = b""
        if not data or b"__main__" in data:  # a closure, or a script's own class: by value, as dask does
            import cloudpickle

            data = cloudpickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
        return cls(run, data, hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class Reply:
    value: Any  # what the task returned (a GradeReport, or GradingFailed)
    seconds: float  # the grading's own time on the worker, as the local pool measures it


def worker_folder() -> Path:
    """This worker process's temporary folder (scratch.py: owned by its pid); the first
    call also removes the folders of worker processes that died (killed mid-grading)."""
    global _run_folder
    if _run_folder is None or not _run_folder.is_dir():
        sweep_stale()
        _run_folder = make_run_folder()
    return _run_folder


def grade_payload(
    task: ShippedTask | Callable[[Path], Any], payload: Payload, topic: str, hint: Payload | None = None
) -> Reply:
    """Grade one submission here with the run's task (shipped once per run, or given as it
    is: a test calling this directly), and with a shipped task, open `hint` (the job the
    batch sends this worker next) ahead as the task's look-ahead asks for it. Raises what
    the task raises (a machine problem), for the batch to retry, as a local grader process
    does."""
    with _GRADING:
        grade = _ready(task)
        return _grade_one(grade, payload, topic, hint, isinstance(task, ShippedTask))


@dataclass(frozen=True)
class Raised:
    """A grading of a chunk raised (a machine problem): what the local pool reports for a
    task that raises (the same text), for the batch to retry that submission after the
    local pool's delay. The chunk stops there and its later ones are not tried (outcome
    None): a worker whose grading raised may be in no state to grade, so they go back to
    the queue, their attempts untouched, and are sent again (to whichever worker has room),
    each counting only the attempts it was itself tried in."""

    failure: str  # "ExceptionType: message"
    seconds: float


def grade_chunk(
    task: ShippedTask, payloads: list[Payload], topic: str, hint: Payload | None = None
) -> list[Reply | Raised | None]:
    """Grade a chunk of submissions here in turn, with one task of the scheduler's for all
    of them (its per-task round trips paid once per chunk: dask_pool.py), each exactly as
    grade_payload grades one: announced as it starts, graded in the session opened ahead
    for it (each one's hint is the chunk's next, the last one's `hint`). One outcome per
    payload, in order: a Reply, a Raised where its grading raised, and None for those after
    a raise, never tried (the batch hands them out again, their attempts untouched).
    Raises before any grading when this worker must not grade or the task is damaged."""
    with _GRADING:
        grade = _ready(task)
        outcomes: list[Reply | Raised | None] = [None] * len(payloads)
        for number, payload in enumerate(payloads):
            following = payloads[number + 1] if number + 1 < len(payloads) else hint
            started = time.monotonic()
            try:
                outcomes[number] = _grade_one(grade, payload, topic, following, True)
            except Exception as exc:  # noqa: BLE001 - a machine problem: this submission is retried, as locally
                outcomes[number] = Raised(f"{type(exc).__name__}: {exc}", time.monotonic() - started)
                break
        return outcomes


def _ready(task: ShippedTask | Callable[[Path], Any]) -> Callable[[Path], Any]:
    """The run's task ready to grade here (under _GRADING), once this worker may grade."""
    problem = _trust_problem()
    if problem:
        raise UntrustedWorker(problem)
    if not isinstance(task, ShippedTask):
        return _for_this_worker(task, worker_folder())
    _close_other_runs(task.run)
    grade = _prepared(task)
    _freeze_once()
    return grade


def _grade_one(
    grade: Callable[[Path], Any], payload: Payload, topic: str, hint: Payload | None, shipped: bool
) -> Reply:
    """One submission with a ready task (under _GRADING): announced, its next one (`hint`)
    offered to the task's look-ahead when the task lasts the run (shipped), graded from its
    own bytes in a folder that is removed afterwards."""
    _announce(topic, payload.key)
    started = time.monotonic()
    look_ahead = getattr(grade, "look_ahead", None) if shipped else None
    if look_ahead is not None:  # the prepared task lasts the run: end_run closes what it keeps
        look_ahead(lambda: _stage(hint))
    path = _submission_file(payload)
    try:
        value = grade(path)
    finally:
        shutil.rmtree(path.parent, ignore_errors=True)
    return Reply(value, time.monotonic() - started)


def _freeze_once() -> None:
    """On a Dask worker, once per process: what it holds before its first grading (dask's
    and abgrade's modules, some 70,000 objects, alive for the process's life) is moved out
    of the cyclic collector's way, so that the full collections a grading's allocations set
    off walk only what came later (about 6% of the worker processes' CPU for 40 `.py`
    submissions at load 28). Once only: whatever becomes garbage among the frozen objects
    is never collected, so a long-lived worker must not freeze again for every run."""
    global _frozen
    if _frozen:
        return
    _frozen = True
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return  # not on a dask worker (a test calling grade_payload directly): nothing frozen
    gc.freeze()


def _submission_file(payload: Payload) -> Path:
    """The job's submission as a file in a folder of its own: the one written ahead for it
    when it brings the same bytes, else written now. Hints written for other jobs (sent
    elsewhere after all) are removed: their sessions, opened ahead, the task closes itself
    (GradeTask: an Ahead for another path is closed unused)."""
    staged = _staged.pop(payload.key, None)
    for other in list(_staged):
        shutil.rmtree(_staged.pop(other).path.parent, ignore_errors=True)
    if staged is not None and staged.data == payload.data and staged.path.is_file():
        return staged.path
    if staged is not None:
        shutil.rmtree(staged.path.parent, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix="s-", dir=worker_folder()))
    path = folder / Path(payload.name).name
    if payload.data is not None:  # else graded as missing, as a local grader process grades a file gone
        path.write_bytes(payload.data)
    return path


def _stage(hint: Payload | None) -> Path | None:
    """The look-ahead's answer: the next job's submission, written now (None: no hint)."""
    if hint is None or hint.data is None:
        return None  # nothing to open ahead
    folder = Path(tempfile.mkdtemp(prefix="s-", dir=worker_folder()))
    path = folder / Path(hint.name).name
    path.write_bytes(hint.data)
    _staged[hint.key] = Staged(path, hint.data)
    return path


async def end_run(run: str) -> None:
    """The batch's run is over (`client.run(end_run, run, wait=False)`): close what its task
    keeps here once the grading under way, if any, is done (off the worker's event loop)."""
    await asyncio.get_running_loop().run_in_executor(None, _end_run, run)


def _end_run(run: str) -> None:
    if not _GRADING.acquire(timeout=ENDED_RUN_SECONDS):
        return  # still grading: that grading's run, or the next, closes it (_close_other_runs)
    try:
        for key in [key for key in _prepared_tasks if key[0] == run]:
            _close(_prepared_tasks[key])
        for other in list(_staged):
            shutil.rmtree(_staged.pop(other).path.parent, ignore_errors=True)
    finally:
        _GRADING.release()


def _close_other_runs(run: str) -> None:
    """What other runs' tasks still keep (a batch killed before its end_run): closed before
    this run grades here. The tasks themselves stay, for those runs' next submissions."""
    for key, task in _prepared_tasks.items():
        if key[0] != run:
            _close(task)


def _close(task: Callable[[Path], Any]) -> None:
    close = getattr(task, "close", None)
    if close is not None:
        close()


def _prepared(shipped: ShippedTask) -> Callable[[Path], Any]:
    """The run's task, ready in this worker process: unpickled and prepared on the run's
    first submission here, kept for its next ones (its lab loaded once: GradeTask keeps it).
    The oldest kept run is let go (and what it opened ahead closed) beyond RUNS_KEPT."""
    key = (shipped.run, shipped.digest)
    task = _prepared_tasks.get(key)
    if task is None or not _in_worker_folder(task):
        if hashlib.sha256(shipped.data).hexdigest() != shipped.digest:
            raise ValueError("the run's task arrived damaged (its digest differs)")
        task = _for_this_worker(pickle.loads(shipped.data), worker_folder())
        _prepared_tasks[key] = task
        while len(_prepared_tasks) > RUNS_KEPT:
            _forget(next(iter(_prepared_tasks)))
    return task


def _in_worker_folder(task: Callable[[Path], Any]) -> bool:
    """Whether a kept task still puts its job folders in this worker's folder (a folder
    removed under it is made again, and the task prepared again for the new one)."""
    return not isinstance(task, GradeTask) or task.temp_root == worker_folder()


def _forget(key: tuple[str, str]) -> None:
    _close(_prepared_tasks.pop(key))


def _for_this_worker(task: Callable[[Path], Any], folder: Path) -> Callable[[Path], Any]:
    """The batch machine's temporary folder means nothing here: the task's job folders go
    into this worker's own. The folders of the worker's TLS keys are hidden from its
    students too (namespaces level: a worker that is not root runs its students as its own
    user in their namespaces, where a key's mode alone wouldn't stop them; the process level
    relies on the key's mode and root, checked in cluster_trust.py)."""
    if not isinstance(task, GradeTask):
        return task
    return dataclasses.replace(task, temp_root=folder, hidden=(*task.hidden, *_secret_folders(folder)))


def _secret_folders(work: Path) -> tuple[Path, ...]:
    """The key folders to hide: at the namespaces level, those that hold neither the
    worker's work folders nor the interpreter (covering those would stop every grading)."""
    from ..sandbox.isolation import INTERPRETER_PATHS

    if _facts is None or _facts.get("level") != "namespaces":
        return ()
    needed = [str(work.resolve()), *INTERPRETER_PATHS]
    found = []
    for folder in _facts.get("key_folders", ()):
        inside = [p for p in needed if p == folder or p.startswith(folder.rstrip("/") + "/")]
        if not inside and Path(folder).is_dir():
            found.append(Path(folder))
    return tuple(found)


async def worker_facts(dask_worker: Any) -> dict:
    """What the batch asks every worker before its first task, in one `client.run`: how it
    isolates students (kept for this worker's own check before each grading) and which
    abgrade it runs (`abgrade`, beside the facts)."""
    global _facts
    _facts = await gather_facts(dask_worker)
    return {**_facts, "abgrade": importlib.metadata.version("abgrade")}


def _trust_problem() -> str | None:
    """Why this worker must not grade (cluster_trust.py), or None; off a dask worker (a
    test calling grade_payload directly) there is no cluster to reach."""
    global _facts
    if _facts is None:
        try:
            from distributed import get_worker
            from distributed.utils import sync

            worker = get_worker()
        except (ImportError, ValueError):
            return None
        _facts = sync(worker.loop, gather_facts, worker)
    return worker_problem(facts_from(_facts))


def _announce(topic: str, key: str) -> None:
    """Tell the batch that this job has started, and where: its deadline and the progress
    line count from here, not from when it was queued."""
    try:
        from distributed import get_worker

        worker = get_worker()
        worker.log_event(topic, {"key": key, "worker": worker.address})
    except (ImportError, ValueError):
        pass  # not on a dask worker (a test calling this directly)

"""One submission's run: a private work folder, a worker that holds the submission
(a Python process for `.py`, a Jupyter kernel for `.ipynb`), and case requests under
per-case and per-submission time limits. A case that kills or hangs the worker costs
only that case: the next one gets a fresh worker.

Time limits are charged on the student process tree's own CPU time, each with a
wall-clock backstop (deadline.py): loading, each case, and the whole submission (the CPU
time of every worker it needed, from the moment it was handed the submission). Loading
that runs past its limit is interrupted, as a notebook cell is: the import gets a
KeyboardInterrupt and grading goes on with what it had defined by then; code that goes on
after the interrupt is stopped, and then loading has failed (DESIGN.md)."""

from __future__ import annotations

import importlib.util
import marshal
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..paths import PRIVATE_DIRS
from ..spec.model import Limits
from . import acl, first_spawn
from .channel import Timeout, WorkerFailure
from .cpu_clock import CpuMeter
from .deadline import Deadline, Limit, backstop, backstop_text, cpu_limit_text
from .first_spawn import STUDENT_GID, Spawned
from .identity import StudentIdentity, hand_over, lease
from .isolation import NAMESPACES, Isolation, detect_isolation, forget_isolation
from .limits import rlimits
from .worker import Worker, site_paths

_PROBE_DIR = Path(__file__).resolve().parent.parent / "probe"


_COMPILED: dict[tuple[str, str], str] = {}


def _compiled_hex(name: str, source: str) -> str:
    """One shipped module's code as the student's interpreter would compile it (the same
    file name, no inherited __future__ flags, no -O), marshalled (the same interpreter
    unmarshals it), as hex: the setup travels as JSON, and bytes.fromhex needs no import.
    Once per grader process, and kept in the per-user cache (compiling the observer and its
    runtime cost a first-spawned grade about 2 ms while its worker was waiting for them)."""
    key = (name, source)
    found = _COMPILED.get(key)
    if found is None:
        found = _COMPILED[key] = _stored_or_compiled(name, source)
    return found


def _stored_or_compiled(name: str, source: str) -> str:
    """_compiled_hex's value from the cache, keyed by the module's name and source and the
    interpreter (its version and path: marshal's format is the interpreter's own); else
    compiled and stored. The grader never loads it as code: it is shipped to the student's
    process, which could compile the same source itself."""
    from .. import cache
    from ..digests import sha256

    text = "\0".join((name, source, sys.version, sys.executable))
    entry = "observer-" + sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    stored = cache.read(entry)
    if isinstance(stored, str) and stored:
        try:
            bytes.fromhex(stored)
            return stored
        except ValueError:
            pass  # not what was written: compiled again below
    code = compile(source, f"<abgrade {name}>", "exec", dont_inherit=True, optimize=0)
    found = marshal.dumps(code).hex()
    cache.write(entry, found)
    return found


@dataclass(frozen=True)
class ProbeSetup:
    """What the lab's observer needs in the student process: its source file (shipped as
    text, from the lab's own folder), the API to check, and extra modules to ship."""

    handler: str  # the observer's module name without `_abgrade_`, e.g. "tree"
    api: dict[str, int]  # function name -> number of positional arguments
    observer: Path  # the observer's source file (a lab's observer.py)
    extra_modules: tuple[tuple[str, str], ...] = ()  # (module name, source) shipped too

    def modules(self) -> list[tuple[str, str]]:
        runtime = ("_abgrade_runtime", (_PROBE_DIR / "runtime.py").read_text())
        handler = (f"_abgrade_{self.handler}", self.observer.read_text())
        return [runtime, *self.extra_modules, handler]

    def compiled_modules(self) -> list[list[str]]:
        """modules() compiled here, for a `.py` worker (probe_install.py): [name, "", code as
        hex of its marshal]. The student process's start is a grade's critical path, and
        compiling the observer there cost it about 3 ms; the grader does it while it waits
        for the worker, once per grader process and source."""
        return [[name, "", _compiled_hex(name, source)] for name, source in self.modules()]

    def setup_message(
        self,
        limits: Limits,
        compiled: list[list[str]] | None = None,
        paths: list[str] | None = None,
        **extra: object,
    ) -> dict:
        """`paths`: the interpreter's site folders (worker.site_paths() by default)."""
        return {
            "site_paths": paths if paths is not None else site_paths(),
            "modules": compiled if compiled is not None else self.modules(),
            "handler": f"_abgrade_{self.handler}",
            "api": self.api,
            "recursion_limit": limits.recursion_limit,
            **extra,
        }


@dataclass
class LoadObservation:
    """What the observer saw while loading the submission."""

    api: dict[str, dict] = field(default_factory=dict)
    error: dict | None = None  # exception raised while loading (trimmed traceback)
    failure: WorkerFailure | None = None  # the process hung or died while loading
    problem: str | None = None  # the file itself is unusable (bad notebook, ...)
    notes: list[str] = field(default_factory=list)  # e.g. notebook cells that raised
    seconds: float = 0.0


class WorkerLike(Protocol):
    meter: CpuMeter  # the worker's process tree's CPU time

    @property
    def output_text(self) -> str: ...

    def request(self, message: dict, timeout: Timeout) -> dict | WorkerFailure: ...

    def cpu_used(self, reading: float | None = None) -> float: ...

    def close(self) -> None: ...


def module_name_for(path: Path, shipped: Sequence[str] = ()) -> str:
    """The submission's import name: its file name, unless that would shadow a module
    it may import itself (a student's `math.py` must still be able to import math, and a
    `nim.py` the game module `nim` a lab ships: `shipped`)."""
    stem = re.sub(r"\W", "_", path.stem)
    if not stem.isidentifier() or stem.startswith("_abgrade") or stem in sys.stdlib_module_names or stem in shipped:
        return "submission"
    if importlib.util.find_spec(stem) is not None:
        return "submission"
    return stem


SANDBOX_START_ATTEMPTS = 3
CONFINE_SECONDS = 20.0  # a loaded machine may be slow to start an interpreter; no student code runs yet
INTERRUPT_GRACE_SECONDS = 3.0  # CPU time code may go on after its interrupt before it is stopped


class WorkerStartError(RuntimeError):
    """The machine could not start or confine a student process: not the submission's
    fault; a batch retries it and `grade` says so."""


FORGED = "a reply on the private channel was not the observer's (was the channel tampered with?)"


def load_reply(reply: dict | WorkerFailure, nonce: str) -> LoadObservation:
    """The observer's first message, as a LoadObservation."""
    from ..observations import sanitize_error  # after the worker's spawn: not in front of it

    if isinstance(reply, WorkerFailure):
        return LoadObservation(failure=reply)
    if reply.get("op") != "loaded" or reply.get("nonce") != nonce:
        return LoadObservation(failure=WorkerFailure("protocol", FORGED))
    api = reply.get("api")
    api = api if isinstance(api, dict) else {}
    api = {name: entry for name, entry in api.items() if isinstance(entry, dict)}
    seconds = reply.get("seconds")
    seconds = float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else 0.0
    return LoadObservation(api=api, error=sanitize_error(reply.get("error")), seconds=seconds)


def isolation_of(spawned: Spawned) -> Isolation:
    """The level first_spawn.py's worker was spawned at (its recipe's: always namespaces)."""
    if spawned.userns:
        return Isolation(NAMESPACES.level, NAMESPACES.description, True)
    return NAMESPACES


def remember_first_spawn(isolation: Isolation) -> None:
    """After a worker of this grader process was confined at `isolation`'s level: store
    what the next grade's first spawn needs, once per process, unless it is stored already."""
    global _REMEMBERED
    if _REMEMBERED:
        return
    _REMEMBERED = True
    if isolation.level != NAMESPACES.level or first_spawn.has_recipe():
        return
    from . import isolation as isolation_module
    from . import seccomp_filter

    files = [isolation_module.__file__, seccomp_filter.__file__, *seccomp_filter.depends_on()]
    readable = list(isolation_module.interpreter_paths())
    program = seccomp_filter.program_hex()
    first_spawn.remember(isolation.level, isolation.userns, program, readable, files, site_paths())


_REMEMBERED = False


class Session:
    """Runs one submission. Use as a context manager; the work folder is removed after.
    It may be opened before the lab is known (to start the worker early); `configure`
    gives it the lab's observer and the spec's limits before `load`. Subclasses say how
    a worker is launched (`_launch`)."""

    _early: Worker | None = None  # a worker started ahead of its first use (PythonSession)
    _adopted = False  # its first worker was first_spawn.py's
    # `abgrade grade` sets it: once the student's processes are killed and its output read,
    # `close` leaves removing the work folder and releasing the uid to a thread, which the
    # command joins (`wait_closed`) after printing the report; not a daemon, so the
    # interpreter waits for it too
    cleanup_in_background = False
    _cleaning: threading.Thread | None = None
    _cleanup_error: BaseException | None = None

    def __init__(
        self,
        submission: Path,
        hidden: Sequence[Path] = (),
        spawned: Spawned | None = None,
        *,
        folder: Path | None = None,
    ) -> None:
        """`folder`: where the work folder goes (default: the temporary folder; a batch's
        grader process opens its next submission on a thread, into that job's folder,
        without changing `tempfile.tempdir` under the grading that runs meanwhile).
        `spawned`: a worker first_spawn.py spawned, whose folder and uid the session takes."""
        self.submission = submission
        self.probe: ProbeSetup | None = None
        self.limits = Limits()
        self.random_seed: int | None = None  # set by configure
        self.started = time.monotonic()
        self.cpu_spent = 0.0  # CPU seconds used by the workers already retired
        self.worker: WorkerLike | None = None
        self.outputs: list[str] = []
        self.identity: StudentIdentity | None = None
        self._adopted = spawned is not None
        self._filtered: bool | None = None  # whether the first worker got the seccomp filter, when known
        self._site_paths: list[str] | None = None  # worker.site_paths() from a first spawn's recipe
        if spawned is not None:  # first_spawn.py made the folder, leased the uid, found the level
            self.workdir = Path(spawned.workdir)
            self.isolation = isolation_of(spawned)
            self._filtered = bool(spawned.plan.get("seccomp"))  # its recipe's program (the note says so)
            self._site_paths = spawned.site_paths
            if spawned.uid is not None and spawned.lease_fd is not None:
                acl.sweep()  # as Isolation.plan does as root at this level (a killed grader's entries)
                self.identity = StudentIdentity(spawned.uid, STUDENT_GID, spawned.lease_fd)
                spawned.lease_fd = None  # the identity's to release now
        else:
            import tempfile  # only here: the first spawn's sessions never need it

            self.workdir = Path(tempfile.mkdtemp(prefix="abgrade-", dir=folder))
            try:
                self.isolation = detect_isolation()
                # the student's own unprivileged uid for this grading (None when the grader isn't root)
                self.identity = lease()
            except BaseException:
                shutil.rmtree(self.workdir, ignore_errors=True)
                raise
        if self.identity is not None and self.isolation.level == "namespaces":
            self.identity.private_tmp = True  # its /tmp and /dev/shm die with its mount namespace
        self.nonce = os.urandom(8).hex()  # every genuine reply carries it (secrets.token_hex, without its imports)
        # what the student process must not see: the grader, the specs, other submissions
        # (its own folder, and e.g. a batch's class folder and output folder)
        self.hidden = [*PRIVATE_DIRS, submission.resolve().parent, *hidden]
        # called once, when the submission's first student process is ready (a notebook's
        # kernel, before any of its code runs; a `.py` worker, once confined and loaded): a
        # batch's grader process opens its next submission then, whose kernel or worker
        # starts while this one runs its cases, is judged and recorded
        self.on_ready: Callable[[], None] | None = None

    def configure(self, probe: ProbeSetup, limits: Limits, random_seed: int | None = None) -> Session:
        """`random_seed`: what the student's own random generators are seeded with before
        any of its code runs, in every process of this submission (seeding.student_seed;
        grade_submission always gives one). None: the system's entropy, as a fresh
        interpreter has it (a benchmark's load, say)."""
        self.probe, self.limits, self.random_seed = probe, limits, random_seed
        self.started = time.monotonic()  # the submission's clock starts with its first use
        return self

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def cpu_used(self, reading: float | None = None) -> float:
        """CPU seconds the submission's workers have used so far (`reading`: the running
        worker's meter, just taken)."""
        return self.cpu_spent + (self.worker.cpu_used(reading) if self.worker is not None else 0.0)

    def remaining(self, reading: float | None = None) -> float:
        """CPU seconds left of the submission's time limit (`reading` as for cpu_used)."""
        return self.limits.submission_seconds - self.cpu_used(reading)

    def wall_remaining(self) -> float:
        """Wall-clock seconds left before the submission's backstop."""
        return backstop(self.limits.submission_seconds) - (time.monotonic() - self.started)

    def deadline(self, worker: WorkerLike, scope: str, seconds: float, per: str, now: float | None = None) -> Deadline:
        """`seconds` of the worker's CPU time for `scope` (named as `per`: "per case"), and
        its wall-clock backstop, within what is left of the submission's. `now`: the
        worker's meter, just taken (else read here, once for both limits: a read of a
        cgroup's cpu.stat right after the student computed costs 20-50 us, Deadline.check)."""
        now = worker.meter.seconds() if now is None else now
        return self.within_submission(Deadline(worker.meter).charged(scope, seconds, per, now), worker, now)

    def within_submission(self, deadline: Deadline, worker: WorkerLike, now: float | None = None) -> Deadline:
        """`deadline` (on `worker`'s meter) with what is left of the submission's limit and
        its backstop: the CPU time of the retired workers and of `worker` counts. `now`:
        the meter's reading, when just taken."""
        total = self.limits.submission_seconds
        now = worker.meter.seconds() if now is None else now
        left = total - self.cpu_spent - worker.cpu_used(now)
        deadline.cpu("submission", left, cpu_limit_text(total, "per submission"), now)
        return deadline.wall("submission", self.wall_remaining(), backstop_text(total, "per submission"))

    def _spent(self, reading: float | None = None) -> WorkerFailure | None:
        """Why no more code of this submission may run (its time is used up), or None
        (`reading` as for cpu_used)."""
        total = self.limits.submission_seconds
        if self.remaining(reading) <= 0:
            says = cpu_limit_text(total, "per submission")
            return WorkerFailure(
                "timeout", f"the submission had used up {says}", limit=Limit("submission", "cpu", total, says)
            )
        if self.wall_remaining() <= 0:
            says = backstop_text(total, "per submission")
            return WorkerFailure(
                "timeout", f"the submission ran past {says}", limit=Limit("submission", "wall", 0.0, says)
            )
        return None

    def _launch(self) -> tuple[WorkerLike | None, LoadObservation]:
        raise NotImplementedError

    def load(self) -> LoadObservation:
        self.worker, observation = self._launch()
        return observation

    def run(self, request: dict, timeout: float | None = None, ahead: Sequence[dict] = ()) -> dict | WorkerFailure:
        """Send one case request, under `timeout` seconds of CPU time (the spec's case limit
        by default); start a fresh worker first if an earlier case killed it. `ahead`: the
        requests to be run next, in order, which a `.py` worker is sent at once (channel.py:
        it starts each as soon as it has answered the one before); each is still run, and
        charged its limits, by its own call here."""
        case_limit = timeout or self.limits.case_seconds
        now = self.worker.meter.seconds() if self.worker is not None else None  # one reading for the checks below
        spent = self._spent(now)
        if spent is not None:
            return spent
        if self.worker is None:
            self.worker, observation = self._launch()
            if self.worker is None:
                return observation.failure or WorkerFailure(
                    "died", observation.problem or "the submission could not be reloaded"
                )
        deadline = self.deadline(self.worker, "case", case_limit, "per case", now)
        if ahead and isinstance(self.worker, Worker):
            reply = self.worker.request(request, deadline, ahead)
        else:
            reply = self.worker.request(request, deadline)
        if not isinstance(reply, WorkerFailure) and (
            reply.get("nonce") != self.nonce or reply.get("id") != request.get("id")
        ):
            reply = WorkerFailure("protocol", FORGED)
        if isinstance(reply, WorkerFailure):
            self._retire_worker()
        return reply

    def _retire_worker(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.cpu_spent += self.worker.cpu_used()
            self.outputs.append(self.worker.output_text)
            self.worker = None

    @property
    def output(self) -> str:
        return "".join(self.outputs)

    def printed_so_far(self) -> str:
        """What the student's code has printed up to now (retired workers', then the running
        one's): taken before a hidden case is sent, it holds nothing of that case."""
        return self.output + (self.worker.output_text if self.worker is not None else "")

    @property
    def isolation_note(self) -> str:
        return self.isolation.note(self.identity, self._filtered)

    def close(self) -> None:
        self._retire_worker()
        early = self._early
        if early is not None:  # started, never used (e.g. the spec turned out broken)
            early.kill()
            self._early = None
        if not self.cleanup_in_background:
            self._clean_up()
        elif self._cleaning is None:
            self._cleaning = threading.Thread(target=self._clean_up_keeping_error, name="abgrade-cleanup")
            self._cleaning.start()

    def _clean_up(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)
        if self.identity is not None:
            self.identity.release()  # kills what still runs as its uid, removes what it left
        if self._adopted:
            from .cgroup import sweep_stale

            sweep_stale()  # what making the cgroups here would have done first

    def _clean_up_keeping_error(self) -> None:
        try:
            self._clean_up()
        except BaseException as exc:  # noqa: BLE001 - raised again by wait_closed, as close would have
            self._cleanup_error = exc

    def wait_closed(self) -> None:
        """Return once `close` has removed the work folder and released the uid (at once
        unless `cleanup_in_background`); what went wrong there is raised here."""
        if self._cleaning is not None:
            self._cleaning.join()
        error, self._cleanup_error = self._cleanup_error, None
        if error is not None:
            raise error

    def _ready(self) -> None:
        """The first student process is ready: call `on_ready` (once)."""
        then, self.on_ready = self.on_ready, None
        if then is not None:
            then()

    def start_ahead(
        self, probe: ProbeSetup, limits: Limits, random_seed: int | None = None, *, own_thread: bool = False
    ) -> None:
        """Start the student's first process now, for `probe`, `limits` and `random_seed`
        (as configure() will be given them), while the
        grader still works on the submission before (a notebook's kernel: notebook.py); a
        `.py` session starts its worker when it opens. `own_thread`: called on the
        batch's opening thread (KernelWorker)."""


class PythonSession(Session):
    """A `.py` submission, imported by the observer in a fresh interpreter. The first
    interpreter starts at once, so its start-up overlaps the grader's own work."""

    def __init__(
        self,
        submission: Path,
        hidden: Sequence[Path] = (),
        spawned: Spawned | None = None,
        *,
        folder: Path | None = None,
    ) -> None:
        """`spawned`: the worker first_spawn.py spawned for this submission (hidden: none
        more than first_spawn.hidden_for's), which the session now holds, folder and uid
        included, whatever happens here. `folder`: see Session."""
        try:
            super().__init__(submission, hidden, spawned, folder=folder)
        except BaseException:
            if spawned is not None:
                spawned.release()
            raise
        self.copy = self.workdir / submission.name
        try:
            if spawned is not None:
                self._early = Worker.adopt(spawned)
                return
            shutil.copyfile(submission, self.copy)
            hand_over(self.workdir, self.identity)
            self._early = self._start_worker()
        except BaseException:
            if spawned is not None:
                spawned.release()
            self._clean_up()  # a session that never opened leaves no folder or leased uid behind
            raise

    def _start_worker(self) -> Worker:
        uid = self.identity.uid if self.identity is not None else None
        from . import worker_zygote  # a batch's: a single grade never forks

        zygote = worker_zygote.zygote_for(self.isolation, uid)  # a batch's grader process: a fork
        worker = Worker(self.workdir, self.isolation, self.hidden, self.identity, zygote)
        if worker.fork_refused is not None:
            worker_zygote.failed(worker.fork_refused)
        return worker

    def load(self) -> LoadObservation:
        """Load the submission, then call `on_ready`: its next submission's worker (a
        batch's) then forks and confines itself while this one's cases run."""
        observation = super().load()
        self._ready()
        return observation

    def _launch(self) -> tuple[WorkerLike | None, LoadObservation]:
        assert self.probe is not None, "configure() the session first"
        compiled = self.probe.compiled_modules()  # while the worker starts (compiled_modules)
        for _ in range(SANDBOX_START_ATTEMPTS):
            worker, self._early = self._early or self._start_worker(), None
            started = worker.channel.receive(CONFINE_SECONDS)
            if isinstance(started, WorkerFailure) or started.get("op") != "confined":
                worker.close()  # it died or hung before any student code ran: the machine's problem
                continue
            if not self._adopted:  # an adopted worker's recipe is stored already
                remember_first_spawn(self.isolation)
            worker.output.cap = self.limits.output_bytes
            worker.cgroup.set_max(self.limits.processes)
            worker.cgroup.set_memory(self.limits.memory_mb)
            setup = self.probe.setup_message(
                self.limits,
                compiled,
                self._site_paths,
                submission=str(self.copy),
                student_dir=str(self.workdir),
                module_name=module_name_for(self.submission, [name for name, _ in self.probe.extra_modules]),
                nonce=self.nonce,
                random_seed=self.random_seed,
                rlimits=rlimits(self.limits, worker.cgroup.limits_memory),
            )
            worker.start_clock()
            observation = self._load(worker, setup)
            if observation.failure:
                worker.close()
                self.cpu_spent += worker.cpu_used()
                self.outputs.append(worker.output_text)
                return None, observation
            return worker, observation
        said = [line for line in worker.output_text.splitlines() if line.strip()]
        forget_isolation()  # the level found once may no longer hold: the next grading looks again
        first_spawn.forget()
        raise WorkerStartError(
            f"the student process could not be confined on this machine "
            f"({SANDBOX_START_ATTEMPTS} attempts): {said[-1][:300] if said else 'it said nothing'}"
        )

    def _load(self, worker: Worker, setup: dict) -> LoadObservation:
        """Send the setup and wait for the observer's first message within the load limit;
        an import still running then is interrupted (KeyboardInterrupt) and, when it stops,
        graded with what it had defined; one that goes on is stopped (module docstring)."""
        load = self.deadline(worker, "load", self.limits.load_seconds, "for loading")
        reply = worker.channel.send(setup, load) or worker.channel.receive(load, kill=False)
        passed = reply.limit if isinstance(reply, WorkerFailure) and reply.kind == "timeout" else None
        if passed is not None and not worker.closed:
            worker.interrupt()
            grace = Deadline(worker.meter).charged("interrupt", INTERRUPT_GRACE_SECONDS, "after the interrupt")
            reply = worker.channel.receive(grace)
            if isinstance(reply, WorkerFailure) and reply.kind == "timeout":
                reply = WorkerFailure(
                    "timeout",
                    f"loading (the import of the submission) ran past {passed.says}, and went on after its "
                    f"interrupt (KeyboardInterrupt) until it was stopped",
                    limit=passed,
                )
        observation = load_reply(reply, self.nonce)
        if passed is not None and observation.failure is None:
            observation.notes.append(
                f"the import ran past {passed.says} and was interrupted (KeyboardInterrupt); "
                f"grading goes on with what it had defined by then"
            )
        return observation

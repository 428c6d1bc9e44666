"""What a grader process does with one submission: grade it with the run's spec and seed.
A separate module so that it is all a grader process imports (and preloads).

Only a machine problem (a Jupyter kernel or a student process that can't start) leaves
here as an exception, for the pool to retry: it is not the student's fault, and another
attempt may work. Any other exception while grading one file is that file's result
(`GradingFailed`, with the reason): retrying it would fail again. Either way, every
temporary folder the attempt made is removed (they all live in one folder per job)."""

from __future__ import annotations

import gc
import os
import queue
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..grading import as_seed, grade_submission
from ..labs import CasePlan, Lab, get_lab
from ..results import GradeReport
from ..sandbox import worker_zygote
from ..sandbox.opening import open_session
from ..sandbox.session import ProbeSetup, PythonSession, Session
from ..seeding import Seed, student_seed
from ..spec import Spec
from ..spec.model import Limits
from .discovery import clean_name

# The sandbox's exceptions for "the machine could not start the student's process"; by
# name, so that this module needs neither Jupyter nor the sandbox's internals.
MACHINE_PROBLEMS = frozenset({"KernelStartError", "WorkerStartError"})


def machine_problem(exc: BaseException) -> bool:
    return any(cls.__name__ in MACHINE_PROBLEMS for cls in type(exc).__mro__)


@dataclass(frozen=True)
class GradingFailed:
    """Grading this submission raised, and not because of the machine."""

    reason: str


@dataclass
class Ahead:
    """The next submission of this grader process, opened while it still ran the one
    before: its session (its own uid, work folder, and its kernel or `.py` worker started)
    in its own job folder. For exactly that submission, and graded next or closed."""

    path: Path | None  # None: no job was given ahead (known once `opened` returns)
    folder: Path | None
    session: Session | None  # None: nothing to start ahead (neither a notebook nor a `.py` file)
    # a `.py` session opens on this thread (the pool's answer awaited, then uid lease,
    # folder, the worker's fork): the grading under way goes on meanwhile; `opened` waits
    opening: Opening | None = None

    def opened(self) -> Session | None:
        """The session, once its opening (if on a thread) is over; None if it failed."""
        if self.opening is not None:
            self.opening.join()
            self.opening = None
        return self.session

    def close(self) -> None:
        session = self.opened()
        if session is not None:
            session.close()  # its kernel or worker killed, the uid and the borrowed ACL entries given back
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class GradeTask:
    """Picklable: sent once to each grader process. Raises the machine problems, returns
    everything else (a GradeReport, or GradingFailed). In the local pool it is told, per
    job, how to ask for its next one (`look_ahead`): a notebook grading asks as it
    begins when its own kernel was started ahead, else once its kernel is ready, and opens
    the next submission then, whose kernel starts while this one runs, is judged and
    recorded; a `.py` grading asks once its submission is loaded, and the next submission
    is opened on a thread (its uid leased, its folder made, its worker forked), whose
    worker confines itself while this one's cases run: the next grading finds it ready."""

    lab_name: str
    spec: Spec
    seed: Seed  # the class's (secret: the feedback never shows its number)
    hidden: tuple[Path, ...] = field(default=(), kw_only=True)  # the class and output folders: no student looks in
    temp_root: Path | None = field(default=None, kw_only=True)  # the run's temporary folder (see scratch.py)
    # the lab itself, when its name alone can't bring it back in another process or on a
    # Dask worker (a lab folder's lab pickles as its files)
    lab: Lab | None = field(default=None, kw_only=True, repr=False, compare=False)
    _lab: Lab | None = field(default=None, init=False, repr=False, compare=False)
    _ask: Callable[[], Path | None] | None = field(default=None, init=False, repr=False, compare=False)
    _ahead: Ahead | None = field(default=None, init=False, repr=False, compare=False)
    _root: Path | None = field(default=None, init=False, repr=False, compare=False)
    _opened: Session | None = field(default=None, init=False, repr=False, compare=False)
    # the lab's plans for this spec and seed, built on the first grading and reused by the
    # next ones, when the lab says they keep nothing of a grading (Lab.reusable_plans)
    _plans: list[CasePlan] | None = field(default=None, init=False, repr=False, compare=False)
    # the last submission's close-out (`.py` or notebook), under way on the session's own thread while the
    # next one is graded: its work folder removed, its uid released (reaped, swept), then its
    # job folder removed (settled by the next grading's end, or by close())
    _closing: Closing | None = field(default=None, init=False, repr=False, compare=False)
    _session: Session | None = field(default=None, init=False, repr=False, compare=False)
    _pooled: bool = field(default=False, init=False, repr=False, compare=False)  # see look_ahead
    _frozen: bool = field(default=False, init=False, repr=False, compare=False)  # see _freeze_long_lived

    def look_ahead(self, ask: Callable[[], Path | None]) -> None:
        """How this job asks for the next one (the pool's NextJob; once per job). Off with
        ABGRADE_KERNEL_AHEAD=0 (each kernel or `.py` worker then starts when its grading does)."""
        self._ask = ask if os.environ.get("ABGRADE_KERNEL_AHEAD", "1") != "0" else None
        # in the local pool, whose grader processes close their task before they exit: a
        # `.py` submission's folder and uid may then be given back while the next is graded
        # (elsewhere, a Dask worker say, each grading gives them back before it returns)
        self._pooled = True

    def __call__(self, path: Path) -> GradeReport | GradingFailed:
        ahead, self._ahead = self._ahead, None
        opened = ahead.opened() if ahead is not None else None
        if ahead is not None and (ahead.path != path or ahead.folder is None):  # not opened for this job
            ahead.close()
            ahead = opened = None
        self._root = self.temp_root or Path(tempfile.gettempdir())  # where job folders go (not inside one)
        job_folder = ahead.folder if ahead is not None and ahead.folder is not None else None
        job_folder = job_folder or Path(tempfile.mkdtemp(prefix="j-", dir=self._root))
        previous, tempfile.tempdir = tempfile.tempdir, str(job_folder)
        self._opened = opened
        try:
            return self.grade(path)
        except Exception as exc:  # noqa: BLE001 - one file's failure must not stop the class
            if machine_problem(exc):
                raise
            return GradingFailed(clean_name(f"grading this file failed: {type(exc).__name__}: {exc}"[:2000]))
        finally:
            opened, self._opened = self._opened, None
            if opened is not None:  # opened ahead, and grade() never took it
                opened.close()
            tempfile.tempdir = previous
            closing, self._closing = self._closing, None
            session, self._session = self._session, None
            if session is not None:  # kept before the wait below: a stop there still settles it (close)
                self._closing = Closing(session, job_folder)
            else:
                shutil.rmtree(job_folder, ignore_errors=True)
            if closing is not None:  # the submission before: its close-out overlapped this grading
                closing.settle()

    def grade(self, path: Path) -> GradeReport:
        lab = self._the_lab()
        self._freeze_long_lived(path)
        session, self._opened = self._opened, None  # this submission's, opened ahead
        if session is None and self._ask is not None and _notebook_file(path):
            session = open_session(path, self._hidden(lab))  # as grade_submission would, with the hook below
        python, notebook = _python_file(path), _notebook_file(path)
        if session is None and self._pooled and (python or notebook):
            session = open_session(path, self._hidden(lab))  # as grade_submission would, closed as below
        if session is not None and self._pooled and (python or notebook):
            # its folder and uid go while the next submission is graded (a notebook's kernel,
            # its cgroup and its sockets' folder are gone before: KernelWorker.close)
            session.cleanup_in_background = True
            self._session = session
        if session is not None and self._ask is not None:
            session.on_ready = self._ask_ahead if python else self._open_next
        try:
            if session is not None and session.on_ready is not None and getattr(session, "started_ahead", False):
                # its kernel is (nearly) ready: the next one starts now, beside this one's
                # last steps of start-up, not after them
                session.on_ready = None
                self._open_next()
            plans = self._reused_plans(lab)
            return grade_submission(
                path, lab, self.spec, seed=self.seed, hidden=self.hidden, session=session, plans=plans
            )
        except BaseException:
            if session is not None:
                session.on_ready = None  # no next job is asked for on the way out
                session.close()
            raise

    def _the_lab(self) -> Lab:
        if self._lab is None:
            self._lab = self.lab if self.lab is not None else get_lab(self.lab_name)
            # this process grades many: `.py` workers are forks of one zygote, which imports
            # what the lab's own code in the student process does (numpy for the board labs)
            worker_zygote.use(preimport=worker_zygote.preimports_for(self._lab.probe))
        return self._lab

    def _freeze_long_lived(self, path: Path) -> None:
        """Once, as this process's first grading begins (before any session of it opens,
        so that nothing of a student is there): what is alive then goes to the collector's
        permanent generation, after a collection. The grader's imports (Jupyter's too,
        imported first for a notebook) and the lab, about 39,000 objects in a notebook
        batch's grader process, are no longer walked by each full collection after that
        (about 2 ms of the grader's CPU per notebook). Only where a process grades many
        (look_ahead: the local pool, a Dask worker)."""
        if self._frozen or not self._pooled:
            return
        self._frozen = True
        if _notebook_file(path):
            from ..sandbox.kernel_worker import import_jupyter

            import_jupyter()
        gc.collect()
        gc.freeze()

    def _reused_plans(self, lab: Lab) -> list[CasePlan] | None:
        """The plans every submission of this grader process is graded with, built once (a
        copy of the list each time: the pipeline only reads it), or None when the lab's
        plans keep a grading's state and each grading builds its own."""
        if not lab.reusable_plans:
            return None
        if self._plans is None:
            self._plans = lab.plans(self.spec, as_seed(self.spec, self.seed).value)  # as grade_submission's
        return list(self._plans)

    def _hidden(self, lab: Lab) -> tuple[Path, ...]:
        return (*self.hidden, *lab.private_dirs)  # what grade_submission hides

    def _ask_ahead(self) -> None:
        """This `.py` job's submission is loaded: ask for the next job and open a `.py`
        one on a thread (`_open_ahead`)."""
        self._open_ahead(notebooks=False)

    def _open_next(self) -> None:
        """This notebook's kernel is ready, or was started ahead: ask for the next job and
        open it on a thread (`_open_ahead`), a notebook's kernel started too, so that it
        starts while this one runs, is judged and recorded."""
        self._open_ahead(notebooks=True)

    def _open_ahead(self, notebooks: bool) -> None:
        """Ask for the next job (the question sent here, on the grading's thread, which
        alone writes to the pool's pipe) and wait for the answer and open that job's
        session on the process's opening thread (`_open_on_thread`, `Opener`), so that neither the batch
        process's answer (it may be busy writing a gradebook row or feedback files: 50 ms
        at the median in a batch of notebooks at load 12) nor the opening (a uid lease,
        folders, a worker's or a kernel's fork: 26 ms) holds up this grading. `notebooks`:
        a notebook is opened ahead too, its kernel started, for this grading's lab, limits
        and student seed (else only a `.py` file is)."""
        ask, self._ask = self._ask, None
        if ask is None:
            return
        send, answer = getattr(ask, "ask", None), getattr(ask, "answer", None)
        if callable(send) and callable(answer):  # the pool's NextJob: answered on the thread
            send()
        else:  # any other way of asking (a Dask worker's hint): answered here
            path = ask()
            if path is None:
                return  # no next job: nothing to open ahead
            answer = lambda: path  # noqa: E731 - the answer, for the thread
        lab = self._the_lab()
        kernel = (lab.probe, self.spec.limits, student_seed(as_seed(self.spec, self.seed))) if notebooks else None
        ahead = self._ahead = Ahead(None, None, None)
        ahead.opening = opener().submit(partial(_open_on_thread, ahead, answer, self._root, self._hidden(lab), kernel))

    def close(self) -> None:
        """What was opened ahead and will not be graded here (the batch was interrupted),
        and the last submission's close-out, waited for: no uid or folder of a student
        outlives its grader process's work."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.close()
        closing, self._closing = self._closing, None
        if closing is not None:
            closing.settle()


class Opening:
    """One opening handed to the Opener: `join` waits for it to be over."""

    def __init__(self) -> None:
        self._over = threading.Event()

    def join(self) -> None:
        self._over.wait()


class Opener:
    """The one thread of a grader process that opens its next submissions (`Ahead`), in
    turn. One thread for the process's life, not one per submission: a student process
    spawned from it without a zygote (a `.py` worker, a kernel when the zygote is off or
    can't run) dies with the grader by PR_SET_PDEATHSIG, which fires when the thread that
    forked it ends, not only the process."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self._work: queue.SimpleQueue[tuple[Callable[[], None], Opening]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="abgrade-open-next", daemon=True).start()

    def submit(self, work: Callable[[], None]) -> Opening:
        opening = Opening()
        self._work.put((work, opening))
        return opening

    def _serve(self) -> None:
        while True:
            work, opening = self._work.get()
            try:
                work()
            except Exception as exc:  # noqa: BLE001 - the grading then opens its own and meets the problem
                print(f"abgrade: opening the next submission failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            finally:
                opening._over.set()


_OPENER: Opener | None = None
_OPENER_LOCK = threading.Lock()


def opener() -> Opener:
    """This process's Opener (started on first use; a forked process starts its own)."""
    global _OPENER
    with _OPENER_LOCK:
        if _OPENER is None or _OPENER.owner != os.getpid():
            _OPENER = Opener()
        return _OPENER


@dataclass
class Closing:
    """A graded `.py` or notebook submission whose session was closed with its clean-up on a thread
    (Session.cleanup_in_background): its processes are killed already; the thread removes
    its work folder and releases its uid (the uid's lease is held until then, so no other
    grading can get it while anything of this student may live). `settle` waits for it
    and removes the job folder."""

    session: Session
    job_folder: Path

    def settle(self) -> None:
        try:
            self.session.wait_closed()
        except Exception as exc:  # noqa: BLE001 - the grade is recorded already; the uid is reaped at its next lease
            print(f"abgrade: cleaning up after a submission failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            shutil.rmtree(self.job_folder, ignore_errors=True)


def _open_on_thread(
    ahead: Ahead,
    answer: Callable[[], Path | None],
    root: Path | None,
    hidden: tuple[Path, ...],
    kernel: tuple[ProbeSetup, Limits, int | None] | None,
) -> None:
    """On the Opener's thread: the pool's answer awaited (the next job, or None), then that
    job's folder and, for a `.py` file, its session (a uid of its own, its work folder, its
    worker forked from the zygote) in `ahead`; for a notebook, when `kernel` (the lab's
    probe, the limits, the student's seed) is given, its session with its first kernel
    started. Any other file is opened by its grading."""
    path = answer()
    if path is None:
        return
    ahead.folder = Path(tempfile.mkdtemp(prefix="j-", dir=root))
    ahead.path = path
    if _python_file(path):
        ahead.session = _python_session(path, hidden, ahead.folder)
    elif kernel is not None and _notebook_file(path):
        ahead.session = _notebook_session(path, hidden, ahead.folder, kernel)


def _notebook_session(
    path: Path, hidden: tuple[Path, ...], folder: Path, kernel: tuple[ProbeSetup, Limits, int | None]
) -> Session | None:
    """A notebook's session opened in `folder` with its first kernel started (not waited
    for), or None when that failed (its grading then opens one itself and meets the
    problem there)."""
    session: Session | None = None
    try:
        session = open_session(path, hidden, folder=folder)
        session.start_ahead(*kernel, own_thread=True)
        return session
    except Exception:  # noqa: BLE001 - see above
        if session is not None:
            session.close()
        return None


def _python_session(path: Path, hidden: tuple[Path, ...], folder: Path) -> Session | None:
    """A `.py` file's session opened in `folder`, or None when that failed (its grading
    then opens one itself and meets the problem there)."""
    try:
        return PythonSession(path, hidden, folder=folder)
    except Exception:  # noqa: BLE001 - see above
        return None


def _python_file(path: Path) -> bool:
    return path.suffix == ".py" and path.is_file() and not path.is_symlink()


def _notebook_file(path: Path) -> bool:
    return path.suffix == ".ipynb" and path.is_file() and not path.is_symlink()

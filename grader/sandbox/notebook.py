"""`.ipynb` submissions: the notebook runs cell by cell in a fresh Jupyter kernel
(nbclient + ipykernel, IPython semantics, stdin disabled, a failing cell doesn't stop the
ones after it), then the lab's observer runs inside that kernel and serves case requests
over a private Unix socket. Judging stays in the grader.

Loading is charged on the kernel's own CPU time (deadline.py): each cell has its limit
(`cell_seconds`), all of them together the load limit (`load_seconds`), each with a
wall-clock backstop. A cell that runs past one is interrupted (KeyboardInterrupt) and the
next cells run while load time is left; a cell that goes on after its interrupt is
stopped, and then loading has failed, as for a `.py` whose import does (session.py). A
cell that kills the kernel itself is skipped in a fresh kernel, so the cells after it
still run. Kernels talk over IPC sockets in a private folder with a short path whatever
TMPDIR is (socket_folder.py), so parallel graders never race for TCP ports.

The parts, each a module of its own: kernel_worker.py (one kernel's life), cells.py
(cell incidents and the watchdog), kernel_clients.py (the bounded Jupyter clients),
observer_socket.py (the observer's private way back), notebook_file.py (reading the file).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..spec.model import Limits
from .cells import CellIncident, incident_notes, not_run
from .channel import WorkerFailure
from .deadline import Deadline, backstop, backstop_text, cpu_limit_text
from .identity import hand_over
from .kernel_worker import KernelStartError, KernelWorker
from .notebook_file import NotebookProblem, code_cells, read_notebook
from .observer_socket import genuine_peer
from .session import LoadObservation, ProbeSetup, Session, WorkerLike, load_reply

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = ["KernelStartError", "KernelWorker", "NotebookSession", "genuine_peer"]
OBSERVER_START_SECONDS = 5.0  # CPU time the observer's start-up may use past the load limit
LOAD = "for loading the notebook"


class NotebookSession(Session):
    """A `.ipynb` submission."""

    def __init__(self, submission: Path, hidden: Sequence[Path] = (), *, folder: Path | None = None) -> None:
        """`folder`: where its work folder goes (Session; a batch's grader process opens
        its next notebook on a thread, into that job's folder)."""
        super().__init__(submission, hidden, folder=folder)
        hand_over(self.workdir, self.identity)
        self.skip: set[int] = set()  # cells that killed or hung a kernel
        self.incidents: list[CellIncident] = []  # cells that raised, were interrupted, skipped or not run
        self.problem: str | None = None
        self.notebook: NotebookNode | None
        try:
            self.notebook = read_notebook(submission)
        except NotebookProblem as exc:
            self.notebook, self.problem = None, str(exc)
        # its kernel, started ahead, and the configuration it was started for
        self._ahead: tuple[ProbeSetup, Limits, int | None, KernelWorker] | None = None

    def start_ahead(
        self, probe: ProbeSetup, limits: Limits, random_seed: int | None = None, *, own_thread: bool = False
    ) -> None:
        """Start this submission's first kernel now, for the lab's `probe`, the spec's
        `limits` and the student's `random_seed` (a batch's grader process, while it still
        judges the submission before):
        confined as any kernel of this session, for this student only; nothing runs in it
        until load(). Its start-up is the machine's time: the submission's limits count
        from its first cell. A notebook that can't be read gets none (it needs none).
        `own_thread`: called on the batch's opening thread (KernelWorker)."""
        if self.notebook is None or self._ahead is not None:
            return
        worker = KernelWorker(
            self.workdir,
            limits,
            self.notebook,
            self.isolation,
            self.hidden,
            self.identity,
            probe.extra_modules,
            random_seed,
            launch_only=True,
            own_thread=own_thread,
        )
        self._ahead = (probe, limits, random_seed, worker)

    @property
    def started_ahead(self) -> bool:
        """Whether its first kernel was started ahead (start_ahead) and not yet used."""
        return self._ahead is not None

    def _take_ahead(self) -> KernelWorker | None:
        """The kernel started ahead, if it was started for this configuration."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        probe, limits, random_seed, worker = ahead
        if (probe, limits, random_seed) != (self.probe, self.limits, self.random_seed):  # not this grading's
            worker.close()
            return None
        return worker

    def _launch(self) -> tuple[WorkerLike | None, LoadObservation]:
        """Run the cells (again in a fresh kernel without any cell that killed one) and
        start the observer, all within the load limit (`load_seconds` of the kernels' CPU
        time and its backstop, never past the submission's; kernel start-ups don't count);
        the observer's start may take OBSERVER_START_SECONDS more."""
        if self.notebook is None:
            self._ready()  # no kernel to wait for
            return None, LoadObservation(problem=self.problem)
        code = [i for i, cell in enumerate(self.notebook.cells) if cell.cell_type == "code"]
        cells = [(index, number) for number, index in enumerate(code, 1)]
        self.incidents = []
        cpu_spent = 0.0  # CPU time of the cells in kernels that died
        started, machine = time.monotonic(), 0.0  # kernel start-ups are the machine's time
        while True:
            worker = self._take_ahead() or KernelWorker(
                self.workdir,
                self.limits,
                self.notebook,
                self.isolation,
                self.hidden,
                self.identity,
                self.probe.extra_modules if self.probe else (),
                self.random_seed,
            )
            worker.connect()  # a kernel started ahead: its clock starts here, with the first cell
            machine += worker.start_seconds
            self._ready()
            load = self._load_deadline(worker, cpu_spent, time.monotonic() - started - machine)
            worker.run_cells(cells, load, self.skip)
            self.incidents.extend(worker.incidents)
            if worker.killed_cell is None:
                break
            ran_out = load.passed()
            cpu_spent += worker.cpu_used()
            self._close_worker(worker)
            if worker.stopped_cell is not None:  # it went on after its interrupt: as a `.py` import that does
                stopped = next(i for i in worker.incidents if i.kind == "stopped")
                notes = [note for note in self._notes(None) if note != stopped.note]
                return None, LoadObservation(failure=WorkerFailure("timeout", stopped.note), notes=notes)
            self.skip.add(worker.killed_cell)
            if ran_out is not None:
                rest = [(i, n) for i, n in cells if n > worker.killed_cell]
                self.incidents.extend(not_run(rest, self.skip, ran_out))
                failure = WorkerFailure("timeout", f"loading the notebook ran past {ran_out.says}", limit=ran_out)
                return None, LoadObservation(failure=failure, notes=self._notes(None))
        assert self.probe is not None, "configure() the session first"
        setup = self.probe.setup_message(
            self.limits,
            student_dir=str(self.workdir),
            nonce=self.nonce,
            cells=[[n, s] for n, s in code_cells(self.notebook)],
        )
        wall_spent = time.monotonic() - started - machine
        start = self._load_deadline(worker, cpu_spent, wall_spent, at_least=OBSERVER_START_SECONDS)
        reply = worker.start_observer(setup, start)
        observation = load_reply(reply, self.nonce)
        if isinstance(reply, WorkerFailure) and reply.kind == "timeout" and reply.limit is not None:
            observation.failure = WorkerFailure(
                "timeout", f"loading the notebook ran past {reply.limit.says}", limit=reply.limit
            )
        observation.notes = self._notes(worker)
        if observation.failure:
            self._close_worker(worker)
            return None, observation
        return worker, observation

    def _load_deadline(
        self, worker: KernelWorker, cpu_spent: float, wall_spent: float, at_least: float = 0.0
    ) -> Deadline:
        """What is left of the load limit for `worker` after `cpu_spent` (the cells in
        earlier kernels) and `wall_spent` (loading, without kernel start-ups), at least
        `at_least` seconds of CPU time (and its backstop), within the submission's."""
        seconds = self.limits.load_seconds
        cpu_left, wall_left = seconds - cpu_spent - worker.cpu_used(), backstop(seconds) - wall_spent
        if at_least:
            cpu_left, wall_left = max(cpu_left, at_least), max(wall_left, backstop(at_least))
        load = Deadline(worker.meter)
        load.cpu("load", cpu_left, cpu_limit_text(seconds, LOAD))
        load.wall("load", wall_left, backstop_text(seconds, LOAD))
        return self.within_submission(load, worker)

    def _notes(self, worker: KernelWorker | None) -> list[str]:
        notes = incident_notes(self.incidents)
        budget = worker.budget.note() if worker is not None else None
        return list(dict.fromkeys(notes + ([budget] if budget else [])))

    def _close_worker(self, worker: KernelWorker) -> None:
        worker.close()
        self.cpu_spent += worker.cpu_used()
        self.outputs.append(worker.output_text)

    def _retire_worker(self) -> None:
        if self.worker is not None:
            self.outputs.append(_stream_text(self.notebook))
        super()._retire_worker()

    def close(self) -> None:
        if self._ahead is not None:  # started ahead and never used (the grading ended first)
            self._ahead[3].close()
            self._ahead = None
        super().close()

    def printed_so_far(self) -> str:
        if self.worker is None:
            return self.output
        return self.output + _stream_text(self.notebook) + self.worker.output_text


def _stream_text(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
    return "".join(parts)

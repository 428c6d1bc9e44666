"""`.ipynb` submissions: the notebook runs cell by cell in a fresh Jupyter kernel
(nbclient + ipykernel, IPython semantics, stdin disabled, a failing cell doesn't stop the
ones after it), then the lab's observer runs inside that kernel and serves case requests
over a private Unix socket. Judging stays in the grader.

A cell that ignores its interrupt or kills the kernel is skipped in a fresh kernel, so
the cells after it still run. Kernels talk over IPC sockets in a private folder, so
parallel graders never race for TCP ports.
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from ..spec.model import Limits
from .channel import FramedChannel, WorkerFailure
from .cgroup import StudentCgroups
from .identity import StudentIdentity, hand_over
from .isolation import Isolation
from .limits import apply_rlimits, die_with_grader, rlimits
from .notebook_file import NotebookProblem, code_cells, read_notebook
from .output import CappedOutput
from .session import LoadObservation, ProbeSetup, Session, WorkerLike, load_reply
from .worker import exit_description, kill_group, scrubbed_env

_BOOTSTRAP = "\n".join((Path(__file__).parent / name).read_text()
                       for name in ("probe_install.py", "kernel_bootstrap.py"))
INTERRUPT_GRACE_SECONDS = 3.0
PROBE_CONNECT_SECONDS = 15.0
KERNEL_START_ATTEMPTS = 3


class KernelStartError(RuntimeError):
    """The machine could not start a Jupyter kernel: not the submission's fault."""


class KernelWorker:
    """A kernel that has run the notebook's cells and now hosts the observer."""

    def __init__(self, workdir: Path, limits: Limits, notebook, isolation: Isolation, hidden: list[Path],
                 identity: StudentIdentity | None = None) -> None:
        import sys

        import nbclient  # imported here: .py grading never pays for Jupyter
        from jupyter_client.kernelspec import KernelSpec
        from jupyter_client.manager import AsyncKernelManager

        self.limits = limits
        self.private = Path(tempfile.mkdtemp(prefix="abgrade-k-"))  # sockets, connection file
        hand_over(self.private, identity)  # this kernel's uid only: no other student can enter
        self.km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=str(self.private / "k"),
                                connection_file=str(self.private / "kernel.json"))
        if identity is not None:  # the kernel (the student's uid) must read its connection file
            write_connection_file = self.km.write_connection_file

            def write_and_hand_over(**kwargs: object) -> None:
                write_connection_file(**kwargs)
                os.chown(self.km.connection_file, identity.uid, identity.gid)

            self.km.write_connection_file = write_and_hand_over  # type: ignore[method-assign]
        # the kernel command is ours (this interpreter, wrapped in the isolation), not a kernelspec's
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--HistoryManager.enabled=False"]
        plan = isolation.plan([workdir, self.private], hidden, identity, cwd=workdir)
        self.km._kernel_spec = KernelSpec(argv=isolation.wrap(argv, plan), display_name="Python 3", language="python")
        self.client = nbclient.NotebookClient(
            notebook, km=self.km, timeout=limits.cell_seconds,
            allow_errors=True, interrupt_on_timeout=True, kernel_name="python3",
            resources={"metadata": {"path": str(workdir)}}, record_timing=False,
        )
        self.cgroup = StudentCgroups()
        self.cgroup.set_max(limits.processes)
        self.cgroup.set_memory(limits.memory_mb)
        self._caps = rlimits(limits, self.cgroup.limits_memory, kernel=True)
        out_r, self._out_w = os.pipe()
        self.output = CappedOutput(out_r, limits.output_bytes)
        self.cell_errors: list[tuple[int, str]] = []
        self.case_output: list[str] = []  # what the student's code printed during the cases
        self.killed_cell: int | None = None
        self.channel: FramedChannel | None = None
        self._connection: socket.socket | None = None
        self.closed = False
        self._start_kernel(workdir)

    def _start_kernel(self, workdir: Path) -> None:
        last: Exception | None = None
        for _ in range(KERNEL_START_ATTEMPTS):
            try:
                self.client.start_new_kernel(cwd=str(workdir), env=scrubbed_env(workdir), stdout=self._out_w,
                                             stderr=self._out_w,
                                             preexec_fn=self._prepare_kernel)
                self.client.start_new_kernel_client()
                return
            except Exception as exc:  # noqa: BLE001 - retried, then reported as the machine's fault
                last = exc
                self._kill_kernel()
        os.close(self._out_w)
        raise KernelStartError(f"could not start a Jupyter kernel: {last}")

    def _prepare_kernel(self) -> None:
        """preexec_fn of the kernel: die with the grader, the caps, the cgroups."""
        die_with_grader()
        apply_rlimits(self._caps)
        self.cgroup.join()

    @property
    def pid(self) -> int | None:
        process = getattr(self.km.provisioner, "process", None) if self.km.provisioner else None
        return process.pid if process is not None else None

    def run_cells(self, cells: list[tuple[int, int]], deadline: float, skip: set[int]) -> float:
        """Execute the code cells, given as (index, number), in order, skipping `skip`; stop
        early when the kernel dies or a cell outlives its interrupt. Returns seconds spent."""
        from nbclient.exceptions import DeadKernelError

        started = time.monotonic()
        for index, number in cells:
            if number in skip:
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.killed_cell = number
                break
            watchdog = threading.Timer(min(self.limits.cell_seconds + INTERRUPT_GRACE_SECONDS, remaining),
                                       self._kill_kernel)
            watchdog.start()
            try:
                cell = self.client.nb.cells[index]
                self.client.execute_cell(cell, index)
            except DeadKernelError:
                self.killed_cell = number
            except Exception as exc:  # noqa: BLE001 - nbclient timeouts and protocol errors
                self.killed_cell = number
                self.cell_errors.append((number, f"{type(exc).__name__}: {exc}"))
            finally:
                watchdog.cancel()
            if self.killed_cell is not None:
                break
            for output in self.client.nb.cells[index].get("outputs", []):
                if output.get("output_type") == "error":
                    self.cell_errors.append((number, f"{output.get('ename')}: {output.get('evalue', '')}"[:300]))
        return time.monotonic() - started

    def start_observer(self, setup: dict, timeout: float) -> dict | WorkerFailure:
        """Run the observer in the kernel and wait for its first message."""
        path = str(self.private / "probe.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        os.chmod(path, 0o666)  # the kernel runs as the student's uid; the 0700 folder keeps others out
        server.listen(1)
        server.settimeout(min(timeout, PROBE_CONNECT_SECONDS))
        self.client.kc.execute(_BOOTSTRAP + f"\n_abgrade_boot({path!r})\ndel _abgrade_boot, _abgrade_install_probe\n",
                               silent=True, store_history=False, allow_stdin=False)
        try:
            self._connection, _ = server.accept()
        except (TimeoutError, OSError):
            self._kill_kernel()
            return WorkerFailure("died", "the observer could not start in the kernel "
                                         "(did the notebook replace standard modules, or block the kernel?)")
        finally:
            server.close()
        fd = self._connection.fileno()
        self.channel = FramedChannel(fd, fd, self._kill_kernel, self._died)
        return self.channel.request(setup, timeout)

    def request(self, message: dict, timeout: float) -> dict | WorkerFailure:
        assert self.channel is not None
        reply = self.channel.request(message, timeout)
        self._drain_prints()
        return reply

    def _drain_prints(self) -> None:
        """Collect the stream messages the kernel sent while serving cases (as a `.py`
        worker's output is collected), up to the output cap."""
        from jupyter_core.utils import run_sync

        get = run_sync(self.client.kc.iopub_channel.get_msg)
        kept = sum(len(text) for text in self.case_output)
        while kept < self.limits.output_bytes:
            try:
                message = get(timeout=0)
            except Exception:  # noqa: BLE001 - queue.Empty: nothing more for now (or a closed channel)
                return
            if message.get("msg_type") == "stream":
                text = str(message.get("content", {}).get("text", ""))[: self.limits.output_bytes - kept]
                self.case_output.append(text)
                kept += len(text)

    def _died(self, when: str) -> WorkerFailure:
        process = getattr(self.km.provisioner, "process", None) if self.km.provisioner else None
        code = None
        if process is not None:
            try:
                code = process.wait(timeout=2)
            except Exception:  # noqa: BLE001
                code = None
        self._kill_kernel()
        return WorkerFailure("died", f"the notebook's kernel {exit_description(code)}{(' ' + when) if when else ''}", code)

    def _kill_kernel(self) -> None:
        """SIGKILL at once: the kernel's state is disposable (its output came over
        iopub), and as the first process of a PID namespace it would ignore SIGTERM."""
        pid = self.pid
        if pid is not None:
            kill_group(pid, self.km.provisioner.process, grace=0)
        self.cgroup.kill_all()

    @property
    def output_text(self) -> str:
        return "".join(self.case_output) + self.output.text

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._connection is not None:
            self._connection.close()
        self._kill_kernel()
        try:
            if self.client.kc is not None:
                self.client.kc.stop_channels()
        except Exception:  # noqa: BLE001 - best effort: the private folder goes anyway
            pass
        try:
            os.close(self._out_w)
        except OSError:
            pass
        self.output.finish()
        self.cgroup.remove()
        shutil.rmtree(self.private, ignore_errors=True)


class NotebookSession(Session):
    """A `.ipynb` submission."""

    def __init__(self, submission: Path, hidden: Sequence[Path] = ()) -> None:
        super().__init__(submission, hidden)
        hand_over(self.workdir, self.identity)
        self.skip: set[int] = set()   # cells that killed or hung a kernel
        self.problem: str | None = None
        try:
            self.notebook = read_notebook(submission)
        except NotebookProblem as exc:
            self.notebook, self.problem = None, str(exc)

    def _launch(self) -> tuple[WorkerLike | None, LoadObservation]:
        if self.notebook is None:
            return None, LoadObservation(problem=self.problem)
        notes: list[str] = []
        cells = [(i, i + 1) for i, cell in enumerate(self.notebook.cells) if cell.cell_type == "code"]
        while True:
            worker = KernelWorker(self.workdir, self.limits, self.notebook, self.isolation, self.hidden, self.identity)
            deadline = time.monotonic() + max(0.0, self.remaining())
            worker.run_cells(cells, deadline, self.skip)
            notes.extend(f"cell {n} raised {text}" for n, text in worker.cell_errors)
            if worker.killed_cell is None:
                break
            notes.append(f"cell {worker.killed_cell} ran past its time limit or killed the kernel; "
                         "it was skipped and the notebook run again without it")
            self.skip.add(worker.killed_cell)
            self._close_worker(worker)
            if self.remaining() <= 0:
                failure = WorkerFailure("timeout", f"the notebook did not finish within {self.limits.submission_seconds:g} s")
                return None, LoadObservation(failure=failure, notes=notes)
        setup = self.probe.setup_message(self.limits, student_dir=str(self.workdir), nonce=self.nonce,
                                         cells=[[n, s] for n, s in code_cells(self.notebook)])
        observation = load_reply(worker.start_observer(setup, max(0.0, self.remaining())), self.nonce, self.limits)
        observation.notes = list(dict.fromkeys(notes))
        if observation.failure:
            self._close_worker(worker)
            return None, observation
        return worker, observation

    def _close_worker(self, worker: KernelWorker) -> None:
        worker.close()
        self.outputs.append(worker.output_text)

    def _retire_worker(self) -> None:
        if self.worker is not None:
            self.outputs.append(_stream_text(self.notebook))
        super()._retire_worker()


def _stream_text(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
    return "".join(parts)

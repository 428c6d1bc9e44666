"""`.ipynb` submissions: the notebook runs cell by cell in a fresh Jupyter kernel
(nbclient + ipykernel, IPython semantics, stdin disabled, a failing cell doesn't stop the
ones after it), then the lab's observer runs inside that kernel and serves case requests
over a private Unix socket. Judging stays in the grader.

A cell that ignores its interrupt or kills the kernel is skipped in a fresh kernel, so
the cells after it still run. Kernels talk over IPC sockets in a private folder, so
parallel graders never race for TCP ports.
"""

from __future__ import annotations

import functools
import hmac
import os
import secrets
import select
import shutil
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..spec.model import Limits
from . import kernel_zygote
from .cgroup import StudentCgroups
from .channel import FramedChannel, WorkerFailure
from .identity import StudentIdentity, hand_over
from .isolation import Isolation
from .limits import apply_rlimits, die_with_grader, rlimits
from .notebook_file import NotebookProblem, code_cells, read_notebook
from .output import CappedOutput
from .session import LoadObservation, Session, WorkerLike, load_reply
from .worker import exit_description, kill_group, scrubbed_env

if TYPE_CHECKING:
    from nbformat import NotebookNode

_BOOTSTRAP = "\n".join(
    (Path(__file__).parent / name).read_text() for name in ("probe_install.py", "kernel_bootstrap.py")
)
_CAP_SOURCE = (Path(__file__).parent / "kernel_bootstrap.py").read_text()
INTERRUPT_GRACE_SECONDS = 3.0
PROBE_CONNECT_SECONDS = 15.0  # from the moment the kernel starts running the bootstrap
OBSERVER_START_SECONDS = 5.0  # the observer's start-up may use this much past the load limit
KERNEL_START_ATTEMPTS = 3
MAX_KERNEL_MESSAGE_BYTES = 16 * 2**20  # a bigger message from the kernel is dropped by ZeroMQ
KERNEL_QUEUE_MESSAGES = 8  # messages ZeroMQ may hold for us per channel before the kernel drops
SECRET_WAIT_SECONDS = 1.0  # a connecting peer must say the secret this fast


class KernelStartError(RuntimeError):
    """The machine could not start a Jupyter kernel: not the submission's fault."""


class OutputBudget:
    """What one kernel may make the grader hold: `cap` characters of output in all, the
    rest counted and dropped before it is stored."""

    def __init__(self, cap: int) -> None:
        self.cap, self.kept, self.dropped = cap, 0, 0

    def take(self, text: str) -> str:
        room = max(0, self.cap - self.kept)
        kept = text[:room]
        self.kept += len(kept)
        self.dropped += len(text) - len(kept)
        return kept

    def note(self) -> str | None:
        if not self.dropped:
            return None
        return f"output limit: {self.kept:,} bytes shown, {self.dropped:,} more dropped"


@dataclass(frozen=True)
class CellIncident:
    """A code cell that did not simply run: it `raised`, was `interrupted` at its time
    limit, was `skipped` (it ignored the interrupt or killed the kernel), or was `not_run`
    (the loading time ran out first). `number` is Jupyter's `In [n]`."""

    number: int
    kind: str
    detail: str = ""

    @property
    def note(self) -> str:
        where = f"cell In [{self.number}]"
        return {
            "raised": f"{where} raised {self.detail}",
            "interrupted": f"{where} {self.detail} and was interrupted (KeyboardInterrupt)",
            "skipped": f"{where} {self.detail}; it was skipped and the notebook run again without it",
            "not_run": f"{where} was not run: {self.detail}",
        }[self.kind]


def _not_run(rest: list[tuple[int, int]], skip: set[int], limits: Limits) -> list[CellIncident]:
    why = f"the notebook's loading time limit of {limits.load_seconds:g} s ran out before it"
    return [CellIncident(number, "not_run", why) for _, number in rest if number not in skip]


def _size(content: Any) -> int:
    """Characters of text in a message's content (iteratively: contents may nest)."""
    total, stack = 0, [content]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            total += 8
    return total


def genuine_peer(peer: socket.socket, secret: str, until: float, uid: int | None) -> bool:
    """Whether a peer on the observer socket is this worker's kernel: it runs as the
    student's user `uid` (when known, by SO_PEERCRED) and says `secret` before `until`."""
    try:
        if uid is not None:
            creds = peer.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] != uid:
                return False
        expected = secret.encode("ascii") + b"\n"
        said = b""
        while len(said) < len(expected) and b"\n" not in said:
            peer.settimeout(max(0.001, until - time.monotonic()))
            chunk = peer.recv(len(expected) - len(said))
            if not chunk:
                return False
            said += chunk
        peer.settimeout(None)
        return hmac.compare_digest(said, expected)
    except OSError:  # timeouts included
        return False


@functools.cache
def _kernel_classes() -> tuple[type, type]:
    """(notebook client, kernel client) that bound what a kernel makes the grader hold:
    ZeroMQ drops messages over MAX_KERNEL_MESSAGE_BYTES and queues few, and cell outputs
    are kept only within the worker's OutputBudget. Made on first use: `.py` grading
    never imports Jupyter."""
    import nbclient
    import zmq
    import zmq.asyncio
    from jupyter_client.asynchronous import AsyncKernelClient

    class BoundedKernelClient(AsyncKernelClient):
        def _context_default(self) -> zmq.asyncio.Context:
            self._created_context = True
            context = zmq.asyncio.Context()
            context.setsockopt(zmq.MAXMSGSIZE, MAX_KERNEL_MESSAGE_BYTES)
            context.setsockopt(zmq.RCVHWM, KERNEL_QUEUE_MESSAGES)
            return context

        async def wait_for_ready(self, timeout: float | None = None) -> None:
            """jupyter_client's wait for the kernel's `kernel_info` reply (IOPub connected),
            without its last step, reading IOPub until it stays quiet for 0.2 s: 200 ms of
            every kernel start spent idle. What is queued is still taken, without waiting;
            messages that come later are told apart by their parent (cells, the
            observer's bootstrap), as they always were."""
            from queue import Empty

            deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
            while True:
                self.kernel_info()
                try:
                    msg = await self.shell_channel.get_msg(timeout=1)
                except Empty:
                    pass
                else:
                    if msg["msg_type"] == "kernel_info_reply":
                        try:
                            await self.iopub_channel.get_msg(timeout=0.2)  # IOPub is connected
                        except Empty:
                            pass
                        else:
                            self._handle_kernel_info_reply(msg)
                            break
                if not await self._async_is_alive():
                    raise RuntimeError("Kernel died before replying to kernel_info")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")
            while True:
                try:
                    await self.iopub_channel.get_msg(timeout=0)
                except Empty:
                    return

    class BoundedNotebookClient(nbclient.NotebookClient):
        budget: OutputBudget

        def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> Any:
            content = msg.get("content")
            if not isinstance(content, dict):
                return None
            if msg.get("msg_type") == "error":  # kept small, always: the load notes name it
                msg["content"] = {
                    "ename": str(content.get("ename", ""))[:200],
                    "evalue": str(content.get("evalue", ""))[:500],
                    "traceback": [],
                }
                return super().output(outs, msg, display_id, cell_index)
            if msg.get("msg_type") == "stream":
                text = self.budget.take(str(content.get("text", "")))
                if not text:
                    return None
                msg["content"] = {**content, "text": text}
            else:  # display data and results: whole or not at all
                size = _size(content)
                if size > self.budget.cap - self.budget.kept:
                    self.budget.dropped += size
                    return None
                self.budget.kept += size
            return super().output(outs, msg, display_id, cell_index)

    return BoundedNotebookClient, BoundedKernelClient


class KernelWorker:
    """A kernel that has run the notebook's cells and now hosts the observer."""

    def __init__(
        self,
        workdir: Path,
        limits: Limits,
        notebook,
        isolation: Isolation,
        hidden: list[Path],
        identity: StudentIdentity | None = None,
        preload: Sequence[tuple[str, str]] = (),
    ) -> None:
        import sys

        from jupyter_client.kernelspec import KernelSpec
        from jupyter_client.manager import AsyncKernelManager

        notebook_client, kernel_client = _kernel_classes()
        self.limits = limits
        self.student_uid = identity.uid if identity else None  # the only peer the observer socket accepts
        self.private = Path(tempfile.mkdtemp(prefix="abgrade-k-"))  # sockets, connection file (mode 0700)
        hand_over(self.private, identity)  # this kernel's uid only: no other student can enter
        self.km = AsyncKernelManager(
            kernel_name="python3",
            transport="ipc",
            ip=str(self.private / "k"),
            connection_file=str(self.private / "kernel.json"),
        )
        self.km.client_factory = kernel_client
        if identity is not None:  # the kernel (the student's uid) must read its connection file
            write_connection_file = self.km.write_connection_file

            def write_and_hand_over(**kwargs: object) -> None:
                write_connection_file(**kwargs)
                os.chown(self.km.connection_file, identity.uid, identity.gid)

            self.km.write_connection_file = write_and_hand_over  # type: ignore[method-assign]
        # the kernel command is ours (this interpreter, wrapped in the isolation), not a kernelspec's
        cap_output = _CAP_SOURCE + f"\n_abgrade_cap_output({int(limits.output_bytes)})\ndel _abgrade_cap_output\n"
        cap_output += _preload_source(preload)
        argv = [
            sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--HistoryManager.enabled=False",
            f"--IPKernelApp.exec_lines={cap_output}",
        ]
        plan = isolation.plan([workdir, self.private], hidden, identity, cwd=workdir)
        self.km._kernel_spec = KernelSpec(argv=isolation.wrap(argv, plan), display_name="Python 3", language="python")
        self.budget = OutputBudget(limits.output_bytes)
        self.client = notebook_client(
            notebook,
            km=self.km,
            timeout=limits.cell_seconds,
            allow_errors=True,
            interrupt_on_timeout=True,
            kernel_name="python3",
            resources={"metadata": {"path": str(workdir)}},
            record_timing=False,
        )
        self.client.budget = self.budget
        self.cgroup = StudentCgroups()
        self.cgroup.set_max(limits.processes)
        self.cgroup.set_memory(limits.memory_mb)
        self._caps = rlimits(limits, self.cgroup.limits_memory, kernel=True)
        # a fork of the kernel zygote where it runs (the same confinement, its imports done once)
        kernel_zygote.adopt(self.km, isolation, self.student_uid, plan, self._caps, self.cgroup.procs_files)
        out_r, self._out_w = os.pipe()
        self.output = CappedOutput(out_r, limits.output_bytes)
        self.incidents: list[CellIncident] = []
        self.case_output: list[str] = []  # what the student's code printed during the cases
        self.killed_cell: int | None = None
        self.channel: FramedChannel | None = None
        self._connection: socket.socket | None = None
        self._bootstrap_id: str | None = None
        self._bootstrap_running: float | None = None  # when the kernel began running the bootstrap
        self.closed = False
        started = time.monotonic()
        self._start_kernel(workdir)
        self.start_seconds = time.monotonic() - started  # the machine's time, not the student's

    def _start_kernel(self, workdir: Path) -> None:
        last: Exception | None = None
        for _ in range(KERNEL_START_ATTEMPTS):
            try:
                self.client.start_new_kernel(
                    cwd=str(workdir),
                    env=scrubbed_env(workdir),
                    stdout=self._out_w,
                    stderr=self._out_w,
                    preexec_fn=self._prepare_kernel,
                )
                self.client.start_new_kernel_client()
                return
            except Exception as exc:  # noqa: BLE001 - retried, then reported as the machine's fault
                last = exc
                self._kill_kernel()
        os.close(self._out_w)
        self.output.finish()
        said = " ".join(self.output.text.split())[-400:]  # the kernel's own last words, if any
        self.cgroup.remove()
        shutil.rmtree(self.private, ignore_errors=True)
        raise KernelStartError(
            f"could not start a Jupyter kernel ({KERNEL_START_ATTEMPTS} attempts): "
            f"{type(last).__name__}: {last}" + (f"; the kernel said: {said}" if said else "")
        )

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
        """Execute the code cells, given as (index, number), in order, skipping `skip`, each
        within min(cell limit, what is left of `deadline`); stop early when the kernel dies
        or a cell outlives its interrupt. Returns seconds spent."""
        from nbclient.exceptions import DeadKernelError

        started = time.monotonic()
        for position, (index, number) in enumerate(cells):
            if number in skip:
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.incidents.extend(_not_run(cells[position:], skip, self.limits))
                break
            limit = min(self.limits.cell_seconds, remaining)
            self.client.timeout = max(1, int(limit + 0.999))
            fired = threading.Event()

            def interrupt_failed(fired: threading.Event = fired) -> None:
                fired.set()
                self._kill_kernel()

            watchdog = threading.Timer(limit + INTERRUPT_GRACE_SECONDS, interrupt_failed)
            watchdog.start()
            cell_started = time.monotonic()
            try:
                self.client.execute_cell(self.client.nb.cells[index], index)
            except DeadKernelError:
                self.killed_cell = number
                self.incidents.append(
                    CellIncident(
                        number,
                        "skipped",
                        f"{self._past(limit)} and ignored the interrupt" if fired.is_set() else "killed the kernel",
                    )
                )
            except Exception as exc:  # noqa: BLE001 - nbclient timeouts and protocol errors
                self.killed_cell = number
                self.incidents.append(
                    CellIncident(number, "skipped", f"could not be run ({type(exc).__name__}: {str(exc)[:200]})")
                )
            finally:
                watchdog.cancel()
            if self.killed_cell is not None:
                break
            spent = time.monotonic() - cell_started
            for output in self.client.nb.cells[index].get("outputs", []):
                if output.get("output_type") == "error":
                    if output.get("ename") == "KeyboardInterrupt" and spent >= limit:
                        self.incidents.append(CellIncident(number, "interrupted", self._past(limit)))
                    else:
                        text = f"{output.get('ename')}: {output.get('evalue', '')}"[:300]
                        self.incidents.append(CellIncident(number, "raised", text))
        return time.monotonic() - started

    def _past(self, limit: float) -> str:
        if limit >= self.limits.cell_seconds:
            return f"ran past its {self.limits.cell_seconds:g} s limit"
        return f"ran past the notebook's loading time limit of {self.limits.load_seconds:g} s"

    def start_observer(self, setup: dict, timeout: float) -> dict | WorkerFailure:
        """Run the observer in the kernel and wait for its first message. Only the genuine
        observer gets in: the socket is in the worker's private folder, a peer must be the
        student's user (when known) and send this worker's secret first; any other peer is
        closed and the wait goes on. The connect deadline counts from the moment the kernel
        starts running the bootstrap (a kernel still flushing a flood of output is not late)."""
        deadline = time.monotonic() + timeout
        path = str(self.private / "probe.sock")
        secret = secrets.token_hex(16)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(path)
            os.chmod(path, 0o666)  # the kernel runs as the student's uid; the 0700 folder keeps others out
            server.listen(8)
            server.setblocking(False)
            code = _BOOTSTRAP + (
                f"\n_abgrade_boot({path!r}, {secret!r}, {setup!r})\n"
                "del _abgrade_boot, _abgrade_install_probe, _abgrade_cap_output\n"
            )
            self._bootstrap_id = self.client.kc.execute(code, silent=True, store_history=False, allow_stdin=False)
            connection = self._accept_genuine(server, secret, deadline)
        finally:
            server.close()
        if isinstance(connection, WorkerFailure):
            self._kill_kernel()
            return connection
        self._connection = connection
        fd = connection.fileno()
        self.channel = FramedChannel(fd, fd, self._kill_kernel, self._died)
        reply = self.channel.receive(max(0.0, deadline - time.monotonic()))
        if isinstance(reply, dict) and isinstance(reply.get("output"), dict):
            dropped = reply["output"].get("dropped")  # what the kernel itself held back
            if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped > 0:
                self.budget.dropped += dropped
        return reply

    def _accept_genuine(self, server: socket.socket, secret: str, deadline: float) -> socket.socket | WorkerFailure:
        while True:
            self._pump_iopub()
            broken = self._bootstrap_error()
            if broken:
                return WorkerFailure(
                    "died",
                    f"the observer could not start in the kernel: {broken} "
                    "(did the notebook replace or patch a standard module?)",
                )
            now = time.monotonic()
            limit = deadline
            if self._bootstrap_running is not None:
                limit = min(deadline, self._bootstrap_running + PROBE_CONNECT_SECONDS)
            if now >= limit:
                if self._bootstrap_running is None:
                    return WorkerFailure(
                        "timeout",
                        "the kernel was still busy (flushing output?) when the time to "
                        "load ran out; the observer never started",
                    )
                return WorkerFailure(
                    "died",
                    "the observer could not start in the kernel "
                    "(did the notebook replace standard modules, or block the kernel?)",
                )
            ready, _, _ = select.select([server], [], [], min(0.05, limit - now))
            if not ready:
                continue
            try:
                peer, _ = server.accept()
            except OSError:
                continue
            if genuine_peer(peer, secret, min(limit, time.monotonic() + SECRET_WAIT_SECONDS), self.student_uid):
                return peer
            peer.close()

    def _bootstrap_error(self) -> str | None:
        """`ename: evalue` when the kernel answered the bootstrap with an error."""
        from jupyter_core.utils import run_sync

        get = run_sync(self.client.kc.shell_channel.get_msg)
        while True:
            try:
                message = get(timeout=0)
            except Exception:  # noqa: BLE001 - queue.Empty: no reply yet
                return None
            if message.get("parent_header", {}).get("msg_id") != self._bootstrap_id:
                continue
            content = message.get("content", {})
            if content.get("status") == "ok":
                return "the observer stopped at once"
            return f"{str(content.get('ename', 'error'))[:100]}: {str(content.get('evalue', ''))[:300]}"

    def request(self, message: dict, timeout: float) -> dict | WorkerFailure:
        assert self.channel is not None
        reply = self.channel.request(message, timeout)
        self._pump_iopub()
        return reply

    def _pump_iopub(self) -> None:
        """Take every message the kernel has published so far: what the student's code
        prints is kept within the output budget (as a `.py` worker's output is), the rest
        counted and dropped; the bootstrap's `busy` status starts its connect clock."""
        from jupyter_core.utils import run_sync

        get = run_sync(self.client.kc.iopub_channel.get_msg)
        while True:
            try:
                message = get(timeout=0)
            except Exception:  # noqa: BLE001 - queue.Empty: nothing more for now (or a closed channel)
                return
            content = message.get("content")
            if not isinstance(content, dict):
                continue
            kind = message.get("msg_type")
            if kind == "stream":
                text = self.budget.take(str(content.get("text", "")))
                if text:
                    self.case_output.append(text)
            elif (
                kind == "status"
                and self._bootstrap_running is None
                and self._bootstrap_id is not None
                and message.get("parent_header", {}).get("msg_id") == self._bootstrap_id
            ):
                self._bootstrap_running = time.monotonic()

    def _died(self, when: str) -> WorkerFailure:
        process = getattr(self.km.provisioner, "process", None) if self.km.provisioner else None
        code = None
        if process is not None:
            try:
                code = process.wait(timeout=2)
            except Exception:  # noqa: BLE001
                code = None
        self._kill_kernel()
        return WorkerFailure(
            "died", f"the notebook's kernel {exit_description(code)}{(' ' + when) if when else ''}", code
        )

    def _kill_kernel(self) -> None:
        """SIGKILL at once: the kernel's state is disposable (its output came over
        iopub), and as the first process of a PID namespace it would ignore SIGTERM."""
        pid = self.pid
        if pid is not None:
            kill_group(pid, getattr(self.km.provisioner, "process", None), grace=0)
        self.cgroup.kill_all()

    @property
    def output_text(self) -> str:
        note = self.budget.note()
        return "".join(self.case_output) + self.output.text + (f"\n[{note}]" if note else "")

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
        self.skip: set[int] = set()  # cells that killed or hung a kernel
        self.incidents: list[CellIncident] = []  # cells that raised, were interrupted, skipped or not run
        self.problem: str | None = None
        self.notebook: NotebookNode | None
        try:
            self.notebook = read_notebook(submission)
        except NotebookProblem as exc:
            self.notebook, self.problem = None, str(exc)

    def _launch(self) -> tuple[WorkerLike | None, LoadObservation]:
        """Run the cells (again in a fresh kernel without any cell that hung or killed
        one) and start the observer, all within the load limit (`load_seconds`, never past
        the submission's budget; kernel start-ups don't count); the observer's start may
        take OBSERVER_START_SECONDS more."""
        if self.notebook is None:
            return None, LoadObservation(problem=self.problem)
        code = [i for i, cell in enumerate(self.notebook.cells) if cell.cell_type == "code"]
        cells = [(index, number) for number, index in enumerate(code, 1)]
        load_limit = min(self.limits.load_seconds, max(0.0, self.remaining()))
        deadline = time.monotonic() + load_limit
        self.incidents = []
        while True:
            worker = KernelWorker(
                self.workdir,
                self.limits,
                self.notebook,
                self.isolation,
                self.hidden,
                self.identity,
                self.probe.extra_modules if self.probe else (),
            )
            deadline = min(deadline + worker.start_seconds, time.monotonic() + max(0.0, self.remaining()))
            worker.run_cells(cells, deadline, self.skip)
            self.incidents.extend(worker.incidents)
            if worker.killed_cell is None:
                break
            self.skip.add(worker.killed_cell)
            self._close_worker(worker)
            if time.monotonic() >= deadline:
                rest = [(i, n) for i, n in cells if n > (worker.killed_cell or 0)]
                self.incidents.extend(_not_run(rest, self.skip, self.limits))
                return None, LoadObservation(failure=self._load_timeout(load_limit), notes=self._notes(None))
        assert self.probe is not None, "configure() the session first"
        setup = self.probe.setup_message(
            self.limits,
            student_dir=str(self.workdir),
            nonce=self.nonce,
            cells=[[n, s] for n, s in code_cells(self.notebook)],
        )
        start_limit = min(max(deadline - time.monotonic(), OBSERVER_START_SECONDS), max(0.0, self.remaining()))
        reply = worker.start_observer(setup, start_limit)
        observation = load_reply(reply, self.nonce, self.limits)
        if isinstance(reply, WorkerFailure) and reply.kind == "timeout":
            observation.failure = WorkerFailure(
                "timeout", reply.message if "busy" in reply.message else self._load_timeout(load_limit).message
            )
        observation.notes = self._notes(worker)
        if observation.failure:
            self._close_worker(worker)
            return None, observation
        return worker, observation

    def _load_timeout(self, limit: float) -> WorkerFailure:
        return WorkerFailure("timeout", f"loading the notebook ran past its time limit of {limit:g} s")

    def _notes(self, worker: KernelWorker | None) -> list[str]:
        notes = [incident.note for incident in self.incidents]
        budget = worker.budget.note() if worker is not None else None
        return list(dict.fromkeys(notes + ([budget] if budget else [])))

    def _close_worker(self, worker: KernelWorker) -> None:
        worker.close()
        self.outputs.append(worker.output_text)

    def _retire_worker(self) -> None:
        if self.worker is not None:
            self.outputs.append(_stream_text(self.notebook))
        super()._retire_worker()

    def printed_so_far(self) -> str:
        if self.worker is None:
            return self.output
        return self.output + _stream_text(self.notebook) + self.worker.output_text


def _preload_source(modules: Sequence[tuple[str, str]]) -> str:
    """Code for the kernel's exec_lines that creates the lab's extra modules (ProbeSetup)
    before any cell runs, as a `.py` worker has them before the import, so that a cell
    can import them (the agents lab's environments). The observer installs its own fresh
    copies later, out of the cells' reach."""
    if not modules:
        return ""
    return (
        "def _abgrade_preload(modules):\n"
        "    import sys, types\n"
        "    for name, source in modules:\n"
        "        module = types.ModuleType(name)\n"
        "        module.__file__ = '<abgrade %s>' % name\n"
        "        sys.modules[name] = module\n"
        "        exec(compile(source, module.__file__, 'exec'), module.__dict__)\n"
        f"_abgrade_preload({[list(m) for m in modules]!r})\ndel _abgrade_preload\n"
    )


def _stream_text(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
    return "".join(parts)

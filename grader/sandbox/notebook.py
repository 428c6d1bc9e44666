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
"""

from __future__ import annotations

import functools
import hmac
import os
import secrets
import select
import shutil
import signal
import socket
import struct
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..spec.model import Limits
from . import kernel_zygote
from .cgroup import StudentCgroups
from .channel import FramedChannel, Timeout, WorkerFailure, as_deadline
from .cpu_clock import CpuMeter, NotStarted
from .deadline import Deadline, Limit, backstop, backstop_text, cpu_limit_text
from .identity import StudentIdentity, hand_over
from .isolation import Isolation
from .limits import apply_rlimits, die_with_grader, rlimits
from .notebook_file import NotebookProblem, code_cells, read_notebook
from .output import CappedOutput
from .session import INTERRUPT_GRACE_SECONDS, LoadObservation, Session, WorkerLike, load_reply
from .socket_folder import kernel_folder
from .worker import exit_description, kill_group, scrubbed_env

if TYPE_CHECKING:
    from nbformat import NotebookNode

_BOOTSTRAP = "\n".join(
    (Path(__file__).parent / name).read_text() for name in ("probe_install.py", "kernel_bootstrap.py")
)
_CAP_SOURCE = (Path(__file__).parent / "kernel_bootstrap.py").read_text()
PROBE_CONNECT_SECONDS = 15.0  # from the moment the kernel starts running the bootstrap
OBSERVER_START_SECONDS = 5.0  # CPU time the observer's start-up may use past the load limit
LOAD = "for loading the notebook"
PER_CELL = "per notebook cell"
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
    """A code cell that did not simply run: it `raised`, was `interrupted` at a time limit
    (`detail` names it), `caught` its interrupt and finished, was `stopped` (it went on
    after its interrupt: loading fails), was `skipped` (it killed the kernel, or could not
    be run), or was `not_run` (the loading time ran out first). `number` is Jupyter's `In [n]`."""

    number: int
    kind: str
    detail: str = ""

    @property
    def note(self) -> str:
        where = f"cell In [{self.number}]"
        return {
            "raised": f"{where} raised {self.detail}",
            "interrupted": f"{where} ran past {self.detail} and was interrupted (KeyboardInterrupt)",
            "caught": f"{where} ran past {self.detail} and was interrupted; it caught the KeyboardInterrupt and finished",
            "stopped": f"{where} ran past {self.detail}, and went on after its interrupt (KeyboardInterrupt) "
            f"until it was stopped",
            "skipped": f"{where} {self.detail}; it was skipped and the notebook run again without it",
            "not_run": f"{where} was not run: {self.detail} ran out before it",
        }[self.kind]


def _not_run(rest: list[tuple[int, int]], skip: set[int], limit: Limit) -> list[CellIncident]:
    return [CellIncident(number, "not_run", limit.says) for _, number in rest if number not in skip]


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


class CellWatchdog:
    """Watches one cell on a thread of its own: when one of `limits` passes it interrupts
    the kernel (`interrupted`: that limit), and when the cell then goes on for
    INTERRUPT_GRACE_SECONDS more of CPU time (or the backstop of that) it kills the kernel
    (`stopped`)."""

    def __init__(self, worker: KernelWorker, limits: Deadline) -> None:
        self.worker, self.limits = worker, limits
        self.interrupted: Limit | None = None
        self.stopped = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="abgrade-cell-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(self.limits.pause()):
            passed = self.limits.passed()
            if passed is not None:
                self.interrupted = passed
                self.worker.interrupt()
                break
        else:
            return
        grace = Deadline(self.worker.meter).charged("interrupt", INTERRUPT_GRACE_SECONDS, "after the interrupt")
        while not self._done.wait(grace.pause()):
            if grace.passed() is not None:
                self.stopped = True
                self.worker._kill_kernel()
                return

    def stop(self) -> None:
        """The cell has ended: stop watching."""
        self._done.set()
        self._thread.join()


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
        try:
            self.private = kernel_folder()  # sockets, connection file: a short path (mode 0700)
        except OSError as exc:
            raise KernelStartError(f"could not make a folder for the kernel's sockets: {exc}") from None
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
        self.killed_cell: int | None = None  # the cell the kernel died in (or was stopped in)
        self.stopped_cell: int | None = None  # the cell that went on after its interrupt
        self.channel: FramedChannel | None = None
        self._connection: socket.socket | None = None
        self._bootstrap_id: str | None = None
        self._bootstrap_running: float | None = None  # when the kernel began running the bootstrap
        self.closed = False
        started = time.monotonic()
        self.meter: CpuMeter = NotStarted()  # the kernel's tree, once it runs
        self._start_kernel(workdir)
        self.meter = self.cgroup.meter(self.pid or 0)
        self.start_clock()
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

    def start_clock(self) -> None:
        """Count the kernel's CPU time from now on (its start-up is the machine's time)."""
        self._baseline = self.meter.seconds()

    def cpu_used(self) -> float:
        """CPU seconds the kernel's tree used since start_clock(); after close(), what it had used."""
        return self.meter.seconds() - self._baseline

    def interrupt(self) -> None:
        """SIGINT to the kernel's process group, as jupyter_client interrupts a kernel."""
        process = getattr(self.km.provisioner, "process", None) if self.km.provisioner else None
        group = getattr(self.km.provisioner, "pgid", None) or self.pid
        if group is None:
            return
        try:
            os.killpg(group, signal.SIGINT)
        except OSError:
            if process is not None:
                try:
                    process.send_signal(signal.SIGINT)
                except OSError:
                    pass

    def run_cells(self, cells: list[tuple[int, int]], load: Deadline, skip: set[int]) -> None:
        """Execute the code cells, given as (index, number), in order, skipping `skip`, each
        within its own limit and what is left of `load` (limits on this kernel's meter);
        stop early when the kernel dies or a cell goes on after its interrupt."""
        from nbclient.exceptions import DeadKernelError

        for position, (index, number) in enumerate(cells):
            if number in skip:
                continue
            ran_out = load.passed()
            if ran_out is not None:
                self.incidents.extend(_not_run(cells[position:], skip, ran_out))
                break
            limits = Deadline(self.meter).charged("cell", self.limits.cell_seconds, PER_CELL).including(load)
            # nbclient's own timeout only as a last resort: the watchdog interrupts and stops
            self.client.timeout = int(2 * backstop(self.limits.cell_seconds) + backstop(INTERRUPT_GRACE_SECONDS))
            watchdog = CellWatchdog(self, limits)
            try:
                self.client.execute_cell(self.client.nb.cells[index], index)
            except DeadKernelError:
                self.killed_cell = number
            except Exception as exc:  # noqa: BLE001 - nbclient timeouts and protocol errors
                self.killed_cell = number
                self.incidents.append(
                    CellIncident(number, "skipped", f"could not be run ({type(exc).__name__}: {str(exc)[:200]})")
                )
            finally:
                watchdog.stop()
            interrupted = watchdog.interrupted
            if watchdog.stopped and interrupted is not None:
                self.killed_cell = self.stopped_cell = number
                self.incidents.append(CellIncident(number, "stopped", interrupted.says))
                break
            if self.killed_cell is not None:
                if not any(i.number == number for i in self.incidents):
                    self.incidents.append(CellIncident(number, "skipped", "killed the kernel"))
                break
            errors = [o for o in self.client.nb.cells[index].get("outputs", []) if o.get("output_type") == "error"]
            for output in errors:
                if output.get("ename") == "KeyboardInterrupt" and interrupted is not None:
                    self.incidents.append(CellIncident(number, "interrupted", interrupted.says))
                else:
                    text = f"{output.get('ename')}: {output.get('evalue', '')}"[:300]
                    self.incidents.append(CellIncident(number, "raised", text))
            if interrupted is not None and not errors:
                self.incidents.append(CellIncident(number, "caught", interrupted.says))

    def start_observer(self, setup: dict, timeout: Timeout) -> dict | WorkerFailure:
        """Run the observer in the kernel and wait for its first message within `deadline`.
        Only the genuine observer gets in: the socket is in the worker's private folder, a
        peer must be the student's user (when known) and send this worker's secret first;
        any other peer is closed and the wait goes on. The connect deadline counts from the
        moment the kernel starts running the bootstrap (a kernel still flushing a flood of
        output is not late)."""
        deadline = as_deadline(timeout)
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
        reply = self.channel.receive(deadline)
        if isinstance(reply, dict) and isinstance(reply.get("output"), dict):
            dropped = reply["output"].get("dropped")  # what the kernel itself held back
            if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped > 0:
                self.budget.dropped += dropped
        return reply

    def _accept_genuine(self, server: socket.socket, secret: str, deadline: Deadline) -> socket.socket | WorkerFailure:
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
            connect_by = float("inf")
            if self._bootstrap_running is not None:
                connect_by = self._bootstrap_running + PROBE_CONNECT_SECONDS
            passed = deadline.passed()
            if passed is not None or now >= connect_by:
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
            ready, _, _ = select.select([server], [], [], min(0.05, deadline.pause(), max(0.0, connect_by - now)))
            if not ready:
                continue
            try:
                peer, _ = server.accept()
            except OSError:
                continue
            if genuine_peer(peer, secret, min(connect_by, time.monotonic() + SECRET_WAIT_SECONDS), self.student_uid):
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

    def request(self, message: dict, timeout: Timeout) -> dict | WorkerFailure:
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
        self.meter.seconds()  # the last reading is kept (cpu_used after the kernel is gone)
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
        """Run the cells (again in a fresh kernel without any cell that killed one) and
        start the observer, all within the load limit (`load_seconds` of the kernels' CPU
        time and its backstop, never past the submission's; kernel start-ups don't count);
        the observer's start may take OBSERVER_START_SECONDS more."""
        if self.notebook is None:
            return None, LoadObservation(problem=self.problem)
        code = [i for i, cell in enumerate(self.notebook.cells) if cell.cell_type == "code"]
        cells = [(index, number) for number, index in enumerate(code, 1)]
        self.incidents = []
        cpu_spent = 0.0  # CPU time of the cells in kernels that died
        started, machine = time.monotonic(), 0.0  # kernel start-ups are the machine's time
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
            machine += worker.start_seconds
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
                self.incidents.extend(_not_run(rest, self.skip, ran_out))
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
        notes = [incident.note for incident in self.incidents]
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

"""A Jupyter kernel that runs one notebook for one student: started confined (forked from
the kernel zygote where it runs, else one interpreter of its own, wrapped in the
isolation), its cells run under their limits (cells.py), then the lab's observer started
in it (observer_socket.py) to serve case requests; closed, it is killed with its whole
cgroup and its private folder goes. Never reused."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import time
from collections.abc import Sequence
from pathlib import Path

from ..spec.model import Limits
from . import kernel_zygote
from .cells import CellIncident, CellWatchdog, load_magic, not_run, timed_definitions
from .cgroup import StudentCgroups
from .channel import FramedChannel, Timeout, WorkerFailure, as_deadline
from .cpu_clock import CpuMeter, NotStarted
from .deadline import Deadline, backstop
from .identity import StudentIdentity, hand_over
from .isolation import Isolation
from .kernel_clients import OutputBudget, kernel_classes
from .limits import apply_rlimits, die_with_grader, rlimits
from .observer_socket import accept_observer
from .output import CappedOutput
from .session import INTERRUPT_GRACE_SECONDS
from .socket_folder import kernel_folder
from .worker import exit_description, kill_group, scrubbed_env

_BOOTSTRAP = "\n".join(
    (Path(__file__).parent / name).read_text() for name in ("probe_install.py", "kernel_bootstrap.py")
)
_CAP_SOURCE = (Path(__file__).parent / "kernel_bootstrap.py").read_text()
_SEED_SOURCE = (Path(__file__).parent / "student_random.py").read_text()
PER_CELL = "per notebook cell"
KERNEL_START_ATTEMPTS = 3


class KernelStartError(RuntimeError):
    """The machine could not start a Jupyter kernel: not the submission's fault."""


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
        random_seed: int | None = None,
        launch_only: bool = False,
        own_thread: bool = False,
    ) -> None:
        """`random_seed`: what the student's `random` and numpy's global generator are
        seeded with before the first cell (seeding.student_seed); None: from the system's
        entropy, as a fresh interpreter (never the kernel zygote's state, shared by its forks).
        `launch_only`: start the kernel's process and return without waiting for it
        (a kernel started ahead for a known next submission); connect() before use.
        `own_thread`: it is launched on a thread that runs nothing else of Jupyter's (the
        batch's opening thread, batch/task.py): the event loop jupyter_client made there is
        closed once the kernel's process is started (_close_thread_loop)."""
        import sys

        from jupyter_client.kernelspec import KernelSpec
        from jupyter_client.manager import AsyncKernelManager

        notebook_client, kernel_client = kernel_classes()
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
        cap_output += "_abgrade_exit_raises()\ndel _abgrade_exit_raises\n"
        cap_output += "_abgrade_ignore_breakpoints()\ndel _abgrade_ignore_breakpoints\n"
        cap_output += preload_source(preload)
        cap_output += seed_source(random_seed)
        argv = [
            sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--HistoryManager.enabled=False",
            # the banner's tip is a draw from the student's `random` at every kernel_info
            # request (as many as the client needs to see the kernel ready: the machine's load)
            "--InteractiveShell.enable_tip=False",
            f"--IPKernelApp.exec_lines={one_line_cell(cap_output, 'setup')}",
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
        self.meter: CpuMeter = NotStarted()  # the kernel's tree, once it runs
        self._baseline = 0.0
        self._workdir = workdir
        self._launched = False  # the kernel's process started (it may still be initialising)
        self._own_thread = own_thread
        self.connected = False  # ready: it answered kernel_info, and its CPU clock runs
        self.start_seconds = 0.0  # the machine's time, not the student's: connect()'s wait
        if launch_only:
            self._launch_early()
        else:
            self.connect()

    def _launch_early(self) -> None:
        """Start the kernel's process and return at once: it initialises on its own
        (about 185 ms of wall time) while the grader goes on with other work; connect()
        waits for it. A launch that fails here is tried again by connect(). Its time is
        not in start_seconds: it was spent before this submission's grading began."""
        try:
            self._launch()
        except Exception:  # noqa: BLE001 - connect() starts it again, the usual way
            self.kill_kernel()
        finally:
            if self._own_thread:
                _close_thread_loop()

    def _launch(self) -> None:
        self.client.start_new_kernel(
            cwd=str(self._workdir),
            env=scrubbed_env(self._workdir),
            stdout=self._out_w,
            stderr=self._out_w,
            preexec_fn=self._prepare_kernel,
        )
        self._launched = True

    def connect(self) -> None:
        """Wait for the kernel to be ready (start it first unless it was launched early),
        then start its CPU clock: the submission's limits count from here, whenever the
        kernel's process was started. Raises KernelStartError after KERNEL_START_ATTEMPTS."""
        if self.connected:
            return
        started = time.monotonic()
        self._start_kernel()
        self.meter = self.cgroup.meter(self.pid or 0)
        self.start_clock()
        self.connected = True
        self.start_seconds = time.monotonic() - started

    def _start_kernel(self) -> None:
        last: Exception | None = None
        for _ in range(KERNEL_START_ATTEMPTS):
            try:
                if not self._launched:
                    self._launch()
                self.client.start_new_kernel_client()
                return
            except Exception as exc:  # noqa: BLE001 - retried, then reported as the machine's fault
                last = exc
                self.kill_kernel()
                self._launched = False
        self.closed = True
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

    def cpu_used(self, reading: float | None = None) -> float:
        """CPU seconds the kernel's tree used since start_clock(); after close(), what it had used. `reading`: the meter's, just taken."""
        return (self.meter.seconds() if reading is None else reading) - self._baseline

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
                self.incidents.extend(not_run(cells[position:], skip, ran_out))
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
                    evalue = str(output.get("evalue") or "")
                    text = (f"{output.get('ename')}: {evalue}" if evalue else str(output.get("ename")))[:300]
                    self.incidents.append(CellIncident(number, "raised", text))
            if interrupted is not None and not errors:
                self.incidents.append(CellIncident(number, "caught", interrupted.says))
            source = str(self.client.nb.cells[index].get("source", ""))
            loaded = load_magic(source)
            if loaded is not None and not errors:
                self.incidents.append(CellIncident(number, "loaded", loaded))
            if timed_definitions(source) and not errors:
                self.incidents.append(CellIncident(number, "timed"))

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
                "del _abgrade_boot, _abgrade_install_probe, _abgrade_cap_output, _abgrade_exit_raises, "
                "_abgrade_ignore_breakpoints\n"
            )
            self._bootstrap_id = self.client.kc.execute(
                one_line_cell(code, "bootstrap"), silent=True, store_history=False, allow_stdin=False
            )
            connection = accept_observer(
                server, secret, deadline, self.student_uid, self._bootstrap_error, lambda: self._bootstrap_running
            )
        finally:
            server.close()
        if isinstance(connection, WorkerFailure):
            self.kill_kernel()
            return connection
        self._connection = connection
        fd = connection.fileno()
        self.channel = FramedChannel(fd, fd, self.kill_kernel, self._died)
        reply = self.channel.receive(deadline)
        if isinstance(reply, dict) and isinstance(reply.get("output"), dict):
            dropped = reply["output"].get("dropped")  # what the kernel itself held back
            if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped > 0:
                self.budget.dropped += dropped
        return reply

    def _bootstrap_error(self) -> str | None:
        """`ename: evalue` when the kernel answered the bootstrap with an error (what the
        kernel published so far is taken first)."""
        from jupyter_core.utils import run_sync

        self._pump_iopub()
        channel = self.client.kc.shell_channel
        get = run_sync(channel.get_msg)
        while True:
            if not _holds_message(channel):
                return None
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

        channel = self.client.kc.iopub_channel
        get = run_sync(channel.get_msg)
        while _holds_message(channel):
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
        self.kill_kernel()
        return WorkerFailure(
            "died", f"the notebook's kernel {exit_description(code)}{(' ' + when) if when else ''}", code
        )

    def kill_kernel(self) -> None:
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
        self.kill_kernel()
        self.meter.close()  # its kept descriptor (cpu_clock.CgroupCpu); the last reading stays
        try:
            if self.client.kc is not None:
                self.client.kc.stop_channels()
        except Exception:  # noqa: BLE001 - best effort: the private folder goes anyway
            pass
        self._release_zmq()
        try:
            os.close(self._out_w)
        except OSError:
            pass
        self.output.finish()
        self.cgroup.remove()
        shutil.rmtree(self.private, ignore_errors=True)

    def _release_zmq(self) -> None:
        """Close the kernel manager's control socket and end the ZeroMQ contexts the
        manager and the client made, now. Left to the collector, they lived on in the
        worker's reference cycles, and one that lasted to the interpreter's exit could hang
        it for good: pyzmq leaves its sockets open at exit, and jupyter_client's __del__
        then ends the context, which waits for every socket to close (a test run sat in
        zmq's poll after its last test, no kernel alive)."""
        contexts = []
        client = self.client.kc
        if client is not None and getattr(client, "_created_context", False):
            contexts.append(client.context)
        control = getattr(self.km, "_control_socket", None)
        if control is not None:
            try:
                control.close(linger=0)
            except Exception:  # noqa: BLE001 - closed already
                pass
            self.km._control_socket = None
        if getattr(self.km, "_created_context", False):
            contexts.append(self.km.context)
        for context in contexts:
            try:
                if not context.closed:
                    context.destroy(linger=0)  # its sockets closed at once, then the context ended
            except Exception:  # noqa: BLE001 - best effort, as the rest of close()
                pass


def import_jupyter() -> None:
    """Import now what a notebook's kernel and its grading use of Jupyter (the clients,
    the kernel manager, nbclient): a batch's grader process does it before its first
    grading, to freeze them with its other long-lived objects (batch/task.py)."""
    import jupyter_client.kernelspec  # noqa: F401
    import jupyter_client.manager  # noqa: F401
    import jupyter_core.utils  # noqa: F401
    import nbclient.exceptions  # noqa: F401

    kernel_classes()


def _close_thread_loop() -> None:
    """Close the event loop jupyter_client's calls made for this thread (a batch's grader
    process launches each next kernel on its opening thread, batch/task.py): what a launch
    leaves on its loop (the kernel manager's `ready` future, anything its ZeroMQ asyncio
    sockets registered) goes with it, instead of piling up on one loop kept from launch to
    launch. Nothing of the launch awaits on it later: the grading's thread connects to the
    kernel with its own loop; the next launch gets a new one."""
    from jupyter_core.utils import ensure_event_loop

    loop = ensure_event_loop()
    if not loop.is_running():
        loop.close()


def _holds_message(channel: object) -> bool:
    """Whether a Jupyter channel's ZeroMQ socket has a message to read now, asked without
    an event loop: get_msg(timeout=0) runs one (through run_sync) even to find nothing,
    and the grader looks after every case request, when the kernel has mostly published
    nothing (about a quarter of the grader's CPU spent talking to a kernel). A closed
    channel holds nothing, as get_msg would have said by raising."""
    import zmq

    socket = getattr(channel, "socket", None)
    if socket is None:
        return False
    try:
        return bool(socket.getsockopt(zmq.EVENTS) & zmq.POLLIN)
    except zmq.ZMQError:
        return False


def one_line_cell(code: str, name: str) -> str:
    """What the kernel is asked to run for our own `code` (its setup in exec_lines, the
    observer's bootstrap): one line that compiles and runs it in the user namespace, as
    IPython would have run `code` itself. IPython tokenizes and parses a cell's text (its
    input transformers, its check for top-level await) before compiling it; of our code
    as one string literal it reads a single token: the setup's 8 KB 4.1 -> 0.3 ms, the
    bootstrap's 20 KB (the observer's and runtime's sources, the cells', the setup) 3.2 ->
    0.9 ms of the kernel's CPU per notebook.

    The code runs in a namespace of its own, not the student's: a function defined in the
    user namespace looks its builtins up there when it runs, so a notebook's `from numpy
    import *` (numpy's max, sum, round, all, any, ...) or a variable named `str`, `type`
    or `next` reached the grader's output cap and observer, and a correct notebook got 0.
    Only `__import__` is taken from the student's builtins (`exec` and `compile` come from
    the builtins module, and the code reaches the user namespace by get_ipython())."""
    return (
        "__import__('builtins').exec(__import__('builtins').compile("
        f"{code!r}, '<abgrade {name}>', 'exec'), "
        "{'__name__': '__abgrade__', 'get_ipython': __import__('IPython').get_ipython})\n"
    )


def seed_source(value: int | None) -> str:
    """Code for the kernel's exec_lines, run before any cell (after the lab's modules are
    made, which must not draw from it): seed the student's random generators with `value`."""
    return _SEED_SOURCE + f"\n_abgrade_seed_random({value!r})\ndel _abgrade_seed_random\n"


def preload_source(modules: Sequence[tuple[str, str]]) -> str:
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

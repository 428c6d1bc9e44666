"""A zygote's own program (run as `python -c CONFINE_SOURCE + THIS + "main(FD)"`, so it
needs nothing of the grader). The kernel zygote imports ipykernel, IPython, zmq and tornado
once (not debugpy: its kernels have no debugger), then, for each request on its private
control socket (inherited from the grader, fd FD, never a path), forks a fresh kernel that
confines itself exactly as the `unshare ... python -I -S -c CONFINE` command of today's
path does, then starts the kernel app. The worker zygote (`main(FD, "worker")`, run as `python -I -S -u -c` with the `.py`
worker's bootstrap in front, as a worker is) imports what the observer and a typical
submission import, and its forks confine themselves as a worker started with `unshare
... python -I -S -u -c BOOTSTRAP` does, then serve the grader as that worker would: with
the two pipes of its private channel passed along with the request.

Nothing of a student ever runs in the zygote: it imports, forks and reaps. It creates no
thread, no ZeroMQ context, no event loop and no kernel (forking those is unsafe); every
fork is a never-used kernel that runs one notebook and dies. It is a child subreaper, so
the kernels it forks are reaped at once (not left as zombies of the machine's init), and
it dies with the grader (PR_SET_PDEATHSIG, set by the grader between fork and exec).

A request is a JSON line `{"id"}` with two descriptors passed along (SCM_RIGHTS): the
kernel's output pipe and one end of a socket that holds the request itself (`{"args",
"plan", "env", "cgroups", "rlimits"}`, then the end of the stream); a worker's carries two
more, its channel's pipes (from the grader, to the grader). The zygote forks at
once and only the fork reads that socket: no path, environment or buffer of any grading
ever enters the zygote's memory, so no later fork inherits one (a fork's heap is a copy of
the zygote's, freed memory included). Replies are `{"id", "pid"}` or `{"id", "error"}`,
and `{"exit": PID, "status": CODE}` when a kernel ends (CODE < 0: killed by that signal,
as subprocess says)."""

import gc
import json
import os
import select
import signal
import socket
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # in front of this source at run time
    from grader.sandbox.confine import MS_NODEV, MS_NOSUID, MS_PRIVATE, MS_REC, _fail, confine

MS_NOEXEC = 8
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = (
    0x00020000,
    0x04000000,
    0x08000000,
    0x20000000,
    0x40000000,
)
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
# what a kernel imports before and while it initializes: imported once, here (init_kernel
# imports ipykernel's debugger module; debugpy itself is kept out, see main)
PREIMPORT = (
    "zmq",
    "tornado.ioloop",
    "tornado.gen",
    "tornado.locks",
    "tornado.queues",
    "tornado.platform.asyncio",
    "IPython",
    "IPython.core.completerlib",
    "IPython.core.debugger",
    "IPython.core.logger",
    "IPython.core.oinspect",
    "IPython.extensions.storemagic",
    "IPython.utils.wildcard",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "ipykernel.debugger",
    "ipykernel.iostream",
    "ipykernel.heartbeat",
    "ipykernel.parentpoller",
    "ipykernel.comm",
    "resource",  # and what a fork imports itself before the kernel (_child): 1.4 ms of a fork's CPU
    "tempfile",  # (IPython imports it already; named so that tests/test_worker_zygote.py sees it)
    # and what every kernel imported itself, as it started or ran its first cells (ipykernel's
    # init_io, IPython's completer and a codec): a C extension loaded from disk in each fork,
    # about 3 ms of a kernel's CPU at load 16 (tests/test_kernel_zygote.py lists what a kernel
    # imports that its zygote has not)
    "faulthandler",
    "unicodedata",
    "encodings.unicode_escape",
)
# what the `.py` worker's bootstrap and observers import, and numpy where the lab's observer
# does (about 60 ms of CPU each; worker_zygote.preimports_for): imported once, in the worker
# zygote. Also
# everything a fork imports itself before the student's code (_child: `tempfile`, with
# shutil's bz2 and lzma, was about 5 ms of every fork's CPU, under the seccomp filter;
# tests/test_worker_zygote.py checks the list covers _child's imports)
WORKER_PREIMPORT = (
    "json",
    "resource",
    "types",
    "collections",
    "importlib.util",
    "inspect",
    "linecache",
    "re",
    "random",
    "copy",
    "math",
    "heapq",
    "functools",
    "itertools",
    "traceback",
    "tempfile",
)
WORKER_OPTIONAL = ("numpy",)  # only where the lab's own code in the student process imports it
LAUNCHER = ["ipykernel_launcher"]  # sys.argv[0] of a kernel, as `-m ipykernel_launcher` makes it
REAP_SECONDS = 1.0  # the loop reaps on every SIGCHLD (_child_exits_wake); this only as a backstop
REQUEST_SECONDS = 30.0  # the grader wrote the request before passing its socket: it is there at once


def _die_with_parent(libc):
    parent = os.getppid()
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _status(code):
    if os.WIFSIGNALED(code):
        return -os.WTERMSIG(code)
    return os.WEXITSTATUS(code)


def _read_request(fd):
    """The request, read in the fork from its own socket, up to the end of the stream."""
    chunks = []
    with socket.socket(fileno=fd) as source:
        source.settimeout(REQUEST_SECONDS)
        while True:
            chunk = source.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    return json.loads(b"".join(chunks))


def _child(fds, libc, kind):
    """In the fork: read the request, then the same steps, in the same order, as today's
    path (the grader's preexec_fn, `unshare --fork --kill-child --mount-proc`, confine.py),
    then the kernel app or, for a worker, its bootstrap's service."""
    import resource

    out_fd, request_fd, channel = fds[0], fds[1], fds[2:]
    signal.set_wakeup_fd(-1)  # the zygote's SIGCHLD pipe: closed below, its number free for reuse
    os.setsid()  # its own session and process group, as jupyter_client or a worker's Popen starts it
    _die_with_parent(libc)
    request = _read_request(request_fd)
    for number in range(1, signal.NSIG):  # the zygote's signal dispositions are not the child's
        if number not in (signal.SIGKILL, signal.SIGSTOP):
            try:
                signal.signal(number, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    _close_all_but(channel)  # the control socket above all: no child may talk to the zygote
    for name, value in request["rlimits"].items():
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError):
            pass
    pid = str(os.getpid()).encode()
    for procs in request["cgroups"]:  # counted from here on, as the preexec_fn's join does
        fd = os.open(procs, os.O_WRONLY)
        try:
            os.write(fd, pid)
        finally:
            os.close(fd)
    plan = request["plan"]
    if plan.get("namespace"):
        flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET
        if libc.unshare(flags) != 0:
            _fail(111, "unshare")
        child = os.fork()  # the PID namespace's first process
        if child:  # `unshare --fork`: wait and pass the exit on, ignoring what it would
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                try:
                    _, code = os.waitpid(child, 0)
                    break
                except ChildProcessError:
                    os._exit(1)
                except InterruptedError:
                    continue
            if os.WIFSIGNALED(code):
                signal.signal(os.WTERMSIG(code), signal.SIG_DFL)
                os.kill(os.getpid(), os.WTERMSIG(code))
            os._exit(os.WEXITSTATUS(code) if os.WIFEXITED(code) else 1)
        _die_with_parent(libc)  # `--kill-child`
        if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            _fail(111, "mount --make-rprivate /")
        if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
            _fail(111, "mount /proc")
    confine(plan, libc)  # mounts, capabilities, uid, no_new_privs, seccomp, chdir
    os.environ.clear()
    os.environ.update(request["env"])
    import tempfile

    tempfile.tempdir = None  # TMPDIR is the child's work folder, not whatever the zygote saw
    if kind == "worker":  # its setup seeds its random generators, per grading (bootstrap.py)
        serve_confined(channel[0], channel[1])  # type: ignore[name-defined]  # noqa: F821 - bootstrap.py, in front
        return
    sys.argv = [LAUNCHER[0], *request["args"]]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance(request["args"])


def _close_all_but(keep):
    """Close every descriptor from 3 up but those in `keep`."""
    low = 3
    for fd in sorted(keep):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


def _serve(control, libc, kind, door=None):
    """Fork a child for each request. Without a `door`, one channel (the grader's control
    socket): its end ends the zygote, and its forks with it. With one (a server's zygote,
    grader/serve/zygotes.py), each served grade sends its own channel through the door; a
    request's replies and its fork's exit go on the channel it came on; a channel that ends
    (its grade finished, or was killed) takes its forks still running with it (SIGKILL, as
    a cold grade's death signal would); the zygote ends once the server's control socket
    and every channel have."""
    wake = _child_exits_wake()
    channels = {control.fileno(): control}
    buffers = {control.fileno(): b""}
    owners: dict[int, int] = {}  # a fork's pid -> the channel it was asked for on
    main = control.fileno()
    while True:
        while True:  # reap: children that ended, and orphans of theirs (subreaper)
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not pid:
                break
            owner = channels.get(owners.pop(pid, main if door is None else -1))
            if owner is not None:
                _say(owner, {"exit": pid, "status": _status(code)})
        watched = [*channels.values(), wake] + ([door] if door is not None else [])
        ready, _, _ = select.select(watched, [], [], REAP_SECONDS)
        if wake in ready:
            _drain(wake)
        if door is not None and door in ready:
            door = _open_channel(door, channels, buffers)
        for channel in [c for c in ready if c is not wake and c is not door and c.fileno() in channels]:
            fd = channel.fileno()
            try:
                data, fds, _, _ = socket.recv_fds(channel, 1 << 12, 4)
            except OSError:
                data, fds = b"", []
            if not data:
                for fd_ in fds:
                    os.close(fd_)
                if fd == main and door is None and len(channels) == 1:
                    os._exit(0)  # the grader closed its end
                _drop(channel, channels, buffers, owners)
                if fd == main and door is not None:
                    door.close()  # the server is gone: no new grade comes in
                    door = None
                if main not in channels and not channels:
                    os._exit(0)
                continue
            buffers[fd] += data
            if b"\n" not in buffers[fd]:
                for fd_ in fds:
                    os.close(fd_)
                continue
            line, buffers[fd] = buffers[fd].split(b"\n", 1)
            number = int(json.loads(line)["id"])  # all the zygote ever reads of a request
            if len(fds) != (4 if kind == "worker" else 2):
                for fd_ in fds:
                    os.close(fd_)
                _say(channel, {"id": number, "error": "not the descriptors of a request"})
                continue
            try:
                pid = os.fork()
            except OSError as exc:
                for fd_ in fds:
                    os.close(fd_)
                _say(channel, {"id": number, "error": str(exc)})
                continue
            if pid == 0:
                code = 1
                try:
                    _child(fds, libc, kind)
                    code = 0
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
                except BaseException:  # noqa: BLE001 - say why on the child's own output, never return to the loop
                    import traceback

                    traceback.print_exc()
                finally:
                    os._exit(code)
            for fd_ in fds:
                os.close(fd_)
            owners[pid] = fd
            _say(channel, {"id": number, "pid": pid})


def _say(channel, message):
    """One line to a channel; a channel whose grade is gone is closed when its end is read."""
    try:
        channel.sendall(json.dumps(message).encode() + b"\n")
    except OSError:
        pass


def _open_channel(door, channels, buffers):
    """A served grade's channel, passed through the door (SCM_RIGHTS): answered `ready` on
    it. The door once every holder closed it: None."""
    try:
        data, fds, _, _ = socket.recv_fds(door, 64, 1)
    except OSError:
        data, fds = b"", []
    if not data and not fds:
        door.close()
        return None
    for fd in fds:
        try:
            channel = socket.socket(fileno=fd)
        except OSError:
            os.close(fd)
            continue
        os.set_inheritable(fd, False)
        channels[fd] = channel
        buffers[fd] = b""
        _say(channel, {"ready": os.getpid()})
    return door


def _drop(channel, channels, buffers, owners):
    """A channel that ended: its forks still running are killed (their process group: the
    fork and its namespace's processes), as a cold grade's students die with it."""
    fd = channel.fileno()
    for pid, owner in list(owners.items()):
        if owner == fd:
            del owners[pid]
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    del channels[fd], buffers[fd]
    channel.close()


def _child_exits_wake():
    """A pipe that a byte arrives on whenever a child ends (SIGCHLD, through Python's wakeup
    fd): the loop reaps at once, so a grader waiting for a killed kernel's exit status
    hears of it in well under a millisecond (a 20 ms poll made every kernel's close wait
    10 ms on average, on the grader's critical path, and woke the zygote 50 times a
    second for nothing). Each fork turns it off before anything else (_child)."""
    wake, write = os.pipe()
    os.set_blocking(wake, False)
    os.set_blocking(write, False)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)  # a handler, so that the wakeup fd is written
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    return wake


def _drain(fd):
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def main(fd, kind="kernel", site_paths=(), optional=WORKER_OPTIONAL, door=None):
    """`optional`: which of WORKER_OPTIONAL a worker zygote imports (its lab's, worker_zygote.py);
    `door`: a server's zygote takes its grades' channels on it (_serve)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    control = socket.socket(fileno=fd)
    os.set_inheritable(fd, False)
    if door is not None:
        door = socket.socket(fileno=door)
        os.set_inheritable(door.fileno(), False)
    if sys.path and sys.path[0] == "":  # as ipykernel_launcher: the kernel's init_path puts its cwd back
        del sys.path[0]
    try:
        import importlib
        import importlib.util

        if kind == "worker":
            sys.path.extend(site_paths)  # as a worker's bootstrap does (-S skipped site)
            for name in WORKER_PREIMPORT:
                importlib.import_module(name)
            for name in optional:
                try:
                    importlib.import_module(name)
                except ImportError:
                    pass
        else:
            # ipykernel without its debugger (debugpy): ipykernel takes debugpy's ImportError
            # as "not installed" and every kernel then starts without a debugger, which no
            # grading uses; a kernel holds 140 fewer modules, and its start, which walks
            # every module for the debugger and writes to (so copies) the pages they live
            # on, takes about 8 ms less CPU. The entry goes after the imports: a cell can
            # still `import debugpy`, as in a fresh interpreter.
            sys.modules["debugpy"] = None  # type: ignore[assignment]
            try:
                for name in PREIMPORT:  # imported once here, for every kernel forked from here
                    importlib.import_module(name)
            finally:
                if sys.modules.get("debugpy", 0) is None:
                    del sys.modules["debugpy"]
            spec = importlib.util.find_spec("ipykernel_launcher")
            LAUNCHER[0] = (spec.origin if spec else None) or LAUNCHER[0]
        threads = len(os.listdir("/proc/self/task"))
        if threads != 1 or sys.gettrace() is not None:  # forking a thread or a tracer is unsafe
            raise RuntimeError(f"the imports left {threads} threads, trace {sys.gettrace()!r}")
    except BaseException as exc:  # noqa: BLE001 - the grader falls back to an interpreter per child
        control.sendall(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode() + b"\n")
        os._exit(1)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # every object made so far (the imports) goes to the collector's permanent generation:
    # a fork's collections never walk them, so they never write to (and copy) those pages;
    # that walk was about 30 ms of each forked kernel's start-up CPU (100 -> 68 ms)
    gc.freeze()
    control.sendall(json.dumps({"ready": os.getpid()}).encode() + b"\n")
    _serve(control, libc, kind, door)

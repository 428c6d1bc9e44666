"""The request's child: forked by the server for one request, it becomes the client's
grade. It takes the client's folder (fchdir), its stdin, stdout and stderr, argv, umask
and environment, puts back what a fork of a long-lived process carries (the signal
handlers of a fresh interpreter, the standard streams built for the new descriptors as
CPython builds them, `tempfile`'s folder, the random state), runs `grader.cli.run`
exactly as a cold process would, ends as an interpreter ends (threads joined, `atexit`,
streams flushed) and sends the exit code back. It never returns into the server's code:
it leaves by `os._exit`.

While it runs, a thread waits on the connection: the client gone (killed, even by
SIGKILL) kills this child with SIGKILL, as if the client's own grade had been killed, so
its students are ended and cleaned as a killed cold grade's are (their death signal, the
uid lease's lock, the next grading's sweep)."""

from __future__ import annotations

import _socket
import atexit
import gc
import io
import os
import signal
import sys
import threading
from dataclasses import dataclass

from . import wire

KILLED_BY_SIGINT = -1  # _run's code for an uncaught KeyboardInterrupt
ENTRY_MODULE = "grader.cli"  # its `run`: `main` without the hand-over to a server


@dataclass(frozen=True)
class Request:
    """A grade handed over: the client's words and umask, its environment, and the
    descriptors of its folder and of its stdin, stdout and stderr (in this order)."""

    argv: list[str]
    umask: int
    environ: dict[str, str]
    fds: list[int]


def become_grade(connection: _socket.socket, request: Request, handlers: dict, keep: tuple[int, ...]) -> None:
    """In the forked child: run the client's grade and exit (never returns). `handlers`
    are the signal handlers the server's interpreter started with; `keep` the server's
    descriptors to close here (its socket, its lock)."""
    code = 1
    finished = threading.Event()
    try:
        for fd in keep:
            os.close(fd)
        # a session of its own, without a terminal: a Ctrl-C to a foreground server's
        # process group (or its terminal's hang-up) stops the server, never a grade in flight
        os.setsid()
        try:
            wire.send(connection, ("taken", os.getpid()))
        except OSError:
            os._exit(0)  # the client stopped waiting (a signal, its time-out) and grades cold
        _restore_signals(handlers)
        _take_process(request)
        threading.Thread(target=_watch, args=(connection, finished), name="abgrade-serve-watch", daemon=True).start()
        code = _run(request.argv)
        _finish_like_an_interpreter()
        finished.set()
        wire.send(connection, ("signal", signal.SIGINT.value) if code == KILLED_BY_SIGINT else ("exit", code))
    except BaseException:  # noqa: BLE001 - nothing may unwind into the server's frames
        finished.set()
        try:
            sys.excepthook(*sys.exc_info())
            _flush()
        finally:
            os._exit(3)
    os._exit(0)


def _run(argv: list[str]) -> int:
    """`grader.cli.run` as the console script runs `main`: SystemExit's code as the
    interpreter reads it, an uncaught exception printed as the interpreter prints it."""
    import importlib

    # named, as the console script names `grader.cli:main` (pyproject.toml): the CLI sits
    # above the commands, and this package below them (tests/test_architecture.py)
    run = importlib.import_module(ENTRY_MODULE).run
    sys.argv = list(argv)
    try:
        return _exit_code(run())
    except SystemExit as exc:
        return _exit_code(exc.code)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        return KILLED_BY_SIGINT  # a cold interpreter ends by SIGINT here: so does the client
    except BaseException:  # noqa: BLE001 - a crash of the grader is printed, not raised here
        sys.excepthook(*sys.exc_info())
        return 1


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _restore_signals(handlers: dict) -> None:
    for number, handler in handlers.items():
        try:
            signal.signal(number, handler)
        except (OSError, ValueError, TypeError):
            pass


def _take_process(request: Request) -> None:
    """Become the client's process: its folder, streams, umask and environment."""
    folder, *streams = request.fds
    os.fchdir(folder)
    os.close(folder)
    for target, fd in enumerate(streams):
        os.dup2(fd, target)
        os.close(fd)
    os.umask(request.umask)
    os.environ.clear()
    os.environ.update(request.environ)
    _rebuild_streams()
    if "tempfile" in sys.modules:
        import tempfile

        tempfile.tempdir = None  # chosen again from this environment, as a new process does
    if "random" in sys.modules:
        import random

        random.seed()  # a fresh draw from the OS, as at a cold import
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()  # numpy's global generator likewise (none of the preload imports it today)
    gc.enable()


def _rebuild_streams() -> None:
    """sys.stdin, stdout and stderr made for the client's descriptors the way CPython
    makes them at start-up (a terminal's stdout is line-buffered, a pipe's is not), with
    the encoding and error handlers the server's interpreter chose (the environment that
    decides them is the client's: context.py)."""
    write_through = getattr(sys.__stdout__, "write_through", False)
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        old = getattr(sys, f"__{name}__")
        encoding = getattr(old, "encoding", None) or "utf-8"
        errors = getattr(old, "errors", None) or "strict"
        try:
            raw = io.FileIO(fd, mode, closefd=False)
        except OSError:
            setattr(sys, name, None)
            setattr(sys, f"__{name}__", None)
            continue
        interactive = raw.isatty()
        buffer: io.BufferedIOBase
        if mode == "r":
            buffer = io.BufferedReader(raw)
        else:
            buffer = io.BufferedWriter(raw)
        stream = io.TextIOWrapper(
            buffer,
            encoding=encoding,
            errors=errors,
            newline="\n",
            line_buffering=not write_through and (interactive or name == "stderr"),
            write_through=write_through,
        )
        stream.mode = mode  # type: ignore[misc]
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _finish_like_an_interpreter() -> None:
    """What CPython does after the main module returns: join the threads that are not
    daemons, run the `atexit` functions, flush the standard streams."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    _flush()


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


def _watch(connection: _socket.socket, finished: threading.Event) -> None:
    """Wait for the client's end of the connection to close; closed before the grade
    finished: the client was killed, and so is this grade (SIGKILL, as a cold one)."""
    try:
        while connection.recv(64):
            pass
    except OSError:
        pass
    if not finished.is_set():
        os.kill(os.getpid(), signal.SIGKILL)

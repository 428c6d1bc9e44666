"""What `abgrade` tries first (grader/cli.py): hand this command to a running server of
this installation, or say that it can't (None: the caller grades cold, with no word and
no change of output).

Only `os`, `sys` and C modules are imported here (`_socket`, `_struct`, `_signal`,
`marshal`), before anything else of the grader, so that a machine with no server pays a
few system calls. The server gets this process's words, umask, environment and
description (context.py), and its folder and streams as descriptors, so the child's
output goes where ours would, terminal or pipe alike. Until the child has taken the
request (its "taken"), every failure means the cold path; after it, the grade is the
child's and is never run twice: the child's exit code is ours, a signal we get
(Ctrl-C, SIGTERM, SIGHUP, SIGQUIT) is passed on to it, and a child that ends without an
exit code is reported in one line with exit code 3 (or, when it ended because of a
signal we passed on, we end by the same signal, as a cold grade would)."""

import _signal
import _socket
import os
import sys

from . import address, context, wire

SERVED_COMMANDS = frozenset({"grade"})
VARIABLE = "ABGRADE_SERVER"  # 0: never try a server
FORWARDED = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGQUIT)
EXIT_MACHINE = 3  # commands/common.py's (not imported here)
REPLY_SECONDS = 10.0  # a server that doesn't answer by then (stopped, hung): the cold path


def served(argv: list[str]) -> int | None:
    """The exit code of this command run by the server, or None to run it here."""
    if os.environ.get(VARIABLE, "1") == "0" or len(argv) < 2 or argv[1] not in SERVED_COMMANDS:
        return None
    relay = _Relay()
    try:
        connection = _handed_over(argv, relay)
    except _NotTaken:
        connection = None
    if connection is None:
        relay.give_back()
        return None
    sock, pid = connection
    relay.follow(pid)
    return _follow(sock, relay)


class _NotTaken(Exception):
    """A signal came before the child took the grade."""


class _Relay:
    """Our handlers of the signals a cold grade would get, installed before the request
    goes out: a signal that comes before the child took the grade waits (and is given
    back to us when we grade cold after all); after, each is passed on to the child."""

    def __init__(self) -> None:
        self.pid = 0
        self.asking = False  # waiting for the server's answer: a signal ends the wait
        self.waiting: list[int] = []
        self.passed: list[int] = []
        self.previous = {number: _signal.signal(number, self.on_signal) for number in FORWARDED}

    def on_signal(self, number: int, frame: object) -> None:
        if not self.pid:
            self.waiting.append(number)
            if self.asking:
                raise _NotTaken  # stop waiting for the server: we grade cold, and get the signal there
            return
        self.passed.append(number)
        try:
            os.kill(self.pid, number)
        except OSError:
            pass

    def follow(self, pid: int) -> None:
        self.pid = pid
        waiting, self.waiting = self.waiting, []
        for number in waiting:
            self.on_signal(number, None)

    def give_back(self) -> None:
        """Our own handlers again, and the signals that waited delivered to us now."""
        for number, handler in self.previous.items():
            if handler is not None:  # None: a handler not set from Python (none at start-up)
                _signal.signal(number, handler)
        for number in self.waiting:
            os.kill(os.getpid(), number)


def _handed_over(argv: list[str], relay: _Relay) -> tuple[_socket.socket, int] | None:
    """The connection and the child's pid once a child took this command, or None."""
    try:
        path = address.socket_path()
        for fd in (0, 1, 2):
            os.fstat(fd)  # a closed stream: the cold path (a folder's descriptor would take its number)
    except (address.Untrusted, OSError):
        return None
    if not address.our_socket(path):
        return None
    sock = None
    folder = -1
    try:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
        sock.settimeout(REPLY_SECONDS)
        sock.connect(path)
        if wire.peer(sock)[1] != os.geteuid():
            raise OSError("a server of another user")
        folder = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        umask = os.umask(0o022)
        os.umask(umask)
        wire.send(sock, ("grade", context.described(), list(argv), umask, os.getpid()), (folder, 0, 1, 2))
        relay.asking = True
        try:
            reply, fds = wire.receive(sock)
        finally:
            relay.asking = False
        wire.close_all(fds)
    except (OSError, ValueError, _NotTaken):  # a child forked meanwhile finds us gone and ends
        reply = None
    finally:
        if folder >= 0:
            os.close(folder)
    if sock is None or reply is None or reply[0] != "taken" or len(reply) != 2 or not isinstance(reply[1], int):
        if sock is not None:
            sock.close()
        return None
    sock.settimeout(None)
    return sock, reply[1]


def _follow(sock: _socket.socket, relay: _Relay) -> int:
    """Wait for the child's exit code (the relay passes our signals on)."""
    try:
        reply, _ = wire.receive(sock)
    except (OSError, ValueError):
        reply = None
    finally:
        sock.close()
    if reply is not None and reply[0] == "exit" and len(reply) == 2 and isinstance(reply[1], int):
        return reply[1]
    if reply is not None and reply[0] == "signal" and reply[1:] == (_signal.SIGINT,):
        relay.passed.append(_signal.SIGINT)  # an uncaught Ctrl-C: a cold interpreter ends by SIGINT
    if relay.passed:  # the child ended by the signal we passed on: so do we, as a cold grade would
        number = relay.passed[-1]
        _signal.signal(number, _signal.SIG_DFL)
        os.kill(os.getpid(), number)
    print(
        "abgrade: the grading server's process for this grade ended without finishing it "
        "(not the submission's fault; try again, or set ABGRADE_SERVER=0)",
        file=sys.stderr,
    )
    return EXIT_MACHINE

"""The messages between `abgrade` (the client), the server and the request's child: one
`marshal`led tuple of plain data (strings, numbers, lists, dicts) behind its length, with
file descriptors beside it (SCM_RIGHTS) when it hands over the client's folder and
streams. Only the client's own uid ever reaches the server (server.py checks the peer),
so the data is read as what that user could run anyway.

Only C modules here (`_socket`, `_struct`, `marshal`): the client imports this before
anything else (`socket` would import `enum`)."""

import _socket
import marshal
import os
from _struct import Struct

LENGTH = Struct("!I")
LIMIT = 1 << 24  # a request carries the environment and sys.path: far below this
MAX_FDS = 8
_FD = Struct("i")


def send(sock: _socket.socket, message: tuple, fds: tuple[int, ...] = ()) -> None:
    """Send one message (and `fds`, with its first bytes)."""
    data = marshal.dumps(message)
    packet = LENGTH.pack(len(data)) + data
    ancillary = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, b"".join(_FD.pack(fd) for fd in fds))] if fds else []
    sent = sock.sendmsg([packet], ancillary)
    if sent < len(packet):
        sock.sendall(packet[sent:])


def receive(sock: _socket.socket) -> tuple[tuple | None, list[int]]:
    """The next message and the descriptors that came with it; (None, []) at the end of
    the connection. Raises ValueError for what is not a message."""
    fds: list[int] = []
    head = b""
    while len(head) < LENGTH.size:
        data, ancillary, _flags, _address = sock.recvmsg(
            LENGTH.size - len(head), _socket.CMSG_SPACE(MAX_FDS * _FD.size), _socket.MSG_CMSG_CLOEXEC
        )
        fds += _descriptors(ancillary)
        if not data:
            _close(fds)
            if head:
                raise ValueError("the connection ended inside a message")
            return None, []
        head += data
    (length,) = LENGTH.unpack(head)
    if length > LIMIT:
        _close(fds)
        raise ValueError(f"a message of {length} bytes")
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            _close(fds)
            raise ValueError("the connection ended inside a message")
        body += chunk
    try:
        message = marshal.loads(body)
    except (EOFError, ValueError, TypeError) as exc:
        _close(fds)
        raise ValueError(f"not a message: {exc}") from None
    if not isinstance(message, tuple) or not message or not isinstance(message[0], str):
        _close(fds)
        raise ValueError("not a message")
    return message, fds


def _descriptors(ancillary: list) -> list[int]:
    found = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(data) - len(data) % _FD.size
            found += [_FD.unpack_from(data, at)[0] for at in range(0, usable, _FD.size)]
    return found


def _close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


close_all = _close


def peer(sock: _socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end, as the kernel saw it connect."""
    data = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    return Struct("3i").unpack(data)

"""Where a server of this installation listens, and whether that folder can be trusted.

The folder is `$ABGRADE_SERVE_DIR`, else `$XDG_RUNTIME_DIR/abgrade`, else the per-user
cache's parent (`$XDG_CACHE_HOME/abgrade/serve`, `~/.cache/abgrade/serve`, as
grader/cache.py finds it). It is used only while it is ours: a real folder (not a link)
owned by this user with no access for anyone else, in a folder that no one else may
write to (or one with the sticky bit). The socket's name is a digest of the interpreter,
the grader package's folder and the uid, so that two venvs (or two checkouts) never
reach each other's server. A Unix socket's path holds at most 107 bytes: a longer one
means no server (the client grades cold, `serve` says why).

Only `os` and `sys` here (and CPython's built-in SHA-256): the client imports this module
before anything else of the grader (grader/cli.py)."""

import os
import stat
import sys

PATH_LIMIT = 107  # sizeof(sockaddr_un.sun_path) - 1 on Linux
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # grader/


class Untrusted(Exception):
    """The folder exists but is not ours alone (the message says which and what to do)."""


def folder() -> str | None:
    """The folder the socket belongs in (not checked, not made), or None when no absolute
    one can be named."""
    given = os.environ.get("ABGRADE_SERVE_DIR")
    if given:
        return os.path.normpath(given) if os.path.isabs(given) else None
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "abgrade")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    return os.path.join(base, "abgrade", "serve")


def name() -> str:
    """The socket's file name: this installation's and this user's (see the docstring)."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # CPython 3.12 on
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]
    key = "\0".join((sys.executable, PACKAGE, str(os.geteuid()), sys.version))
    return "grader-" + sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def checked(path: str, make: bool) -> str:
    """`path` when it is a folder we alone may use (made 0700 when `make` and missing);
    raises Untrusted with a one-line reason, or OSError when it can't be read or made."""
    if make:
        os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    parent = os.stat(os.path.dirname(path))
    if not stat.S_ISDIR(info.st_mode):
        raise Untrusted(f"{path} is not a folder (a link or a file): remove it, or set ABGRADE_SERVE_DIR")
    if info.st_uid != os.geteuid():
        raise Untrusted(f"{path} belongs to uid {info.st_uid}, not to us: remove it, or set ABGRADE_SERVE_DIR")
    if info.st_mode & 0o077:
        raise Untrusted(
            f"{path} is open to others (mode {stat.S_IMODE(info.st_mode):o}): `chmod 700` it, or set ABGRADE_SERVE_DIR"
        )
    if parent.st_uid not in (0, os.geteuid()) or (parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX):
        raise Untrusted(f"{os.path.dirname(path)} may be written by others: set ABGRADE_SERVE_DIR to a private folder")
    return path


def socket_path(make: bool = False) -> str:
    """This installation's socket in its checked folder; raises Untrusted (or OSError)
    with the reason when there is none to use."""
    where = folder()
    if where is None:
        raise Untrusted("no absolute folder for the server's socket: set ABGRADE_SERVE_DIR to an absolute path")
    path = os.path.join(where, name())
    if len(os.fsencode(path)) > PATH_LIMIT:
        raise Untrusted(
            f"the socket's path {path} is longer than {PATH_LIMIT} bytes: set ABGRADE_SERVE_DIR to a shorter folder"
        )
    checked(where, make)
    return path


def our_socket(path: str) -> bool:
    """Whether `path` is a socket that we own and no one else may write to."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022

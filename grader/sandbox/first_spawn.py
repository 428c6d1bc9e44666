"""The student's worker of `abgrade grade FILE.py` spawned a few milliseconds after the
grader's interpreter starts, with almost nothing imported (issue 26, goal 1).

A `.py` grade's critical path is the student's interpreter start-up: everything the
grader imports before the spawn (the sandbox's dataclasses, subprocess, ctypes, the spec's
model) is time the student's start can't overlap. So this module imports only `os` and
`sys` (and, inside its functions, C modules that cost nothing: fcntl, marshal, _json,
_signal) and takes the very same steps as a session's first worker (session.py,
worker.py, identity.py, cgroup.py, isolation.plan): the uid lease, the work folder and the
submission's copy handed to that uid, the cgroups, the plan for confine.py, and a fork
that joins the cgroups, starts its own session and execs `setpriv --pdeathsig KILL` (the
death signal that `preexec_fn` set before; the kernel keeps it across exec) in front of
`unshare ... python -I -S -u -c BOOTSTRAP`. The fork only execs: the student's interpreter
never holds the grader's memory, command line or environment (DESIGN.md).

What the plan needs that takes imports to work out (the isolation level, the compiled
seccomp filter, the interpreter's folders) comes from the per-user cache as one "recipe",
written by a grading that took the ordinary path and saw its worker confined (`remember`),
and valid only while everything it depends on is unchanged: the boot, the user, the
kernel's namespace settings, the interpreter, and the size and time of every file behind
it (this module, isolation.py and seccomp_filter.py, `unshare`, `setpriv`, libseccomp and
pyseccomp, the dynamic linker's cache). Anything else (no recipe, the `process` level, a
lab given as a folder whose private folders only the lab's setup knows, no free uid that
its last holder left clean, any error) returns None having left nothing behind, and
the grade opens its sandbox the ordinary way. session.PythonSession then adopts what was
spawned (`Worker.adopt`), and every later step is the ordinary session's.
"""

import os
import sys

# isolation.py's `unshare` options (it imports them from here)
UNSHARE_OPTIONS = ("--net", "--mount", "--pid", "--ipc", "--uts", "--fork", "--kill-child", "--mount-proc")
USERNS_OPTIONS = ("--user", "--map-root-user")
PRIVATE_TMP_MB = 64
# identity.py's pool (it imports them from here)
STUDENT_GID = int(os.environ.get("ABGRADE_STUDENT_GID", "61000"))
FIRST_UID = int(os.environ.get("ABGRADE_STUDENT_UID", "61000"))
POOL_SIZE = 256
LEASE_DIR = "/run/abgrade-uids" if os.path.isdir("/run") else "/tmp/abgrade-uids"
CLEAN, LEASED = b"clean", b"leased"
# the confinement and bootstrap sources the worker runs, in this order (worker.py)
BOOTSTRAP_FILES = ("confine.py", "probe_install.py", "student_random.py", "bootstrap.py")
CGROUP_ROOT = "/sys/fs/cgroup"
RECIPE_PREFIX = "first-spawn-"  # + the interpreter's own key (recipe_name): one recipe per venv
EXEC_PATH = ("/usr/local/bin", "/usr/bin", "/bin")  # the scrubbed environment's PATH
# what decides whether namespaces can be made (isolation.py's cache key imports them)
NAMESPACE_SETTINGS = (
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/user/max_pid_namespaces",
    "/proc/sys/user/max_net_namespaces",
    "/proc/sys/user/max_mnt_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
)

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE)
_CHECKOUT = os.path.dirname(_PACKAGE)


def bootstrap_source() -> str:
    """What the worker runs before `main()` (worker.BOOTSTRAP_SOURCE)."""
    parts = []
    for name in BOOTSTRAP_FILES:
        with open(os.path.join(_HERE, name)) as handle:
            parts.append(handle.read())
    return "".join(parts)


def private_dirs() -> list[str]:
    """paths.PRIVATE_DIRS, without pathlib: the checkout, or (installed) the two packages."""
    if os.path.isfile(os.path.join(_CHECKOUT, "pyproject.toml")) and os.path.isdir(os.path.join(_CHECKOUT, "specs")):
        return [_CHECKOUT]
    return [_PACKAGE, os.path.join(_CHECKOUT, "reference")]


def which(name: str) -> str | None:
    """`name` found as the scrubbed environment's PATH finds it (what Popen would exec)."""
    for folder in EXEC_PATH:
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


class ForkedProcess:
    """What the grader asks of a student's first process (worker.Process) for one it forked
    and exec'd itself: its exit status, reaped here as Popen would."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.returncode = 255  # reaped by someone else: gone, its status unknown
                return self.returncode
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.0005
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                import subprocess

                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0)
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        assert self.returncode is not None
        return self.returncode


class Spawned:
    """A worker spawned here, and what it holds: the session adopts all of it
    (session.PythonSession(spawned=...)), or `release` gives it all back."""

    __slots__ = (
        "pid",
        "process",
        "workdir",
        "copy",
        "uid",
        "lease_fd",
        "cgroups",
        "fds",
        "plan",
        "userns",
        "started",
        "site_paths",
    )

    def __init__(self) -> None:
        self.pid = 0
        self.process: ForkedProcess | None = None
        self.workdir = ""
        self.copy = ""
        self.uid: int | None = None
        self.lease_fd: int | None = None
        self.cgroups: dict[str, str] = {}  # controller -> the cgroup's folder
        self.fds: list[int] = []  # the grader's ends: to the child, from the child, its output
        self.plan: dict = {}
        self.userns = False
        self.started = 0.0
        self.site_paths: list[str] | None = None  # worker.site_paths(), as the recipe stored them

    def release(self) -> None:
        """Kill the worker and give back the folder, the cgroups and the uid (its lease file
        stays "leased": the next lease of that uid sweeps it again, identity.lease)."""
        import _signal

        if self.process is not None:
            try:
                os.killpg(self.pid, _signal.SIGKILL)
            except OSError:
                pass
            try:
                self.process.wait(2)
            except Exception:  # noqa: BLE001 - still going after SIGKILL: the cgroups' kill below
                pass
            self.process = None
        fds, self.fds = self.fds, []
        for fd in fds:
            _close(fd)
        _remove_cgroups(self.cgroups)
        self.cgroups = {}
        if self.workdir:
            _remove_tree(self.workdir)
            self.workdir = ""
        lease, self.lease_fd = self.lease_fd, None
        if lease is not None:
            _close(lease)


def spawn(submission: str) -> Spawned | None:
    """The worker of a grade of `submission` (an existing `.py` file), spawned now, or
    None (see the module docstring) with nothing left behind."""
    recipe = _recipe()
    if recipe is None:
        return None
    spawned = Spawned()
    try:
        if os.geteuid() == 0:
            if not _lease(spawned):
                spawned.release()
                return None
        elif not recipe["userns"]:
            spawned.release()
            return None
        _make_workdir(spawned, submission)
        _make_cgroups(spawned)
        _fork_exec(spawned, submission, recipe)
        spawned.site_paths = recipe.get("site_paths")
    except Exception:  # noqa: BLE001 - the ordinary path opens it again and says what went wrong
        spawned.release()
        return None
    return spawned


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _remove_cgroups(cgroups: dict[str, str]) -> None:
    import _signal
    import time

    for path in dict.fromkeys(cgroups.values()):
        for _ in range(50):
            try:
                with open(os.path.join(path, "cgroup.procs")) as handle:
                    pids = [int(word) for word in handle.read().split()]
            except (OSError, ValueError):
                pids = []
            for pid in pids:
                try:
                    os.kill(pid, _signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.01)


# ---- the recipe: what the plan needs, from the per-user cache


def _context() -> list[str]:
    """What the recipe depends on besides files: the user, the interpreter, the kernel and
    its namespace settings, the boot, the settings read from the environment."""
    uname = os.uname()
    parts = [str(os.geteuid()), sys.executable, sys.prefix, sys.base_prefix, uname.release, uname.machine]
    parts += [os.environ.get(name, "") for name in ("ABGRADE_ISOLATION", "ABGRADE_STUDENT_UID", "ABGRADE_STUDENT_GID")]
    return parts + namespace_settings()


def namespace_settings() -> list[str]:
    """The boot's id and the kernel's settings for namespaces ("-" where one is missing):
    what decides whether namespaces can be made (isolation.py's cache key too)."""
    parts = []
    for name in ("/proc/sys/kernel/random/boot_id", *NAMESPACE_SETTINGS):
        try:
            with open(name) as handle:
                parts.append(handle.read().strip())
        except OSError:
            parts.append("-")
    return parts


def recipe_name() -> str:
    """The recipe's cache entry for this interpreter (a checkout's venv and a plain install
    grading by turns must not overwrite each other's: each would find the other's and
    take the ordinary path every time); its context still says whose it is."""
    import zlib

    return RECIPE_PREFIX + format(zlib.crc32("\0".join((sys.executable, sys.prefix, _HERE)).encode()), "08x")


def stamp(name: str) -> str:
    """A file's name, size and time (seccomp_filter's stamps): a changed file changes it."""
    try:
        info = os.stat(name)
    except OSError:
        return name
    return f"{name}:{info.st_size}:{info.st_mtime_ns}"


def _recipe() -> dict | None:
    """The stored recipe, when it is still valid and for the `namespaces` level."""
    from .. import cache

    stored = cache.read(recipe_name())
    if not isinstance(stored, dict) or stored.get("context") != _context():
        return None
    stamps = stored.get("stamps")
    if not isinstance(stamps, list) or not all(isinstance(s, str) and stamp(s.rsplit(":", 2)[0]) == s for s in stamps):
        return None
    recipe = stored.get("recipe")
    if not isinstance(recipe, dict) or recipe.get("level") != "namespaces":
        return None
    for key in ("setpriv", "unshare"):  # what the grader execs: never a path the cache alone says
        if not isinstance(recipe.get(key), str) or recipe[key] != which(key):
            return None
    if not isinstance(recipe.get("readable"), list) or not isinstance(recipe.get("userns"), bool):
        return None
    if recipe.get("seccomp") is not None and not isinstance(recipe["seccomp"], str):
        return None
    paths = recipe.get("site_paths")
    if paths is not None and not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)):
        return None
    return recipe


def remember(
    level: str,
    userns: bool,
    seccomp: str | None,
    readable: list[str],
    files: list[str],
    site_paths: list[str] | None = None,
) -> None:
    """Store the recipe (a grading whose worker was confined at `level` calls it): the
    level, the filter, the interpreter's folders, and `files`, what they depend on;
    `site_paths`, worker.site_paths() (sysconfig's, which a first-spawned grade then
    doesn't import; None: the session works them out)."""
    from .. import cache

    setpriv, unshare = which("setpriv"), which("unshare")
    if level != "namespaces" or setpriv is None or unshare is None:
        forget()
        return
    own = [__file__, setpriv, unshare]
    stamps = [stamp(name) for name in dict.fromkeys([*own, *files])]
    recipe = {"level": level, "userns": userns, "seccomp": seccomp, "readable": list(readable)}
    recipe["site_paths"] = list(site_paths) if site_paths is not None else None
    recipe.update(setpriv=setpriv, unshare=unshare)
    cache.write(recipe_name(), {"context": _context(), "stamps": stamps, "recipe": recipe})


def forget() -> None:
    """Drop the recipe (a worker could not be confined: the next grading works it out)."""
    from .. import cache

    cache.forget(recipe_name())


def has_recipe() -> bool:
    return _recipe() is not None


# ---- the steps, as the ordinary session takes them


def _lease(spawned: Spawned) -> bool:
    """identity.lease(), of the uids their last holder left clean only (False: none free;
    the ordinary lease then reaps and sweeps one)."""
    import fcntl

    os.makedirs(LEASE_DIR, mode=0o700, exist_ok=True)
    os.chmod(LEASE_DIR, 0o700)
    start = (os.getpid() * 7) % POOL_SIZE
    for attempt in range(POOL_SIZE):
        uid = FIRST_UID + (start + attempt) % POOL_SIZE
        fd = os.open(os.path.join(LEASE_DIR, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        try:
            state = os.pread(fd, 16, 0).strip()
        except OSError:
            state = b""
        if state != CLEAN:
            os.close(fd)  # its last holder was killed, or never marked it: the ordinary lease reaps it
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, LEASED + b"\n", 0)
        spawned.uid, spawned.lease_fd = uid, fd
        return True
    return False


def _temp_candidates() -> list[str]:
    """tempfile.gettempdir()'s candidates, in its order (a `tempfile.tempdir` set first)."""
    module = sys.modules.get("tempfile")
    chosen = getattr(module, "tempdir", None) if module is not None else None
    if chosen:
        return [chosen]
    found = [os.environ[name] for name in ("TMPDIR", "TEMP", "TMP") if os.environ.get(name)]
    return [*found, "/tmp", "/var/tmp", "/usr/tmp", os.getcwd()]


def _make_workdir(spawned: Spawned, submission: str) -> None:
    """tempfile.mkdtemp(prefix="abgrade-"), the submission's copy, identity.hand_over."""
    for folder in _temp_candidates():
        path = os.path.abspath(os.path.join(folder, "abgrade-" + os.urandom(6).hex()))
        try:
            os.mkdir(path, 0o700)
        except OSError:
            continue
        spawned.workdir = path
        break
    else:
        raise OSError("no temporary folder to make a work folder in")
    copy = os.path.join(spawned.workdir, os.path.basename(submission))
    source = os.open(submission, os.O_RDONLY | os.O_CLOEXEC)
    try:
        target = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            while True:
                chunk = os.read(source, 1 << 20)
                if not chunk:
                    break
                os.write(target, chunk)
        finally:
            os.close(target)
    finally:
        os.close(source)
    spawned.copy = copy
    if spawned.uid is not None:
        os.chown(spawned.workdir, spawned.uid, STUDENT_GID)
        os.chown(copy, spawned.uid, STUDENT_GID, follow_symlinks=False)
    os.chmod(spawned.workdir, 0o700)


def _make_cgroups(spawned: Spawned) -> None:
    """cgroup.StudentCgroups() on cgroup v1 or v2 (the default limits are written when the
    worker is adopted, Worker.adopt: before its setup, so before any student code)."""
    name = "abgrade-" + os.urandom(6).hex()
    v2 = os.path.join(CGROUP_ROOT, "cgroup.subtree_control")
    for controller, v1_file, v2_file in (
        ("pids", "pids.max", "pids.max"),
        ("memory", "memory.limit_in_bytes", "memory.max"),
        ("cpuacct", "cpuacct.usage", "cpu.stat"),
    ):
        root = os.path.join(CGROUP_ROOT, controller)
        limit_file = v1_file
        if not (os.path.exists(os.path.join(root, "cgroup.procs")) and os.access(root, os.W_OK)):
            root, limit_file = CGROUP_ROOT, v2_file
            try:
                with open(v2) as handle:
                    enabled = handle.read().split()
            except OSError:
                continue
            if not os.access(root, os.W_OK) or (controller != "cpuacct" and controller not in enabled):
                continue
        path = os.path.join(root, name)
        if path in spawned.cgroups.values():
            spawned.cgroups[controller] = path
            continue
        try:
            os.mkdir(path)
        except OSError:
            continue
        if not os.path.exists(os.path.join(path, limit_file)):
            os.rmdir(path)
            continue
        spawned.cgroups[controller] = path


def _outermost(folders: list[str]) -> list[str]:
    """isolation._outermost: drop folders inside others."""

    def inside(path: str, folder: str) -> bool:
        return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)

    return sorted({f for f in folders if not any(o != f and inside(f, o) for o in folders)})


def plan_for(workdir: str, hidden: list[str], uid: int | None, recipe: dict) -> dict:
    """isolation.Isolation.plan() at the namespaces level (the ACL sweep it makes as root
    is the session's, after the spawn: nothing of it concerns this worker's confinement)."""
    keep = [os.path.realpath(workdir)]
    cover = _outermost([os.path.realpath(p) for p in hidden if os.path.isdir(p)])
    return {
        "namespace": True,
        "hidden": cover,
        "writable": keep,
        "readable": list(recipe["readable"]),
        "tmp_mb": PRIVATE_TMP_MB,
        "uid": uid,
        "gid": STUDENT_GID if uid is not None else None,
        "seccomp": recipe["seccomp"],
        "cwd": keep[0],
    }


def hidden_for(submission: str) -> list[str]:
    """What the student must not see (Session.hidden for a lab given by name)."""
    return [*private_dirs(), os.path.dirname(os.path.realpath(submission))]


def to_json(value: object) -> str:
    """json.dumps of a plan (strings, numbers, booleans, None, lists, dicts), with the
    standard library's own C string encoder and without importing `json`."""
    from _json import encode_basestring_ascii

    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, list):
        return "[" + ", ".join(to_json(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{encode_basestring_ascii(k)}: {to_json(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not plain data: {type(value).__name__}")


def scrubbed_env(workdir: str) -> dict[str, str]:
    """student_env.scrubbed_env, which is imported light enough to use as it is."""
    from .student_env import scrubbed_env as made

    return made(workdir)  # type: ignore[arg-type]  # it only formats the path


def _fork_exec(spawned: Spawned, submission: str, recipe: dict) -> None:
    """Fork, and in the child: its own session, the cgroups joined, stdio on the output
    pipe, the working folder, only the channel's fds kept, then exec."""
    import _signal
    import time

    spawned.userns = os.geteuid() != 0
    spawned.plan = plan_for(spawned.workdir, hidden_for(submission), spawned.uid, recipe)
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    out_r, out_w = os.pipe()
    spawned.fds = [to_child_w, from_child_r, out_r]
    child_fds = [to_child_r, from_child_w, out_w]
    try:
        if min(child_fds) < 3:
            raise OSError("the grader's own stdio is closed")  # Popen's careful dance: the ordinary path
        prefix = [recipe["setpriv"], "--pdeathsig", "KILL", "--", recipe["unshare"], *UNSHARE_OPTIONS]
        if spawned.userns:
            prefix += USERNS_OPTIONS
        argv = [*prefix, sys.executable, "-I", "-S", "-u", "-c", bootstrap_source() + "\nmain()\n"]
        argv += [str(to_child_r), str(from_child_w), to_json(spawned.plan)]
        env = scrubbed_env(spawned.workdir)
        procs = [os.path.join(path, "cgroup.procs") for path in dict.fromkeys(spawned.cgroups.values())]
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        parent = os.getpid()
        spawned.started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the child: only os calls, then exec or _exit
            try:
                os.setsid()
                me = str(os.getpid()).encode()
                for name in procs:
                    fd = os.open(name, os.O_WRONLY)
                    os.write(fd, me)
                    os.close(fd)
                for number in (_signal.SIGPIPE, _signal.SIGXFSZ):  # Popen's restore_signals
                    _signal.signal(number, _signal.SIG_DFL)
                os.dup2(null, 0)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                keep = sorted((to_child_r, from_child_w))
                for fd in keep:
                    os.set_inheritable(fd, True)
                os.closerange(3, keep[0])
                os.closerange(keep[0] + 1, keep[1])
                os.closerange(keep[1] + 1, 1 << 16)
                os.chdir(spawned.workdir)
                if os.getppid() != parent:
                    os._exit(1)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        os.close(null)
        spawned.pid = pid
        spawned.process = ForkedProcess(pid)
    finally:
        for fd in child_fds:
            _close(fd)

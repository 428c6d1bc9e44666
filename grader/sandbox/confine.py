"""The first code of every student process, run before any student code (stdlib only: its
source is put in front of the worker's bootstrap, or run as `python -I -S -c
SOURCE+"main(sys.argv[1:])" PLAN COMMAND...` in front of a notebook kernel). `confine(plan)`:

1. file system (only inside a fresh mount namespace, `plan["namespace"]`): cover the
   grader, the specs and other submissions with empty tmpfs mounts, give the process a
   private, size-capped `/tmp` and `/dev/shm`, keep its work folders writable and the
   Python it runs on readable (also when they live in closed folders, such as root's home
   or a batch's 0700 run folder under a TMPDIR outside /tmp: the folders in between are
   replaced by tmpfs mounts that hold only the way to them),
   make `/proc/sys` and everything else read-only;
2. privileges: drop every capability (bounding set, ambient, effective, permitted), switch
   to the grading's unprivileged uid and gid (`plan["uid"]`, when the grader is root), set
   no_new_privs, so none of the mounts can be undone and nothing can be gained by exec;
3. seccomp: load the filter the grader compiled with libseccomp (`plan["seccomp"]`, hex).

Exit codes 111-115 mean the machine refused a step: the grader's problem, not the
student's (the student's code has not started yet)."""

import ctypes
import os

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_CAP_AMBIENT = 24, 38, 22, 47
PR_SET_PDEATHSIG, SIGKILL = 1, 9
KEEP_WRITABLE = ("/proc", "/dev")  # /proc is the namespace's own; device nodes stay usable


def _fail(code, what):
    os.write(
        2, b"abgrade: could not confine the student process: %s (errno %d)\n" % (what.encode(), ctypes.get_errno())
    )
    os._exit(code)


_FLAG_OF = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048, "relatime": 1 << 21}


def _mount_points():
    """(mount point, flags to keep) of every mount, innermost first. The flags are kept
    on remount because a user namespace may not clear them (they are locked)."""
    points = {}
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            fields = line.split(" ")
            flags = 0
            for option in fields[5].split(","):
                flags |= _FLAG_OF.get(option, 0)
            points[fields[4].encode().decode("unicode_escape")] = flags  # \040 is a space
    return sorted(points.items(), reverse=True)


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def closed_ancestors(paths, outermost=True):
    """The folders on the way to `paths` (not the paths) that other users can't traverse:
    only the outermost of each way (what a tmpfs must cover), or all of them."""
    closed = []  # type: list[str]
    for path in paths:
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts)):
            folder = "/" + "/".join(parts[:depth])
            try:
                mode = os.stat(folder).st_mode
            except OSError:
                break
            if not mode & 0o001:
                covered = outermost and any(_inside(folder, c) for c in closed)
                if not covered and folder not in closed:
                    closed.append(folder)
                if outermost:
                    break
    return closed


def isolate(plan, libc):
    def mount(source, target, fstype, flags, data, code):
        if libc.mount(source, target.encode(), fstype, flags, data) != 0 and code:
            _fail(code, "mount " + target)

    mount(None, "/", None, MS_REC | MS_PRIVATE, None, 111)
    writable, readable = plan["writable"], plan["readable"]
    kept = {}
    for path in sorted(set(writable + readable), key=len):
        try:
            fd = os.open(path, os.O_PATH | os.O_DIRECTORY)
        except OSError:
            continue
        kept[path] = (fd, os.fstat(fd))
    covers = [(folder, b"mode=0755,size=64k") for folder in plan["hidden"]]
    covers += [(folder, b"mode=1777,size=%dm" % plan["tmp_mb"]) for folder in ("/tmp", "/dev/shm")]
    if plan.get("uid") is not None:  # the way to what it may read and to its work folders
        # (a batch keeps them in a 0700 folder per run and per job, wherever TMPDIR is)
        covers += [(folder, b"mode=0755,size=64k") for folder in closed_ancestors(readable + writable)]
    for folder, options in covers:
        if os.path.isdir(folder):
            mount(b"abgrade", folder, b"tmpfs", MS_NOSUID | MS_NODEV, options, 112)
    for path, (fd, before) in kept.items():
        try:
            now = os.stat(path)
            # a work folder is always bound onto itself, covered or not: the remounts below
            # keep only mount points writable (one left on a read-only mount, say under a
            # TMPDIR of /var/tmp, refused the student its own folder: EROFS)
            if (now.st_dev, now.st_ino) == (before.st_dev, before.st_ino) and path not in writable:
                continue
        except OSError:
            pass
        os.makedirs(path, exist_ok=True)
        mount(("/proc/self/fd/%d" % fd).encode(), path, None, MS_BIND | MS_REC, None, 113)
    for fd, _ in kept.values():
        os.close(fd)
    mount(b"/proc/sys", "/proc/sys", None, MS_BIND | MS_REC, None, 0)
    stay = set(writable) | {"/tmp", "/dev/shm"}
    for point, flags in _mount_points():
        if point in stay or (any(_inside(point, k) for k in KEEP_WRITABLE) and not _inside(point, "/proc/sys")):
            continue
        mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | flags, None, 0)


def drop_privileges(plan, libc):
    for cap in range(64):  # needs CAP_SETPCAP, so before anything else is dropped
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(PR_CAP_AMBIENT, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    uid, gid = plan.get("uid"), plan.get("gid")
    if uid is not None:
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            parent = os.getppid()
            os.setresuid(uid, uid, uid)  # from root: the kernel clears every capability
        except OSError:
            _fail(114, "switch to uid %d" % uid)
        # ...and the parent-death signal (any change of uid clears it): set it again, or a
        # student process would outlive a grader that was killed
        libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died in between (0 for PID 1 of a namespace: never)
            os._exit(1)
    else:  # not root (e.g. root of its own user namespace): clear the capability sets
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)()
        libc.capset(header, data)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail(114, "no_new_privs")


def load_seccomp(program_hex, libc):
    program = bytes.fromhex(program_hex)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, 2, ctypes.byref(fprog), 0, 0) != 0:
        _fail(115, "seccomp")


def confine(plan, libc=None):
    """`libc`: the caller's handle on the C library (a zygote's, made once before it forks:
    loading it again took every fork about 0.2 ms), else loaded here."""
    libc = libc or ctypes.CDLL(None, use_errno=True)
    if plan.get("namespace"):
        isolate(plan, libc)
    if plan.get("drop", True):
        drop_privileges(plan, libc)
    if plan.get("seccomp"):
        load_seccomp(plan["seccomp"], libc)
    if plan.get("cwd"):
        os.chdir(plan["cwd"])


def main(argv):
    """`python -I -S -c SOURCE PLAN_JSON COMMAND...`: confine, then become COMMAND."""
    import json

    confine(json.loads(argv[0]))
    os.execv(argv[1], argv[1:])

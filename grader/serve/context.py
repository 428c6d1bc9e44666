"""What must be the same in the client and the server for a grade forked from the server
to be the grade the client would have run itself: the installation (the interpreter, its
version), how the interpreter was started (sys.flags, -X and -W options, sys.path), the
whole environment but for what a shell changes on its own (PWD, OLDPWD, `_`, SHLVL), and
the process's place on the machine (uid, groups, capabilities, resource limits, cgroup,
namespaces, CPU affinity, nice value, seccomp). So nothing an import read from any of
them can differ; anything else: the client grades cold.

`described()` is the client's side (os and sys only); `difference` and
`process_difference` are the server's."""

import os
import sys

IGNORED_VARIABLES = frozenset({"PWD", "OLDPWD", "_", "SHLVL"})
# /proc/PID/status lines that say what the process may do
STATUS_FIELDS = (
    "Uid",
    "Gid",
    "Groups",
    "CapInh",
    "CapPrm",
    "CapEff",
    "CapBnd",
    "CapAmb",
    "NoNewPrivs",
    "Seccomp",
    "Cpus_allowed_list",
    "Mems_allowed_list",
)
NAMESPACES = ("mnt", "pid", "net", "ipc", "uts", "user", "cgroup", "time")


def described() -> dict:
    """This interpreter, as the server compares it (plain data for wire.send)."""
    return {
        "executable": sys.executable,
        "version": sys.version,
        "flags": tuple(sys.flags),
        "xoptions": dict(sys._xoptions),
        "warnoptions": list(sys.warnoptions),
        "path": list(sys.path),
        "environ": dict(os.environ),
    }


def difference(server: dict, client: object) -> str | None:
    """What differs between the server's `described()` and the client's, in a few words,
    or None when a grade forked from the server is the client's own."""
    if not isinstance(client, dict):
        return "not a description"
    for key in ("executable", "version", "flags", "xoptions", "warnoptions", "path"):
        if client.get(key) != server[key]:
            return f"another {key}"
    if any(_relative_folder(entry) for entry in server["path"]):
        return "a relative folder on sys.path"
    theirs = client.get("environ")
    if not isinstance(theirs, dict):
        return "no environment"
    ours = server["environ"]
    for name in (set(ours) | set(theirs)) - IGNORED_VARIABLES:
        if ours.get(name) != theirs.get(name):
            return f"another environment (${name})"
    return None


def _relative_folder(entry: object) -> bool:
    """Whether a sys.path entry names a folder relative to the current one ('' for the
    folder `python -c` or `python -m` starts in): the client's and the server's differ.
    An entry that a path hook owns (an editable install's finder) names no folder."""
    from importlib.machinery import FileFinder

    if not isinstance(entry, str):
        return True
    if os.path.isabs(entry):
        return False
    finder = sys.path_importer_cache.get(entry)
    return finder is None or isinstance(finder, FileFinder)


def process_facts(pid: int | str) -> dict[str, str]:
    """What the kernel says about process `pid` ("self" for ours) that a grade inherits."""
    base = f"/proc/{pid}"
    facts: dict[str, str] = {}
    with open(f"{base}/status") as handle:
        for line in handle:
            field, _, value = line.partition(":")
            if field in STATUS_FIELDS:
                facts[field] = " ".join(value.split())
    for name in ("limits", "cgroup"):
        with open(f"{base}/{name}") as handle:
            facts[name] = handle.read()
    with open(f"{base}/stat") as handle:
        facts["nice"] = handle.read().rpartition(")")[2].split()[16]  # field 19
    for namespace in NAMESPACES:
        try:
            facts[f"ns/{namespace}"] = os.readlink(f"{base}/ns/{namespace}")
        except FileNotFoundError:
            facts[f"ns/{namespace}"] = ""
    return facts


def process_difference(ours: dict[str, str], pid: int) -> str | None:
    """What differs between our process and the client's (pid `pid`), or None."""
    try:
        theirs = process_facts(pid)
    except OSError:
        return "the client's process could not be read"
    for key, value in ours.items():
        if theirs.get(key) != value:
            return f"another process context ({key})"
    return None

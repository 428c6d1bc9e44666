"""The ACL entries a grading borrows at the `process` level are given back (issue 23,
point 2): real extended attributes on real folders, real lock files, a real grader
process killed mid-grading. Each test works in a closed folder of its own under /tmp, so
parallel gradings on the machine (which share the ledger) never touch what it checks."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.sandbox import acl
from grader.sandbox.identity import grader_is_root

pytestmark = [
    pytest.mark.skipif(not grader_is_root(), reason="ACLs on root's folders need a root grader"),
    pytest.mark.skipif(not shutil.which("getfacl"), reason="needs getfacl (Debian package acl)"),
]
GID = 61990  # outside the student pool: no grading's entries are these
PROJECT = Path(__file__).resolve().parent.parent


@pytest.fixture
def home() -> Iterator[Path]:
    """A closed (0700) stand-in for root's home, with a way to a file, a folder and a file
    beside the way, and a folder that already has an ACL of its own (a restricting mask)."""
    folder = Path(tempfile.mkdtemp(prefix="abgrade-acl-test-"))
    (folder / "py" / "lib").mkdir(parents=True)
    (folder / "dotfile").write_text("secret\n")
    os.chmod(folder / "dotfile", 0o644)
    (folder / "cache").mkdir()
    subprocess.run(["setfacl", "-m", "g:123:rwx", str(folder / "cache")], check=True)
    os.chmod(folder / "cache", 0o750)  # the mask now restricts g:123 to r-x
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def getfacl(root: Path) -> str:
    return subprocess.run(["getfacl", "-R", "-p", str(root)], capture_output=True, text=True, check=True).stdout


def entry(path: Path, text: str) -> bool:
    return text in subprocess.run(["getfacl", "-p", str(path)], capture_output=True, text=True, check=True).stdout


def test_the_last_holder_out_restores_every_entry_byte_for_byte(home):
    before = getfacl(home)
    first, second = acl.AclHold(), acl.AclHold()
    first.open_way_to_group([str(home / "py" / "lib")], GID)
    second.open_way_to_group([str(home / "py" / "lib")], GID)
    second.close_to_group([str(home / "cache")], GID)
    assert entry(home, f"group:{GID}:--x") and entry(home / "dotfile", f"group:{GID}:---")
    first.release()  # the second grading still runs: its way stays open
    assert entry(home, f"group:{GID}:--x") and entry(home / "cache", f"group:{GID}:---")
    second.release()
    assert getfacl(home) == before
    assert str(home) not in acl.held_paths()


def test_a_deny_and_a_traverse_of_two_gradings_on_one_folder_leave_the_traverse_until_it_ends(home):
    """Two graders with different ways: one denies what the other must traverse; the
    traverse wins while its grading runs (else that grading's student could not start)."""
    before = getfacl(home)
    way, deny = acl.AclHold(), acl.AclHold()
    deny.grant({str(home / "py"): {f"g:{GID}": 0}})
    way.grant({str(home / "py"): {f"g:{GID}": 1}})
    assert entry(home / "py", f"group:{GID}:--x")
    way.release()
    assert entry(home / "py", f"group:{GID}:---")
    deny.release()
    assert getfacl(home) == before


def test_a_mask_that_restricted_named_entries_is_put_back(home):
    before = getfacl(home)
    with acl.AclHold() as hold:
        hold.grant({str(home / "cache"): {f"g:{GID}": 1}})
        assert entry(home / "cache", f"group:{GID}:--x")
    assert getfacl(home) == before  # mask::r-x again, g:123 effective r-x again


HOLDER = """
import sys, time
from grader.sandbox import acl
hold = acl.AclHold()
hold.open_way_to_group([sys.argv[1]], int(sys.argv[2]))
print("held", flush=True)
time.sleep(600)
"""


def test_a_grader_killed_mid_grading_is_restored_for_by_the_next_sweep(home):
    """SIGKILL leaves no chance to give anything back; its lock file is no longer locked,
    and the next sweep (every grading as root starts with one) restores the folder."""
    before = getfacl(home)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home / "py" / "lib"), str(GID)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=PROJECT,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert entry(home, f"group:{GID}:--x")
        acl.sweep()  # a live holder keeps its entries
        assert entry(home, f"group:{GID}:--x")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert entry(home, f"group:{GID}:--x")  # nothing gave it back
    acl.sweep()
    assert getfacl(home) == before


def test_a_folder_replaced_while_held_is_left_alone(home):
    """The entries went with the old folder; the new one (another inode) is never touched."""
    hold = acl.AclHold()
    hold.close_to_group([str(home / "cache")], GID)
    shutil.rmtree(home / "cache")
    (home / "cache").mkdir()
    fresh = getfacl(home / "cache")
    hold.release()
    assert getfacl(home / "cache") == fresh
    assert str(home / "cache") not in acl.held_paths()


def _as(uid: int, *argv: str) -> subprocess.CompletedProcess:
    """`argv` run as the student `uid` of the group GID."""
    return subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={GID}", "--clear-groups", *argv], capture_output=True, text=True
    )


@pytest.mark.skipif(not shutil.which("setpriv"), reason="needs setpriv")
def test_two_interpreters_in_one_closed_home_neither_grading_closes_the_others_way(home):
    """Two gradings at once whose interpreters live side by side in one closed folder (two
    venvs in root's home): each opens its own way, and neither closes the other's (a deny
    for the whole group did: the other's students, a namespaces grading's too, could not
    import from their own venv while it ran). Nor does either open the home to a student
    of neither: the traverse is the grading's uid's, not the group's."""
    for venv in ("py", "other"):
        (home / venv / "lib").mkdir(parents=True, exist_ok=True)
        (home / venv / "lib" / "mod.txt").write_text(f"{venv} module\n")
        os.chmod(home / venv / "lib" / "mod.txt", 0o644)
    before = getfacl(home)
    first, second, neither = 61992, 61993, 61994  # outside the pool: no lease is disturbed
    holds = {first: acl.AclHold(), second: acl.AclHold()}
    try:
        holds[first].open_way([str(home / "py" / "lib")], [], GID, first)
        holds[second].open_way([str(home / "other" / "lib")], [], GID, second)
        for uid, venv in ((first, "py"), (second, "other")):
            read = _as(uid, "cat", str(home / venv / "lib" / "mod.txt"))
            assert read.returncode == 0 and f"{venv} module" in read.stdout, read.stderr
        assert not entry(home / "other", f"group:{GID}") and not entry(home / "py", f"group:{GID}")
        for uid, path in ((first, "other/lib/mod.txt"), (second, "py/lib/mod.txt"), (first, "dotfile")):
            assert _as(uid, "cat", str(home / path)).returncode != 0, path
        for path in ("py/lib/mod.txt", "other/lib/mod.txt", "dotfile"):
            assert _as(neither, "cat", str(home / path)).returncode != 0, path
    finally:
        for hold in holds.values():
            hold.release()
    assert getfacl(home) == before

"""A uid's lease file says whether its last release left it empty (identity.py): only then
may the next lease skip looking for its processes. A grader killed while holding the uid,
or a release that left a zombie, leaves it marked `leased`, and the next lease kills what
still runs as it. Real processes of a uid outside the pool, a real lease folder."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from grader.sandbox import identity

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="leasing uids needs a root grader")
UID = 61993  # outside the pool: no other grading leases it


@pytest.fixture
def one_uid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(identity, "LEASE_DIR", tmp_path / "leases")
    monkeypatch.setattr(identity, "FIRST_UID", UID)
    monkeypatch.setattr(identity, "POOL_SIZE", 1)
    return tmp_path / "leases" / str(UID)


def as_uid(seconds: float) -> int:
    pid = os.fork()
    if pid == 0:
        os.setresuid(UID, UID, UID)
        time.sleep(seconds)
        os._exit(0)
    return pid


def test_a_release_that_leaves_nothing_marks_the_uid_clean(one_uid: Path) -> None:
    leased = identity.lease()
    assert leased is not None and leased.uid == UID
    assert one_uid.read_bytes().strip() == identity.LEASED
    leased.release()
    assert one_uid.read_bytes().strip() == identity.CLEAN


def test_a_uid_held_by_a_killed_grader_is_reaped_before_it_is_leased_again(one_uid: Path) -> None:
    one_uid.parent.mkdir(mode=0o700)
    one_uid.write_bytes(identity.LEASED + b"\n")  # what a killed grader leaves
    survivor = as_uid(30)
    try:
        deadline = time.monotonic() + 5
        while survivor not in identity.processes_of(UID) and time.monotonic() < deadline:
            time.sleep(0.01)
        leased = identity.lease()
        assert leased is not None
        assert os.waitpid(survivor, 0)[1] == signal.SIGKILL
        leased.release()
    finally:
        try:
            os.kill(survivor, signal.SIGKILL)
            os.waitpid(survivor, 0)
        except (ChildProcessError, ProcessLookupError):
            pass


def test_a_release_that_leaves_a_zombie_is_not_clean(one_uid: Path) -> None:
    leased = identity.lease()
    assert leased is not None
    zombie = as_uid(0)
    try:
        deadline = time.monotonic() + 5
        while zombie not in identity.processes_of(UID, zombies=True) and time.monotonic() < deadline:
            time.sleep(0.01)
        leased.release()
        assert one_uid.read_bytes().strip() == identity.LEASED
    finally:
        os.waitpid(zombie, 0)

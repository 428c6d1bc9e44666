"""The worker of a `.py` grade spawned with almost nothing imported (sandbox/first_spawn.py,
issue 26 goal 1): the same plan as the ordinary path's, a recipe that is dropped when
anything it depends on changes, nothing left behind when a step fails, and a worker that
dies with its grader."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.paths import PRIVATE_DIRS, SOLUTIONS_DIR
from grader.sandbox import first_spawn, session
from grader.sandbox.identity import StudentIdentity, grader_is_root
from grader.sandbox.isolation import detect_isolation
from grader.spec.model import Limits

TREE = str(SOLUTIONS_DIR / "tree.py")


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch) -> Path:
    """A cache of this test's own, holding the recipe a confined worker leaves."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ABGRADE_CACHE_DIR", str(folder))
    monkeypatch.delenv("ABGRADE_CACHE", raising=False)
    if detect_isolation().level != "namespaces":
        pytest.skip("the first spawn is for the namespaces level only")
    monkeypatch.setattr(session, "_REMEMBERED", False)
    session.remember_first_spawn(detect_isolation())
    assert first_spawn.has_recipe()
    return folder


def _gone(spawned: first_spawn.Spawned, workdir: str, cgroups: list[str]) -> None:
    assert not os.path.exists(workdir)
    assert [path for path in cgroups if os.path.exists(path)] == []
    assert spawned.lease_fd is None and spawned.fds == [] and spawned.process is None


def test_the_first_spawn_plans_what_the_ordinary_path_plans(recipe: Path, tmp_path: Path) -> None:
    """Everything confine.py does comes from the plan: the same plan, the same confinement;
    the worker it starts says it is confined, and its release leaves nothing behind."""
    spawned = first_spawn.spawn(TREE)
    assert spawned is not None
    workdir, cgroups = spawned.workdir, list(spawned.cgroups.values())
    try:
        identity = StudentIdentity(spawned.uid, first_spawn.STUDENT_GID) if spawned.uid is not None else None
        hidden = [*PRIVATE_DIRS, Path(TREE).resolve().parent]
        assert spawned.plan == detect_isolation().plan([Path(workdir)], hidden, identity)
        assert json.loads(first_spawn.to_json(spawned.plan)) == spawned.plan
        assert (grader_is_root()) == (spawned.uid is not None)
        assert os.stat(workdir).st_mode & 0o777 == 0o700
        assert Path(spawned.copy).read_bytes() == Path(TREE).read_bytes()
        with os.fdopen(os.dup(spawned.fds[1]), "rb") as replies:
            assert json.loads(replies.readline()) == {"op": "confined"}
    finally:
        spawned.release()
    _gone(spawned, workdir, cgroups)


def test_a_session_adopts_the_worker_with_the_default_limits_then_closes_it(recipe: Path) -> None:
    spawned = first_spawn.spawn(TREE)
    assert spawned is not None
    workdir, cgroups = spawned.workdir, dict(spawned.cgroups)
    opened = session.PythonSession(Path(TREE), (), spawned)
    try:
        assert str(opened.workdir) == workdir and opened.isolation.level == "namespaces"
        assert opened.identity is None or opened.identity.uid == spawned.uid
        if "pids" in cgroups:
            assert (Path(cgroups["pids"]) / "pids.max").read_text().strip() == str(Limits().processes)
    finally:
        opened.close()
        opened.wait_closed()
    _gone(spawned, workdir, list(cgroups.values()))


def test_a_first_spawn_that_fails_half_way_leaves_nothing(recipe: Path, monkeypatch) -> None:
    made: list[first_spawn.Spawned] = []

    def refused(spawned: first_spawn.Spawned, *args: object) -> None:
        made.append(spawned)
        assert os.path.isdir(spawned.workdir)  # made already, as the cgroups and the lease
        raise OSError("no more processes")

    monkeypatch.setattr(first_spawn, "_fork_exec", refused)
    folders = {path: set(os.listdir(path)) for path in first_spawn._temp_candidates()[:1]}
    assert first_spawn.spawn(TREE) is None and len(made) == 1
    assert {path: set(os.listdir(path)) for path in folders} == folders
    assert made[0].lease_fd is None and made[0].cgroups == {} and made[0].workdir == ""


def test_a_recipe_is_not_used_once_a_file_it_depends_on_changed(recipe: Path, tmp_path: Path) -> None:
    stored = first_spawn._recipe()
    assert stored is not None
    library = tmp_path / "libseccomp.so.2"
    library.write_bytes(b"one")
    first_spawn.remember("namespaces", stored["userns"], stored["seccomp"], stored["readable"], [str(library)])
    assert first_spawn.has_recipe()
    library.write_bytes(b"another")
    assert not first_spawn.has_recipe() and first_spawn.spawn(TREE) is None
    first_spawn.remember("process", False, None, [], [])  # another level: no recipe at all
    assert not first_spawn.has_recipe()


def test_what_the_first_spawn_copies_matches_the_ordinary_path() -> None:
    assert first_spawn.private_dirs() == [str(path) for path in PRIVATE_DIRS]
    hidden = first_spawn.hidden_for(TREE)
    assert hidden == [str(path) for path in (*PRIVATE_DIRS, Path(TREE).resolve().parent)]
    assert first_spawn.to_json({"a": [1, None, True, False, 'q"\n\u00e9']}) == json.dumps(
        {"a": [1, None, True, False, 'q"\n\u00e9']}
    )


GRADER = """
import sys, time
from grader.sandbox import first_spawn
spawned = first_spawn.spawn(sys.argv[1])
print(spawned.pid if spawned else 0, spawned.workdir if spawned else "", flush=True)
time.sleep(600)
"""


def test_the_first_spawned_worker_dies_with_its_grader(recipe: Path, tmp_path: Path) -> None:
    """setpriv's death signal (preexec_fn's before): a grader killed outright takes its
    student's processes with it."""
    env = {**os.environ, "ABGRADE_CACHE_DIR": str(recipe)}
    grader = subprocess.Popen([sys.executable, "-c", GRADER, TREE], stdout=subprocess.PIPE, text=True, env=env)
    workdir = ""
    try:
        assert grader.stdout is not None
        said, _, workdir = grader.stdout.readline().strip().partition(" ")
        pid = int(said)
        assert pid > 0
        assert os.path.exists(f"/proc/{pid}")
    finally:
        grader.kill()
        grader.wait()
    try:
        deadline = time.monotonic() + 30  # a backstop for a loaded machine, not a speed check
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        assert not _alive(pid)
    finally:  # a grader killed outright can't remove its folder (its uid's next lease sweeps /tmp)
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for init to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_first_spawned_worker_that_cannot_start_is_retried_then_said_and_the_recipe_dropped(
    recipe: Path, monkeypatch, capsys
) -> None:
    """The machine changed since the recipe was stored (here: `unshare` fails at once, for
    the first spawn and the ordinary path alike): the first spawn's worker never says it is
    confined, the ordinary path tries again, and the grade ends with exit 3 and one line;
    the recipe is gone, so the next grade works the level out afresh."""
    from grader.cli import main
    from grader.sandbox import isolation

    monkeypatch.setattr(first_spawn, "UNSHARE_OPTIONS", ("--no-such-option",))  # unshare exits at once
    monkeypatch.setattr(isolation.Isolation, "prefix", lambda self: ["false"])
    spawned = []
    spawn = first_spawn.spawn
    monkeypatch.setattr(first_spawn, "spawn", lambda *args: spawned.append(spawn(*args)) or spawned[-1])
    code = main(["grade", TREE, "--lab", "tree"])
    err = capsys.readouterr().err
    assert spawned and spawned[0] is not None  # the recipe was used
    assert code == 3 and len(err.splitlines()) == 1 and "3 attempts" in err
    assert err.startswith("abgrade: this machine could not start the student's process (not the submission's fault")
    assert not first_spawn.has_recipe()


def test_a_recipe_that_names_another_program_to_exec_is_not_used(recipe: Path) -> None:
    """The grader execs what the recipe names as root: only the programs the scrubbed PATH
    finds now, whatever the cache says."""
    from grader import cache

    stored = cache.read(first_spawn.recipe_name())
    stored["recipe"]["unshare"] = "/bin/true"
    cache.write(first_spawn.recipe_name(), stored)
    assert not first_spawn.has_recipe() and first_spawn.spawn(TREE) is None

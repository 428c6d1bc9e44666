"""The per-user cache (grader/cache.py) and what `abgrade grade` no longer does at start-up
(issue 26, goal 1): a spec's YAML is parsed once per text (an edited spec is parsed again),
the seccomp filter is compiled and the isolation level probed once, the lab registry reads
entry points without importlib.metadata, and a cache that is not the grader's own alone,
or an entry of the wrong shape, is never believed. Every check runs a real `abgrade` or a
real interpreter with its own cache folder."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader import cache
from grader.sandbox import seccomp_filter, session
from grader.sandbox.isolation import detect_isolation
from grader.spec import yaml_lines
from grader.spec.errors import SpecError

PROJECT = Path(__file__).resolve().parent.parent
HEAVY = ("yaml", "importlib.metadata", "concurrent.futures", "pyseccomp")
# what a first-spawned grade of a passing `.py` never needs (issue 26, goal 1): Popen and the
# level's probe, sysconfig (the recipe has the site folders), OpenSSL (SHA-256 is CPython's
# own), secrets, the tree lab's classic bugs (only a failed check replays them)
FIRST_SPAWN_NEEDS_NONE = ("subprocess", "sysconfig", "_hashlib", "secrets", "reference.tree_bugs")
REPORT_MODULES = "import sys; print(' '.join(m for m in {heavy!r} if m in sys.modules))"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ABGRADE_CACHE_DIR", str(folder))
    monkeypatch.delenv("ABGRADE_CACHE", raising=False)
    return folder


def run_python(code: str, cache_dir: Path) -> str:
    env = {**os.environ, "ABGRADE_CACHE_DIR": str(cache_dir)}
    env.pop("ABGRADE_CACHE", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_grade_on_a_warm_cache_imports_no_yaml_metadata_thread_pool_or_seccomp_bindings(cache_dir: Path) -> None:
    """...and a grade whose worker was spawned first (the second, at the namespaces level)
    none of what only the ordinary path or a failed check needs (FIRST_SPAWN_NEEDS_NONE)."""
    code = (
        "import contextlib, io\n"
        "from grader.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['grade', 'reference/solutions/tree.py', '--lab', 'tree', '-q'])\n"
        "assert code == 0, code\n" + REPORT_MODULES.format(heavy=HEAVY + FIRST_SPAWN_NEEDS_NONE)
    )
    first = run_python(code, cache_dir)
    assert "yaml" in first.split()  # the first parse of the spec needs PyYAML
    second = run_python(code, cache_dir).split()  # the second reads it all from the cache
    assert [name for name in second if name in HEAVY] == []
    if detect_isolation().level == "namespaces":  # the first run stored the first spawn's recipe
        assert second == []


def test_an_edited_spec_is_parsed_again(tmp_path: Path, cache_dir: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("lab: tree\ncases:\n  - name: a\n    value: 4\n")
    _, first = yaml_lines.read_yaml_file(spec, "spec.yaml", "spec", SpecError)
    _, again = yaml_lines.read_yaml_file(spec, "spec.yaml", "spec", SpecError)
    assert again == first and again["cases"][0].line == 3 and again["cases"].path == "cases"
    assert again["cases"][0].lines == {"name": 3, "value": 4} and again["cases"][0].path == "cases[0]"
    spec.write_text("lab: tree\ncases:\n  - name: a\n\n    value: 5\n")
    _, edited = yaml_lines.read_yaml_file(spec, "spec.yaml", "spec", SpecError)
    assert edited["cases"][0]["value"] == 5 and edited["cases"][0].lines["value"] == 5


def test_a_broken_spec_is_still_an_error_with_its_line(tmp_path: Path, cache_dir: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("lab: tree\ncases: [\n")
    for _ in range(2):
        with pytest.raises(SpecError) as raised:
            yaml_lines.read_yaml_file(spec, "spec.yaml", "spec", SpecError)
        assert "spec.yaml:3" in str(raised.value) or "spec.yaml:2" in str(raised.value)


def test_a_cache_folder_others_may_enter_is_not_used(cache_dir: Path) -> None:
    cache.write("probe", [1, 2])
    assert cache.read("probe") == [1, 2]
    os.chmod(cache_dir, 0o755)
    assert cache.folder() is None and cache.read("probe") is None
    os.chmod(cache_dir, 0o700)
    assert cache.read("probe") == [1, 2]


def test_a_cache_inside_a_folder_anyone_may_write_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # someone else could swap abgrade/run-cache for a folder of theirs
    monkeypatch.delenv("ABGRADE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    (shared / "abgrade").mkdir(mode=0o777)
    os.chmod(shared / "abgrade", 0o777)
    assert cache.folder() is None


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another uid needs root")
def test_an_entry_of_another_user_or_writable_by_others_is_ignored(cache_dir: Path) -> None:
    cache.write("probe", "mine")
    entry = next(cache_dir.iterdir())
    os.chmod(entry, 0o666)
    assert cache.read("probe") is None
    os.chmod(entry, 0o600)
    os.chown(entry, 61999, 61999)
    assert cache.read("probe") is None


def test_entries_of_the_wrong_shape_are_worked_out_again(cache_dir: Path) -> None:
    seccomp_filter.filter_program.cache_clear()
    expected = seccomp_filter.filter_program()
    key = seccomp_filter._cache_key()
    for wrong in (b"\x00" * 7, ((), b"\x00" * 7), (("/no/such/libseccomp.so.2:1:1",), b"\x00" * 8)):
        cache.write(key, wrong)  # the old layout, not whole instructions, a library changed since
        seccomp_filter.filter_program.cache_clear()
        assert seccomp_filter.filter_program() == expected
    path = next(p for p in cache_dir.iterdir() if p.name.startswith(key))
    path.write_bytes(b"not marshal at all")
    seccomp_filter.filter_program.cache_clear()
    assert seccomp_filter.filter_program() == expected
    seccomp_filter.filter_program.cache_clear()


def test_the_observer_is_compiled_once_and_a_corrupt_entry_compiled_again(cache_dir: Path) -> None:
    source = "VALUE = 41 + 1\n"
    compiled = session._stored_or_compiled("_abgrade_probe_test", source)
    assert marshal.loads(bytes.fromhex(compiled)).co_filename == "<abgrade _abgrade_probe_test>"
    (entry,) = cache_dir.iterdir()
    assert session._stored_or_compiled("_abgrade_probe_test", source) == compiled  # read back
    entry.write_bytes(marshal.dumps("not hex"))
    assert session._stored_or_compiled("_abgrade_probe_test", source) == compiled
    assert session._stored_or_compiled("_abgrade_probe_test", "VALUE = 7\n") != compiled  # another source


def test_a_corrupt_spec_entry_is_parsed_again(tmp_path: Path, cache_dir: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("lab: tree\n")
    yaml_lines.read_yaml_file(spec, "spec.yaml", "spec", SpecError)
    for entry in cache_dir.iterdir():
        cache_value = ("x", 1)  # a tag the decoder does not know
        entry.write_bytes(__import__("marshal").dumps(cache_value))
    _, data = yaml_lines.read_yaml_file(spec, "spec.yaml", "spec", SpecError)
    assert data == {"lab": "tree"} and data.lines == {"lab": 1}


def test_the_cache_can_be_turned_off(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABGRADE_CACHE", "0")
    cache.write("probe", 1)
    assert cache.read("probe") is None and not cache_dir.exists()


def test_the_registry_reads_entry_points_without_importlib_metadata(cache_dir: Path) -> None:
    code = (
        "from grader import registry\n"
        "names = registry.lab_names()\n"
        "folder = [p.value for p in registry.group_points(registry.FOLDER_GROUP)]\n"
        "import sys\n"
        "print('importlib.metadata' in sys.modules, ','.join(names), ','.join(folder))\n"
    )
    imported, names, folder = run_python(code, cache_dir).split()
    from importlib.metadata import entry_points

    assert imported == "False"
    assert names.split(",") == sorted({point.name for point in entry_points(group="abgrade.labs")})
    assert folder.split(",") == [point.value for point in entry_points(group="abgrade.lab_folders")]


def test_the_isolation_level_found_once_is_forgotten_when_a_start_fails(cache_dir: Path) -> None:
    from grader.sandbox import isolation

    isolation.detect_isolation.cache_clear()
    found = isolation.detect_isolation()
    key = isolation._detection_key()
    if os.environ.get("ABGRADE_ISOLATION") != "process":
        assert cache.read(key) == found.level
    isolation.forget_isolation()
    assert cache.read(key) is None
    assert isolation.detect_isolation() == found
    isolation.detect_isolation.cache_clear()


def test_the_command_line_registers_the_command_it_names_and_all_for_help() -> None:
    def abgrade(*words: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "grader", *words], capture_output=True, text=True, cwd=PROJECT, check=False
        )

    assert "--lab LAB" in abgrade("grade", "--help").stdout
    assert "student-wheel" in abgrade("--help").stdout and "gradebook" in abgrade("--help").stdout
    wrong = abgrade("student_wheel")  # not a command as typed: every command is offered
    assert wrong.returncode == 2 and "gradebook" in wrong.stderr and "student-wheel" in wrong.stderr

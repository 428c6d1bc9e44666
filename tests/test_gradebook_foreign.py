"""A gradebook this abgrade must not open: one written by a newer abgrade (a newer schema
version), another program's SQLite file, a text file. Every command that opens a gradebook
(batch, gradebook show / override / export / publish), through the real CLI: a one-line
error naming the file, exit code 2, and the file's bytes unchanged (no migration, no meta
row, no schema script)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from grader.batch.gradebook import SCHEMA_VERSION, Gradebook

PROJECT = Path(__file__).resolve().parent.parent
NEWER = str(int(SCHEMA_VERSION) + 1)


def abgrade(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "CANVAS_TOKEN": "not-a-token"}
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


def newer_gradebook(path: Path) -> None:
    """A real gradebook of this code, then marked as written by the next schema."""
    Gradebook(path).close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=DELETE")  # one file, nothing pending beside it
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (NEWER,))
        db.commit()


def other_sqlite(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE recipes (name TEXT, minutes INTEGER)")
        db.execute("INSERT INTO recipes VALUES ('soup', 40)")
        db.commit()


def text_file(path: Path) -> None:
    path.write_text("student,score\n10001,7\n")


BOOKS = {
    "newer": (newer_gradebook, f"written by a newer abgrade (gradebook schema {NEWER}; this abgrade knows schemas up to "
              f"{SCHEMA_VERSION}): upgrade abgrade"),
    "other-sqlite": (other_sqlite, "not an abgrade gradebook (an SQLite database without abgrade's schema version)"),
    "text": (text_file, "not an abgrade gradebook (SQLite can't read it"),
}  # fmt: skip

COMMANDS = {
    "batch": ["batch", "{class}", "--lab", "tree", "--out", "{out}"],
    "show": ["gradebook", "show", "--book", "{out}"],
    "show-student": ["gradebook", "show", "10001", "--book", "{book}"],
    "override": ["gradebook", "override", "10001", "--points", "1", "--reason", "x", "--book", "{out}"],
    "export": ["gradebook", "export", "--format", "csv", "--book", "{out}"],
    "publish": [
        "gradebook",
        "publish",
        "--canvas",
        "http://127.0.0.1:9",
        "--course",
        "1",
        "--assignment",
        "1",
        "--book",
        "{out}",
    ],
}


@pytest.mark.parametrize("kind", sorted(BOOKS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_gradebook_this_abgrade_cannot_open_is_a_one_line_error_and_stays_as_it_was(tmp_path, kind, command):
    make, message = BOOKS[kind]
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    (folder / "10001.py").write_text("def alphabeta(): pass\n")
    book = out / "gradebook.sqlite"
    make(book)
    before = book.read_bytes()
    places = {"{class}": str(folder), "{out}": str(out), "{book}": str(book)}
    run = abgrade(*(places.get(word, word) for word in COMMANDS[command]), cwd=tmp_path)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stderr.startswith(f"abgrade: {book}: {message}"), run.stderr
    assert len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr
    assert book.read_bytes() == before


def test_an_older_gradebook_still_opens_and_an_empty_file_becomes_one(tmp_path):
    """The check refuses only what is not ours or newer: this schema opens as before, and an
    empty file (touched by hand) becomes a new gradebook."""
    book = tmp_path / "gradebook.sqlite"
    Gradebook(book).close()
    Gradebook(book).close()
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    Gradebook(empty).close()
    with closing(sqlite3.connect(empty)) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (SCHEMA_VERSION,)


@pytest.mark.parametrize("version", ["\u00b2", "9" * 5000])
def test_a_schema_version_that_is_no_small_number_is_not_ours(tmp_path, version):
    """A meta table whose schema version int() can't read (a superscript digit, 5,000
    digits) is another program's file, said so, not a traceback."""
    book = tmp_path / "gradebook.sqlite"
    with closing(sqlite3.connect(book)) as db:
        db.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (version,))
        db.commit()
    before = book.read_bytes()
    done = abgrade("gradebook", "show", "--book", book, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "not an abgrade gradebook" in done.stderr and "Traceback" not in done.stderr
    assert book.read_bytes() == before

"""The class folder as a batch sees it, kept in an SQLite file rather than in memory.

A batch of 10,000 students must not hold 10,000 submissions in its process for hours
(issue 26, goal 3): the folder's entries are scanned once (discovery.py says what each
one claims), their claims grouped by student in SQLite, each student settled (graded,
skipped or ignored, discovery.settle) and written to a table; the run then reads them
back a page at a time, in the order it needs: by student, or notebooks first for the
queue of those to grade. The file lives in the run's scratch folder, in a folder only
this user may enter (it names every student's file), and goes with it."""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from .discovery import Claim, Skipped, Submission, scan, settle
from .gradebook import SMALL_PAGE_CACHE

PAGE = 256  # rows read back at a time

_SCHEMA = """
CREATE TABLE claims (
    student TEXT NOT NULL, name TEXT NOT NULL, shown TEXT NOT NULL, lms_number INTEGER,
    path BLOB, reason TEXT NOT NULL, entry BLOB NOT NULL
);
CREATE TABLE submissions (
    student TEXT PRIMARY KEY, notebook INTEGER NOT NULL, path BLOB NOT NULL,
    file_hash TEXT NOT NULL, shown TEXT NOT NULL, name TEXT NOT NULL
);
CREATE TABLE skipped (position INTEGER PRIMARY KEY, student TEXT, shown TEXT, reason TEXT, name TEXT);
CREATE TABLE ignored (position INTEGER PRIMARY KEY, line TEXT NOT NULL);
CREATE TABLE queue (position INTEGER PRIMARY KEY, student TEXT NOT NULL);
"""


class ClassList:
    """One batch's class folder: its submissions, skipped and ignored entries, and the
    queue of submissions to grade, in `path` (made here, mode 0600)."""

    def __init__(self, path: Path) -> None:
        self.folder = path.parent  # hidden from the students' processes, as the class folder is
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=OFF")  # scratch: a crash loses the run, never a grade
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute(SMALL_PAGE_CACHE)
        self.db.executescript(_SCHEMA)

    @classmethod
    def find(cls, folder: Path, id_pattern: re.Pattern | None, path: Path) -> ClassList:
        """Scan `folder` (see discovery.py) into a new list at `path`."""
        found = cls(path)
        found._scan(folder, id_pattern)
        return found

    def close(self) -> None:
        self.db.close()

    def _scan(self, folder: Path, id_pattern: re.Pattern | None) -> None:
        ignored: list[tuple[bytes, str]] = []  # lines of entries that claim no student: few, sorted below
        self.db.execute("BEGIN")
        for entry in folder.iterdir():  # in no order: the claims are sorted below, in SQLite
            item = next(scan((entry,), id_pattern))
            if isinstance(item, str):
                ignored.append((os.fsencode(entry.name), item))
                continue
            path = None if item.path is None else os.fsencode(item.path)
            self.db.execute(
                "INSERT INTO claims VALUES (?, ?, ?, ?, ?, ?, ?)",
                (item.student, item.name, item.shown, item.lms_number, path, item.reason, item.order),
            )
        self.db.executemany("INSERT INTO ignored (line) VALUES (?)", ((line,) for _, line in sorted(ignored)))
        self.db.execute("COMMIT")
        self.db.execute("BEGIN")
        for student, claims in self._claims_by_student():
            for result in settle(folder, student, claims):
                if isinstance(result, Submission):
                    self.db.execute(
                        "INSERT INTO submissions VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            result.student,
                            int(result.path.suffix == ".ipynb"),
                            os.fsencode(result.path),
                            result.file_hash,
                            result.shown,
                            result.name,
                        ),
                    )
                elif isinstance(result, Skipped):
                    self.db.execute(
                        "INSERT INTO skipped (student, shown, reason, name) VALUES (?, ?, ?, ?)",
                        (result.student, result.shown, result.reason, result.name),
                    )
                else:
                    self.db.execute("INSERT INTO ignored (line) VALUES (?)", (result,))
        self.db.execute("DELETE FROM claims")
        self.db.execute("COMMIT")

    def _claims_by_student(self) -> Iterator[tuple[str, list[Claim]]]:
        """Each student's claims, in folder order, by student (the order of str: SQLite
        compares the UTF-8 of clean names, which keeps code point order)."""
        rows = self.db.cursor().execute(
            "SELECT student, name, shown, lms_number, path, reason, entry FROM claims ORDER BY student, entry"
        )
        student, claims = "", list[Claim]()
        for who, name, shown, number, path, reason, entry in rows:
            claim = Claim(who, name, shown, number, None if path is None else Path(os.fsdecode(path)), reason, entry)
            if who != student and claims:
                yield student, claims
                claims = []
            student = who
            claims.append(claim)
        if claims:
            yield student, claims

    # what was found --------------------------------------------------------------------

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM submissions").fetchone()[0]

    def has(self, student: str) -> bool:
        return self.db.execute("SELECT 1 FROM submissions WHERE student = ?", (student,)).fetchone() is not None

    def first_students(self, count: int) -> list[str]:
        rows = self.db.execute("SELECT student FROM submissions ORDER BY student LIMIT ?", (count,))
        return [student for (student,) in rows]

    def submissions(self, notebooks_first: bool = False) -> Iterator[Submission]:
        """Every submission by student (`notebooks_first`: the notebooks, then the rest),
        read a page at a time."""
        for notebook in (1, 0) if notebooks_first else (None,):
            last = ""
            kind = "" if notebook is None else f" AND notebook = {notebook}"
            while True:
                page = self.db.execute(
                    "SELECT student, path, file_hash, shown, name FROM submissions "
                    f"WHERE student > ?{kind} ORDER BY student LIMIT ?",
                    (last, PAGE),
                ).fetchall()
                yield from (_submission(row) for row in page)
                if len(page) < PAGE:
                    break
                last = page[-1][0]

    def skipped(self) -> list[Skipped]:
        """The students' entries that can't be graded (in the order of their students)."""
        rows = self.db.execute("SELECT student, shown, reason, name FROM skipped ORDER BY position")
        return [Skipped(*row) for row in rows]

    def ignored(self) -> list[str]:
        """The entries that are not submissions: first those that claim no student (by
        name), then students' other files (by student)."""
        return [line for (line,) in self.db.execute("SELECT line FROM ignored ORDER BY position")]

    @property
    def problems(self) -> list[str]:
        """The skipped entries as one line each, for the terminal."""
        return [f"{s.shown}: {s.reason}" for s in self.skipped()]

    # the queue of those to grade ---------------------------------------------------------

    def enqueue(self, submissions: Iterable[Submission]) -> int:
        """Queue these submissions for grading, in this order; returns how many."""
        self.db.execute("DELETE FROM queue")
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO queue (student) VALUES (?)", ((s.student,) for s in submissions))
        self.db.execute("COMMIT")
        return self.db.execute("SELECT count(*) FROM queue").fetchone()[0]

    def queued(self) -> Iterator[Submission]:
        """The queue in its order, read a page at a time."""
        last = 0
        while True:
            page = self.db.execute(
                "SELECT q.position, s.student, s.path, s.file_hash, s.shown, s.name FROM queue AS q "
                "JOIN submissions AS s ON s.student = q.student WHERE q.position > ? ORDER BY q.position LIMIT ?",
                (last, PAGE),
            ).fetchall()
            yield from (_submission(row[1:]) for row in page)
            if len(page) < PAGE:
                return
            last = page[-1][0]

    def names(self) -> Iterator[tuple[str, str]]:
        """(student, name) of every submission, by student."""
        return ((s.student, s.name) for s in self.submissions())


def _submission(row: tuple) -> Submission:
    student, path, digest, shown, name = row
    return Submission(student, Path(os.fsdecode(path)), digest, shown, name)

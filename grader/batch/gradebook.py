"""The gradebook: a SQLite file (stdlib sqlite3, WAL) with one row per batch run, one per
submission and one per test. Each submission is written in its own transaction the moment
it is graded, so Ctrl-C, a crash or SIGKILL of the batch loses nothing already graded,
and a later run can tell what is still missing or out of date."""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..results import GradeReport, TestResult
from ..spec import Spec
from .discovery import Submission

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    lab          TEXT NOT NULL,
    spec_version TEXT NOT NULL,
    spec_digest  TEXT NOT NULL,
    seed         INTEGER NOT NULL,
    jobs         INTEGER NOT NULL,
    folder       TEXT NOT NULL,
    started      TEXT NOT NULL,
    ended        TEXT,
    status       TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'complete', 'interrupted'))
);
CREATE TABLE IF NOT EXISTS submissions (
    lab          TEXT NOT NULL,
    student      TEXT NOT NULL,
    file         TEXT NOT NULL,
    file_hash    TEXT NOT NULL,
    spec_version TEXT NOT NULL,
    spec_digest  TEXT NOT NULL,
    seed         INTEGER NOT NULL,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    status       TEXT NOT NULL CHECK (status IN ('graded', 'error')),
    score        REAL,
    max_score    REAL,
    error        TEXT,
    seconds      REAL NOT NULL,
    graded_at    TEXT NOT NULL,
    PRIMARY KEY (lab, student)
);
CREATE TABLE IF NOT EXISTS tests (
    lab        TEXT NOT NULL,
    student    TEXT NOT NULL,
    position   INTEGER NOT NULL,
    name       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    case_name  TEXT,
    score      REAL NOT NULL,
    max_score  REAL NOT NULL,
    passed     INTEGER NOT NULL,
    visibility TEXT NOT NULL,
    output     TEXT NOT NULL,
    diagnoses  TEXT NOT NULL,
    details    TEXT,
    PRIMARY KEY (lab, student, position),
    FOREIGN KEY (lab, student) REFERENCES submissions(lab, student)
);
"""


@dataclass(frozen=True)
class GradeKey:
    """What a stored grade was computed from; equal keys mean the grade is still valid."""

    file_hash: str
    spec_version: str
    spec_digest: str
    seed: int


@dataclass
class StoredGrade:
    """One submission's row, with its tests rebuilt as a GradeReport (None for errors)."""

    student: str
    file: str
    status: str              # "graded" or "error" (the machine failed, not the student)
    run_id: int
    seed: int
    seconds: float
    graded_at: str
    report: GradeReport | None = None
    error: str | None = None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Gradebook:
    """An open gradebook file. Every write is one transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(_SCHEMA)  # idempotent; executescript manages its own transaction
        with self._transaction():
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # runs ---------------------------------------------------------------------------

    def start_run(self, spec: Spec, seed: int, jobs: int, folder: Path) -> int:
        with self._transaction():
            cursor = self.db.execute(
                "INSERT INTO runs (lab, spec_version, spec_digest, seed, jobs, folder, started) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", (spec.lab, spec.version, spec.digest, seed, jobs, str(folder), _now()))
        return int(cursor.lastrowid)

    def end_run(self, run_id: int, status: str) -> None:
        with self._transaction():
            self.db.execute("UPDATE runs SET status = ?, ended = ? WHERE id = ?", (status, _now(), run_id))

    def last_seed(self, spec: Spec) -> int | None:
        """The seed of the latest run of this lab and spec, so that a resumed or
        incremental run gives the students it grades the same hidden cases."""
        row = self.db.execute("SELECT seed FROM runs WHERE lab = ? AND spec_digest = ? ORDER BY id DESC LIMIT 1",
                              (spec.lab, spec.digest)).fetchone()
        return row[0] if row else None

    # submissions --------------------------------------------------------------------

    def valid_keys(self, lab: str) -> dict[str, GradeKey]:
        """Student -> what their stored grade was computed from; error rows are left out,
        so they are graded again."""
        rows = self.db.execute("SELECT student, file_hash, spec_version, spec_digest, seed FROM submissions "
                               "WHERE lab = ? AND status = 'graded'", (lab,))
        return {student: GradeKey(*key) for student, *key in rows}

    def record_report(self, run_id: int, spec: Spec, seed: int, submission: Submission,
                      report: GradeReport, seconds: float) -> None:
        """Store a graded submission and its tests, replacing any older grade."""
        with self._transaction():
            self._replace(run_id, spec, seed, submission, "graded", report.score, report.max_score, None, seconds)
            self.db.executemany(
                "INSERT INTO tests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(spec.lab, submission.student, position, t.name, t.kind, t.case, t.score, t.max_score,
                  int(t.passed), t.visibility, t.output, json.dumps(t.diagnoses),
                  None if t.details is None else json.dumps(t.details))
                 for position, t in enumerate(report.tests)])

    def record_error(self, run_id: int, spec: Spec, seed: int, submission: Submission,
                     message: str, seconds: float) -> None:
        """Store that the machine could not grade this submission (retried next run)."""
        with self._transaction():
            self._replace(run_id, spec, seed, submission, "error", None, None, message, seconds)

    def _replace(self, run_id: int, spec: Spec, seed: int, submission: Submission, status: str,
                 score: float | None, max_score: float | None, error: str | None, seconds: float) -> None:
        key = (spec.lab, submission.student)
        self.db.execute("DELETE FROM tests WHERE lab = ? AND student = ?", key)
        self.db.execute("DELETE FROM submissions WHERE lab = ? AND student = ?", key)
        self.db.execute(
            "INSERT INTO submissions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*key, submission.shown, submission.file_hash, spec.version, spec.digest, seed, run_id, status,
             score, max_score, error, seconds, _now()))

    def grades(self, lab: str, students: list[str]) -> list[StoredGrade]:
        """The stored grades of these students (those that have one), by student."""
        wanted = set(students)
        grades = []
        rows = self.db.execute("SELECT student, file, status, run_id, seed, seconds, graded_at, error "
                               "FROM submissions WHERE lab = ? ORDER BY student", (lab,))
        for student, file, status, run_id, seed, seconds, graded_at, error in rows.fetchall():
            if student in wanted:
                report = self._report(lab, student, file, seconds) if status == "graded" else None
                grades.append(StoredGrade(student, file, status, run_id, seed, seconds, graded_at, report, error))
        return grades

    def _report(self, lab: str, student: str, file: str, seconds: float) -> GradeReport:
        rows = self.db.execute("SELECT name, kind, case_name, max_score, passed, visibility, output, diagnoses, "
                               "details FROM tests WHERE lab = ? AND student = ? ORDER BY position", (lab, student))
        tests = [TestResult(name=name, kind=kind, max_score=most, passed=bool(passed), output=output,
                            visibility=visibility, case=case, diagnoses=json.loads(diagnoses),
                            details=None if details is None else json.loads(details))
                 for name, kind, case, most, passed, visibility, output, diagnoses, details in rows]
        return GradeReport(lab=lab, submission=file, tests=tests, execution_time=seconds)

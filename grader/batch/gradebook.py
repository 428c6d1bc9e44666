"""The gradebook: a SQLite file (stdlib sqlite3, WAL) with one row per batch run, one per
submission and one per test. Each submission is written in its own transaction the moment
it is graded, so Ctrl-C, a crash or SIGKILL of the batch loses nothing already graded,
and a later run can tell what is still missing or out of date.

The instructor's adjustments sit in tables of their own (`penalties`, `overrides`, and
`override_log`, the audit trail, which is only ever appended to), keyed by lab and
student and referenced by no graded row: grading a submission again replaces its
`submissions` and `tests` rows and leaves them alone (see adjustments.py)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..lab_setup import UsageError
from ..results import GradeReport, TestResult
from ..spec import Spec
from .adjustments import Mark, Override, Penalty, final_mark
from .discovery import Skipped, Submission

# SQLite's page cache of each of a batch's connections (its default: 2 MB each). A batch
# writes its databases in order and reads them back in order, and a page the OS still has
# is a read away, so a bigger cache bought nothing but a batch process that grew with the
# class (by up to that default, for each database, once its file outgrew it: issue 26,
# goal 3; 3 MB of the batch process's 35 MB at 3,000 submissions)
SMALL_PAGE_CACHE = "PRAGMA cache_size=-256"  # KiB
SCHEMA_VERSION = "7"  # 2: runs may be `killed` and record their pid; errors say whether the machine failed
# 3: a submission keeps its report's notes and load notes, a test whether it ran at all
# 4: a submission keeps the student's name; late penalties, overrides and their audit trail
# 5: what the last run's exports were made of besides the grades (`exports`), so that an
#    override rewrites them at once, exactly as a batch would
# 6: what was published to an LMS (`publications`, only appended to)
# 7: `export_students`, the students of the last run's exports, a table of their own
#    rather than a list in the `exports` JSON (moved there by _migrate_from_6)

_RUNS_TABLE = """CREATE TABLE IF NOT EXISTS {name} (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    lab          TEXT NOT NULL,
    spec_version TEXT NOT NULL,
    spec_digest  TEXT NOT NULL,
    seed         INTEGER NOT NULL,
    jobs         INTEGER NOT NULL,
    folder       TEXT NOT NULL,
    started      TEXT NOT NULL,
    ended        TEXT,
    status       TEXT NOT NULL DEFAULT 'running'
                 CHECK (status IN ('running', 'complete', 'interrupted', 'killed')),
    pid          INTEGER
);"""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
{runs}
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
    machine      INTEGER NOT NULL DEFAULT 1,  -- an error: 1 the machine failed (retried), 0 grading this file failed
    notes        TEXT NOT NULL DEFAULT '{}',  -- JSON: the report's notes and load notes (failing cells, ...)
    name         TEXT NOT NULL DEFAULT '',  -- the student's name, when the file name carries one
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
    not_run    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (lab, student, position),
    FOREIGN KEY (lab, student) REFERENCES submissions(lab, student)
);
{adjustments}""".replace("{runs}", _RUNS_TABLE.format(name="runs"))

# Schema 4. No foreign key to `submissions`: a regrade deletes and rewrites that row.
_ADJUSTMENTS = """
CREATE TABLE IF NOT EXISTS penalties (
    lab          TEXT NOT NULL,
    student      TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    source       TEXT NOT NULL,
    days_late    INTEGER NOT NULL,
    percent      REAL NOT NULL,
    policy       TEXT NOT NULL,
    computed_at  TEXT NOT NULL,
    PRIMARY KEY (lab, student)
);
CREATE TABLE IF NOT EXISTS overrides (
    lab     TEXT NOT NULL,
    student TEXT NOT NULL,
    mode    TEXT NOT NULL CHECK (mode IN ('set', 'add')),
    points  REAL NOT NULL,
    reason  TEXT NOT NULL,
    by      TEXT NOT NULL,
    at      TEXT NOT NULL,
    PRIMARY KEY (lab, student)
);
CREATE TABLE IF NOT EXISTS override_log (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    lab     TEXT NOT NULL,
    student TEXT NOT NULL,
    action  TEXT NOT NULL CHECK (action IN ('set', 'add', 'remove')),
    points  REAL,
    reason  TEXT NOT NULL,
    by      TEXT NOT NULL,
    at      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS exports (
    lab      TEXT PRIMARY KEY,
    context  TEXT NOT NULL,  -- JSON of ExportContext: skipped entries, show_hidden
    saved_at TEXT NOT NULL
);
"""
# Schema 6: every grade (and feedback comment) sent to an LMS, for the record and so that a
# rerun does not post the same feedback twice. Keyed by nothing graded: regrades keep it.
_PUBLICATIONS = """
CREATE TABLE IF NOT EXISTS publications (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    lab          TEXT NOT NULL,
    student      TEXT NOT NULL,
    target       TEXT NOT NULL,  -- where: `canvas URL course C assignment A`
    lms_user     TEXT NOT NULL,  -- the LMS's own id of the student
    old_grade    TEXT,           -- what the LMS held before (NULL: no grade)
    new_grade    REAL,           -- what was sent (NULL: only a comment)
    feedback     TEXT,           -- sha256 of the feedback posted as a comment, if one was
    by           TEXT NOT NULL,
    at           TEXT NOT NULL
);
"""
# The students found in the class folder by the last run of each lab, with the
# name their file name carries ("" when none): the exports have a row for each.
_EXPORT_STUDENTS = """
CREATE TABLE IF NOT EXISTS export_students (
    lab     TEXT NOT NULL,
    student TEXT NOT NULL,
    name    TEXT NOT NULL,
    PRIMARY KEY (lab, student)
);
"""
_SCHEMA = _SCHEMA.replace("{adjustments}", _ADJUSTMENTS + _PUBLICATIONS + _EXPORT_STUDENTS)


@dataclass(frozen=True)
class ExportContext:
    """What a run's exports are made of besides the stored grades and the students found
    (`export_students`, saved with it): the folder entries that could not be used, and
    whether feedback shows hidden tests' details. Kept per lab so that `gradebook override`
    rewrites grades.csv, the feedback and the class pages at once, exactly as the next
    batch would."""

    skipped: tuple[Skipped, ...] = ()
    show_hidden: bool = False
    # the classic bugs' hints the run wrote with, in its spec's course's words (a strict
    # course's "alpha > beta"), so an override rewrites the pages in the same words; empty
    # in a gradebook of an older abgrade (the lab's default hints then)
    hints: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> str:
        return json.dumps(
            {
                "skipped": [[e.student, e.shown, e.reason, e.name] for e in self.skipped],
                "show_hidden": self.show_hidden,
                "hints": dict(self.hints),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> ExportContext:
        data = json.loads(text)
        hints = data.get("hints") or {}
        return cls(
            tuple(Skipped(*entry) for entry in data["skipped"]),
            bool(data["show_hidden"]),
            tuple((str(name), str(hint)) for name, hint in hints.items()) if isinstance(hints, dict) else (),
        )


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
    status: str  # "graded" or "error" (could not be graded)
    run_id: int
    seed: int
    seconds: float
    graded_at: str
    report: GradeReport | None = None
    error: str | None = None
    machine: bool = True  # an error caused by the machine (retried next run), not by grading this file
    name: str = ""
    penalty: Penalty | None = None
    override: Override | None = None

    @property
    def mark(self) -> Mark:
        """Graded score, penalty and final score (adjustments.final_mark)."""
        report = self.report
        return final_mark(
            None if report is None else report.score,
            None if report is None else report.max_score,
            self.penalty,
            self.override,
        )


@dataclass(frozen=True)
class OverrideEvent:
    """One line of the audit trail: an override set, adjusted or removed."""

    action: str  # "set", "add" or "remove"
    points: float | None
    reason: str
    by: str
    at: str


@dataclass(frozen=True)
class Publication:
    """One student's grade (and maybe feedback comment) as sent to an LMS."""

    student: str
    target: str
    lms_user: str
    old_grade: str | None
    new_grade: float | None
    feedback: str | None  # sha256 of the feedback posted as a comment
    by: str
    at: str


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class NotOurGradebook(UsageError):
    """The file is not a gradebook this abgrade can open (exit code 2, the file untouched)."""


def check_before_opening(path: Path) -> None:
    """Refuse, before anything writes to it, a file that is not an abgrade gradebook or one
    whose schema is newer than this code's: the migrations only go forward, and the schema
    script and the meta row would change a file a newer abgrade wrote (or any SQLite file).
    Read on a read-only connection; an absent or empty file becomes a new gradebook."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            found = None
            if "meta" in tables:
                found = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise NotOurGradebook(
            f"{path}: not an abgrade gradebook (SQLite can't read it: {exc}); give the batch's output folder "
            "(DIR-abgrade), or move this file out of the way"
        ) from None
    if not tables:
        return
    version = found[0] if found is not None else None
    if not isinstance(version, str) or not (version.isascii() and version.isdigit() and len(version) < 10):
        raise NotOurGradebook(
            f"{path}: not an abgrade gradebook (an SQLite database without abgrade's schema version); give the "
            "batch's output folder (DIR-abgrade), or move this file out of the way"
        )
    if int(version) > int(SCHEMA_VERSION):
        raise NotOurGradebook(
            f"{path}: written by a newer abgrade (gradebook schema {version}; this abgrade knows schemas up to "
            f"{SCHEMA_VERSION}): upgrade abgrade (pip install --upgrade abgrade) to open it; nothing was changed"
        )


class Gradebook:
    """An open gradebook file. Every write is one transaction."""

    def __init__(self, path: Path) -> None:
        check_before_opening(path)
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute(SMALL_PAGE_CACHE)
        self.db.execute("PRAGMA foreign_keys=ON")
        # idempotent; one transaction, so that a new gradebook's tables cost one sync of the
        # disk, not one each (19 fdatasyncs, about 0.13 s on this machine's disk under load,
        # on the batch's start); an existing gradebook's is a transaction that changes nothing
        try:
            self.db.executescript(
                f"BEGIN IMMEDIATE;\n{_SCHEMA}\n"
                f"INSERT OR IGNORE INTO meta VALUES ('schema_version', '{int(SCHEMA_VERSION)}');\nCOMMIT;"
            )
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        if self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",):
            self._migrate_from_1()
        if self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",):
            self._migrate_from_2()
        if self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("3",):
            self._migrate_from_3()
        if self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("4",):
            self._migrate_from_4()
        if self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("5",):
            self._migrate_from_5()
        if self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("6",):
            self._migrate_from_6()

    def _migrate_from_1(self) -> None:
        """A gradebook of schema 1: `runs` gets the status `killed` and a pid (SQLite can't
        change a CHECK, so the table is rebuilt), `submissions` the column `machine`."""
        self.db.execute("PRAGMA foreign_keys=OFF")  # runs is dropped and rebuilt under its references
        try:
            with self._transaction():
                self.db.execute(_RUNS_TABLE.format(name="runs_2"))
                columns = "id, lab, spec_version, spec_digest, seed, jobs, folder, started, ended, status"
                self.db.execute(f"INSERT INTO runs_2 ({columns}) SELECT {columns} FROM runs")
                self.db.execute("DROP TABLE runs")
                self.db.execute("ALTER TABLE runs_2 RENAME TO runs")
                self.db.execute("ALTER TABLE submissions ADD COLUMN machine INTEGER NOT NULL DEFAULT 1")
                self.db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        finally:
            self.db.execute("PRAGMA foreign_keys=ON")

    def _migrate_from_2(self) -> None:
        """Schema 2 lacks the notes of a submission and the not-run flag of a test."""
        with self._transaction():
            self.db.execute("ALTER TABLE submissions ADD COLUMN notes TEXT NOT NULL DEFAULT '{}'")
            self.db.execute("ALTER TABLE tests ADD COLUMN not_run INTEGER NOT NULL DEFAULT 0")
            self.db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")

    def _migrate_from_3(self) -> None:
        """Schema 3 lacks the student's name (the adjustments' tables are new, and made by
        the schema script already); its rows are kept, names empty until the next run."""
        with self._transaction():
            self.db.execute("ALTER TABLE submissions ADD COLUMN name TEXT NOT NULL DEFAULT ''")
            self.db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")

    def _migrate_from_4(self) -> None:
        """Schema 4 lacks `exports` (made by the schema script already, empty): until the
        next batch, `gradebook override` can't rewrite the exports and says so."""
        with self._transaction():
            self.db.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")

    def _migrate_from_5(self) -> None:
        """Schema 5 lacks only the `publications` table, which the schema script has made."""
        with self._transaction():
            self.db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")

    def _migrate_from_6(self) -> None:
        """Schema 6 kept the students of a lab's exports, and their names, in the `exports`
        JSON (a list as long as the class): they move to `export_students` (made by the
        schema script already), read a student at a time."""
        rows = self.db.execute("SELECT lab, context FROM exports WHERE instr(context, '\"students\"') > 0").fetchall()
        with self._transaction():
            self.db.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
            for lab, text in rows:
                data = json.loads(text)
                names = data.pop("names", {})
                self.db.executemany(
                    "INSERT OR REPLACE INTO export_students VALUES (?, ?, ?)",
                    ((lab, student, names.get(student, "")) for student in data.pop("students", [])),
                )
                self.db.execute("UPDATE exports SET context = ? WHERE lab = ?", (json.dumps(data), lab))

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
                "INSERT INTO runs (lab, spec_version, spec_digest, seed, jobs, folder, started, pid) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (spec.lab, spec.version, spec.digest, seed, jobs, str(folder), _now(), os.getpid()),
            )
        if cursor.lastrowid is None:  # sqlite3 sets it after every INSERT
            raise sqlite3.DatabaseError("the new run got no id")
        return cursor.lastrowid

    def mark_killed(self) -> list[int]:
        """Runs still `running` whose process is gone (killed, or its machine went down):
        marked `killed`. Call it holding the gradebook's lock: no live run is then running."""
        with self._transaction():
            ids = [row[0] for row in self.db.execute("SELECT id FROM runs WHERE status = 'running'")]
            self.db.execute("UPDATE runs SET status = 'killed' WHERE status = 'running'")
        return ids

    def end_run(self, run_id: int, status: str) -> None:
        with self._transaction():
            self.db.execute("UPDATE runs SET status = ?, ended = ? WHERE id = ?", (status, _now(), run_id))

    def recorded_in_run(self, run_id: int) -> int:
        """How many grades (and grading errors) run `run_id` has written: each is committed
        on its own, so this is exact whenever it is asked, an interrupt included."""
        row = self.db.execute("SELECT COUNT(*) FROM submissions WHERE run_id = ?", (run_id,)).fetchone()
        return int(row[0])

    def last_seed(self, spec: Spec) -> int | None:
        """The seed of the latest run of this lab and spec, so that a resumed or
        incremental run gives the students it grades the same hidden cases."""
        row = self.db.execute(
            "SELECT seed FROM runs WHERE lab = ? AND spec_digest = ? ORDER BY id DESC LIMIT 1", (spec.lab, spec.digest)
        ).fetchone()
        return row[0] if row else None

    # submissions --------------------------------------------------------------------

    def valid_keys(self, lab: str) -> dict[str, GradeKey]:
        """Student -> what their stored grade was computed from (stored_key of everyone)."""
        rows = self.db.execute(
            "SELECT student, file_hash, spec_version, spec_digest, seed FROM submissions "
            "WHERE lab = ? AND (status = 'graded' OR machine = 0)",
            (lab,),
        )
        return {student: GradeKey(*key) for student, *key in rows}

    def stored_key(self, lab: str, student: str) -> GradeKey | None:
        """What the student's stored grade was computed from; None for none. Machine errors
        count as none, so they are graded again; a file the grader failed on stays failed
        until it, the spec or the seed changes (grading it again would only fail again).
        One student at a time: a batch never holds the class's keys."""
        row = self.db.execute(
            "SELECT file_hash, spec_version, spec_digest, seed FROM submissions "
            "WHERE lab = ? AND student = ? AND (status = 'graded' OR machine = 0)",
            (lab, student),
        ).fetchone()
        return None if row is None else GradeKey(*row)

    def record_report(
        self, run_id: int, spec: Spec, seed: int, submission: Submission, report: GradeReport, seconds: float
    ) -> None:
        """Store a graded submission and its tests, replacing any older grade."""
        with self._transaction():
            self._replace(
                run_id,
                spec,
                seed,
                submission,
                "graded",
                report.score,
                report.max_score,
                None,
                seconds,
                notes={"notes": report.notes, "load_notes": report.load_notes},
            )
            self.db.executemany(
                "INSERT INTO tests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        spec.lab,
                        submission.student,
                        position,
                        t.name,
                        t.kind,
                        t.case,
                        t.score,
                        t.max_score,
                        int(t.passed),
                        t.visibility,
                        t.output,
                        json.dumps(t.diagnoses),
                        None if t.details is None else json.dumps(t.details),
                        int(t.not_run),
                    )
                    for position, t in enumerate(report.tests)
                ],
            )

    def record_error(
        self,
        run_id: int,
        spec: Spec,
        seed: int,
        submission: Submission,
        message: str,
        seconds: float,
        machine: bool = True,
    ) -> None:
        """Store that this submission could not be graded: because of the machine (retried
        next run), or because grading this file failed (`machine=False`)."""
        with self._transaction():
            self._replace(run_id, spec, seed, submission, "error", None, None, message, seconds, machine)

    def _replace(
        self,
        run_id: int,
        spec: Spec,
        seed: int,
        submission: Submission,
        status: str,
        score: float | None,
        max_score: float | None,
        error: str | None,
        seconds: float,
        machine: bool = True,
        notes: dict | None = None,
    ) -> None:
        key = (spec.lab, submission.student)
        self.db.execute("DELETE FROM tests WHERE lab = ? AND student = ?", key)
        self.db.execute("DELETE FROM submissions WHERE lab = ? AND student = ?", key)
        self.db.execute(
            "INSERT INTO submissions (lab, student, file, file_hash, spec_version, spec_digest, seed, run_id, "
            "status, score, max_score, error, seconds, graded_at, machine, notes, name) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *key,
                submission.shown,
                submission.file_hash,
                spec.version,
                spec.digest,
                seed,
                run_id,
                status,
                score,
                max_score,
                error,
                seconds,
                _now(),
                int(machine),
                json.dumps(notes or {}),
                submission.name,
            ),
        )

    def grades(self, lab: str, students: list[str] | None = None) -> list[StoredGrade]:
        """The stored grades of these students (None: everyone's), by student, with their
        penalties and overrides."""
        return list(self.iter_grades(lab, students))

    def iter_grades(
        self, lab: str, students: Iterable[str] | None = None, *, exported: bool = False
    ) -> Iterator[StoredGrade]:
        """`grades`, one at a time, by student: the exports of a class of any size hold one
        student's report at a time (`students` go to a temporary table, not to a set).
        `exported`: only the students found by the last run (`export_students`), each with
        the name its file name carried then, if any."""
        chosen = self._chosen("s.student", students, exported)
        name = "CASE WHEN e.name != '' THEN e.name ELSE s.name END" if exported else "s.name"
        found = "JOIN export_students AS e ON e.lab = s.lab AND e.student = s.student " if exported else ""
        rows = self.db.cursor().execute(
            "SELECT s.student, s.file, s.status, s.run_id, s.seed, s.seconds, s.graded_at, s.error, s.machine, "
            f"s.notes, {name}, p.submitted_at, p.source, p.days_late, p.percent, p.policy, "
            "o.mode, o.points, o.reason, o.by, o.at "
            f"FROM submissions AS s {found}"
            "LEFT JOIN penalties AS p ON p.lab = s.lab AND p.student = s.student "
            "LEFT JOIN overrides AS o ON o.lab = s.lab AND o.student = s.student "
            f"WHERE s.lab = ?1{chosen} ORDER BY s.student",
            (lab,),
        )
        for row in rows:
            student, file, status, run_id, seed, seconds, graded_at, error, machine, notes, name = row[:11]
            penalty = Penalty(*row[11:16]) if row[12] is not None else None
            override = Override(*row[16:21]) if row[16] is not None else None
            report = self._report(lab, student, file, seconds, json.loads(notes)) if status == "graded" else None
            yield StoredGrade(
                student,
                file,
                status,
                run_id,
                seed,
                seconds,
                graded_at,
                report,
                error,
                bool(machine),
                name,
                penalty,
                override,
            )

    def _chosen(self, column: str, students: Iterable[str] | None, exported: bool) -> str:
        """The condition on `column` that keeps `students` (None: everyone) and, when
        `exported`, only the students of the last run's exports; as ` AND ...`, or ''."""
        condition = ""
        if students is not None:
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS chosen (student TEXT PRIMARY KEY)")
            self.db.execute("DELETE FROM temp.chosen")
            self.db.executemany("INSERT OR IGNORE INTO temp.chosen VALUES (?)", ((s,) for s in students))
            condition += f" AND {column} IN (SELECT student FROM temp.chosen)"
        if exported:
            condition += f" AND {column} IN (SELECT student FROM export_students WHERE lab = ?1)"
        return condition

    def graded_kinds(self, lab: str, students: Iterable[str] | None = None, *, exported: bool = False) -> list[str]:
        """The check kinds the graded reports of these students (None: everyone's; see
        iter_grades for `exported`) hold."""
        chosen = self._chosen("student", students, exported)
        rows = self.db.execute(
            "SELECT DISTINCT kind FROM tests WHERE lab = ?1 AND student IN "
            f"(SELECT student FROM submissions WHERE lab = ?1 AND status = 'graded'){chosen}",
            (lab,),
        )
        return [kind for (kind,) in rows]

    def labs(self) -> list[str]:
        """The labs this gradebook holds grades of."""
        return [lab for (lab,) in self.db.execute("SELECT DISTINCT lab FROM submissions ORDER BY lab")]

    def students(self, lab: str) -> list[str]:
        return [s for (s,) in self.db.execute("SELECT student FROM submissions WHERE lab = ? ORDER BY student", (lab,))]

    def has_failed(self, lab: str, student: str) -> bool:
        """Whether the student's stored grade is below full marks, or not a grade."""
        row = self.db.execute(
            "SELECT 1 FROM submissions WHERE lab = ? AND student = ? AND (status = 'error' OR score < max_score)",
            (lab, student),
        ).fetchone()
        return row is not None

    def failed_students(self, lab: str) -> list[str]:
        """Students whose stored grade is not full marks, or who could not be graded."""
        rows = self.db.execute(
            "SELECT student FROM submissions WHERE lab = ? AND (status = 'error' OR score < max_score) "
            "ORDER BY student",
            (lab,),
        )
        return [student for (student,) in rows]

    # adjustments: penalties and overrides ---------------------------------------------

    def record_penalties(self, lab: str, penalties: dict[str, Penalty]) -> None:
        """Store the lateness of these students (one transaction), replacing what an earlier
        run decided for them; other students' penalties are kept."""
        with self._transaction():
            self.db.executemany(
                "INSERT OR REPLACE INTO penalties VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (lab, student, p.submitted_at, p.source, p.days_late, p.percent, p.policy, _now())
                    for student, p in sorted(penalties.items())
                ],
            )

    def penalties(self, lab: str) -> dict[str, Penalty]:
        rows = self.db.execute(
            "SELECT student, submitted_at, source, days_late, percent, policy FROM penalties WHERE lab = ?", (lab,)
        )
        return {student: Penalty(*rest) for student, *rest in rows}

    def set_override(self, lab: str, student: str, override: Override) -> None:
        """The student's override, replacing any earlier one; the audit trail gets a line."""
        with self._transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO overrides VALUES (?, ?, ?, ?, ?, ?, ?)",
                (lab, student, override.mode, override.points, override.reason, override.by, override.at),
            )
            self._log(lab, student, override.mode, override.points, override.reason, override.by, override.at)

    def remove_override(self, lab: str, student: str, reason: str, by: str) -> bool:
        """Remove the student's override (False: there was none); the audit trail keeps it."""
        with self._transaction():
            gone = self.db.execute("DELETE FROM overrides WHERE lab = ? AND student = ?", (lab, student)).rowcount
            if gone:
                self._log(lab, student, "remove", None, reason, by, _now())
        return bool(gone)

    def _log(self, lab: str, student: str, action: str, points: float | None, reason: str, by: str, at: str) -> None:
        self.db.execute(
            "INSERT INTO override_log (lab, student, action, points, reason, by, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (lab, student, action, points, reason, by, at),
        )

    def overrides(self, lab: str) -> dict[str, Override]:
        rows = self.db.execute("SELECT student, mode, points, reason, by, at FROM overrides WHERE lab = ?", (lab,))
        return {student: Override(*rest) for student, *rest in rows}

    def override_history(self, lab: str, student: str) -> list[OverrideEvent]:
        rows = self.db.execute(
            "SELECT action, points, reason, by, at FROM override_log WHERE lab = ? AND student = ? ORDER BY id",
            (lab, student),
        )
        return [OverrideEvent(*row) for row in rows]

    # what the exports are made of --------------------------------------------------------

    def save_export_context(self, lab: str, context: ExportContext, students: Iterable[tuple[str, str]]) -> None:
        """The run's export context and its students found, (student, name) each."""
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO exports VALUES (?, ?, ?)", (lab, context.to_json(), _now()))
            self.db.execute("DELETE FROM export_students WHERE lab = ?", (lab,))
            self.db.executemany(
                "INSERT INTO export_students VALUES (?, ?, ?)", ((lab, student, name) for student, name in students)
            )

    def export_context(self, lab: str) -> ExportContext | None:
        """The last batch's, or None when no batch of this schema wrote this lab's exports."""
        row = self.db.execute("SELECT context FROM exports WHERE lab = ?", (lab,)).fetchone()
        return None if row is None else ExportContext.from_json(row[0])

    # publications to an LMS ------------------------------------------------------------

    def record_publication(self, lab: str, entries: list[Publication]) -> None:
        """Append what was just sent to an LMS (one transaction)."""
        with self._transaction():
            self.db.executemany(
                "INSERT INTO publications (lab, student, target, lms_user, old_grade, new_grade, feedback, by, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (lab, e.student, e.target, e.lms_user, e.old_grade, e.new_grade, e.feedback, e.by, e.at)
                    for e in entries
                ],
            )

    def publications(self, lab: str, target: str | None = None) -> list[Publication]:
        """What was sent to an LMS for this lab (to `target` only, when given), oldest first."""
        query = (
            "SELECT student, target, lms_user, old_grade, new_grade, feedback, by, at FROM publications "
            "WHERE lab = ?" + (" AND target = ?" if target is not None else "") + " ORDER BY id"
        )
        rows = self.db.execute(query, (lab,) if target is None else (lab, target))
        return [Publication(*row) for row in rows]

    def _report(self, lab: str, student: str, file: str, seconds: float, notes: dict) -> GradeReport:
        rows = self.db.execute(
            "SELECT name, kind, case_name, max_score, passed, visibility, output, diagnoses, "
            "details, not_run FROM tests WHERE lab = ? AND student = ? ORDER BY position",
            (lab, student),
        )
        tests = [
            TestResult(
                name=name,
                kind=kind,
                max_score=most,
                passed=bool(passed),
                output=output,
                visibility=visibility,
                case=case,
                diagnoses=json.loads(diagnoses),
                details=None if details is None else json.loads(details),
                not_run=bool(not_run),
            )
            for name, kind, case, most, passed, visibility, output, diagnoses, details, not_run in rows
        ]
        return GradeReport(
            lab=lab,
            submission=file,
            tests=tests,
            execution_time=seconds,
            notes=list(notes.get("notes", [])),
            load_notes=list(notes.get("load_notes", [])),
        )

"""Deadlines and late penalties: the policy, when each student submitted, and how late.

The policy (`abgrade.yaml`'s `deadlines:` or `abgrade batch --deadline ...`):

- `due`: ISO 8601 (`2026-03-01T23:59`, `2026-03-01T23:59:00+01:00`, `...Z`); a time
  without an offset is taken as UTC (say the offset to mean local time);
- `grace`: a duration (`15m`, `2h`, `1d`, `90s`; default none) after `due` that still
  counts as on time;
- `per_day`: percent of the maximum score taken off per started day late (24 h after
  due + grace), or `table`: the percent for up to N days late (`{1: 10, 2: 25, 7: 50}`:
  up to 1 day 10%, up to 2 days 25%, up to 7 days 50%, later ones the last value);
- `cap`: the most percent ever taken off (default 100).

When a student submitted comes only from a source the instructor named, in this order:

1. an LMS timestamps CSV (`--timestamps FILE`): a header with `student` and
   `submitted_at` (ISO 8601; no offset: UTC);
2. the submission's file name, where the LMS download puts a time in it: Blackboard
   Learn's "Download Assignment" names carry `_attempt_YYYY-MM-DD-HH-MM-SS` (local time of
   the Blackboard server: read in the offset of `due`). Canvas (`name_id_subid_file`) and
   Moodle (`Full Name_id_assignsubmission_file_`) names carry no time;
3. the file's modification time, only when asked for (`--times-from mtime`, or
   `times_from: mtime` in the policy): right only if unzipping kept the LMS's times, and
   wrong after a plain `cp` (every file then looks submitted today).

A student with none of these has no known time: listed as "time unknown" everywhere and
never penalised, rather than penalised on a guess.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone, tzinfo
from pathlib import Path

from ..lab_setup import UsageError
from .adjustments import Penalty
from .csv_input import open_csv
from .discovery import Submission

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_BLACKBOARD = re.compile(r"_attempt_(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})(?:_|\.|$)")
DAY = timedelta(days=1)


class PolicyError(ValueError):
    """A bad value in a late policy: `field: problem` (the caller adds the file and line)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field, self.problem = field, problem
        super().__init__(f"{field}: {problem}")


@dataclass(frozen=True)
class LatePolicy:
    due: datetime  # aware
    grace: timedelta = timedelta(0)
    per_day: float | None = None  # percent per started day late
    table: tuple[tuple[int, float], ...] = ()  # (up to N days late, percent), N increasing
    cap: float = 100.0
    times_from: str | None = None  # "mtime": files' modification times where no better source has a time

    def days_late(self, submitted: datetime) -> int:
        """Started days after due + grace; 0 when on time."""
        over = submitted - (self.due + self.grace)
        return 0 if over <= timedelta(0) else math.ceil(over / DAY)

    def percent(self, days_late: int) -> float:
        if days_late <= 0:
            return 0.0
        if self.table:
            found = next((p for days, p in self.table if days_late <= days), self.table[-1][1])
        else:
            found = (self.per_day or 0.0) * days_late
        return min(found, self.cap)

    def describe(self) -> str:
        """The policy as one line, stored with each penalty."""
        parts = [f"due {self.due.isoformat()}"]
        if self.grace:
            parts.append(f"grace {_duration_text(self.grace)}")
        if self.table:
            parts.append("table " + ", ".join(f"<={d}d {p:g}%" for d, p in self.table))
        else:
            parts.append(f"{self.per_day or 0:g}% per day")
        parts.append(f"cap {self.cap:g}%")
        return "; ".join(parts)


def _duration_text(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def parse_time(value: object, field: str = "due", default_tz: timezone | None = None) -> datetime:
    """An ISO 8601 time (a string, or what YAML made of one) as an aware datetime; without
    an offset it is in `default_tz` (UTC unless given). A bare date means its end, 23:59:59."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day, 23, 59, 59)
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise PolicyError(
                field, f"{value!r} is not an ISO 8601 time; write e.g. 2026-03-01T23:59:00+01:00 (no offset: UTC)"
            ) from None
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            moment = moment.replace(hour=23, minute=59, second=59)
    else:
        raise PolicyError(field, f"must be an ISO 8601 time, e.g. 2026-03-01T23:59:00+01:00, got {value!r}")
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=default_tz or timezone.utc)


def parse_duration(value: object, field: str = "grace") -> timedelta:
    """`15m`, `2h`, `1d`, `90s` (or a number of seconds)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return timedelta(seconds=value)
    found = _DURATION.match(value) if isinstance(value, str) else None
    if found is None:
        raise PolicyError(field, f"{value!r} is not a duration; write e.g. 15m, 2h or 1d")
    return timedelta(seconds=float(found.group(1)) * _UNITS[found.group(2)])


def _percent(value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise PolicyError(field, f"must be a percentage between 0 and 100, got {value!r}")
    try:
        number = float(str(value).strip().rstrip("%"))
    except ValueError:
        raise PolicyError(field, f"must be a percentage between 0 and 100, got {value!r}") from None
    if not 0 <= number <= 100:
        raise PolicyError(field, f"must be a percentage between 0 and 100, got {value!r}")
    return number


def parse_table(value: object, field: str = "table") -> tuple[tuple[int, float], ...]:
    """`{1: 10, 2: 25}` (YAML) or `1:10,2:25` (command line): days late -> percent."""
    if isinstance(value, str):
        pairs: list[tuple[object, object]] = []
        for item in value.split(","):
            before, sep, after = item.partition(":")
            if not sep:
                raise PolicyError(field, f"{item.strip()!r}: write DAYS:PERCENT pairs, e.g. 1:10,2:25,7:50")
            pairs.append((before.strip(), after.strip()))
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    else:
        raise PolicyError(field, "must map days late to a percentage, e.g. {1: 10, 2: 25, 7: 50}")
    table = []
    for days, percent in pairs:
        key = str(days)
        try:
            whole = int(key)
        except ValueError:
            raise PolicyError(field, f"{days!r} is not a whole number of days") from None
        if whole < 1:
            raise PolicyError(field, f"{days!r}: days late start at 1")
        table.append((whole, _percent(percent, f"{field}.{key}")))
    table.sort()
    if not table or len({d for d, _ in table}) != len(table):
        raise PolicyError(field, "needs at least one row and each number of days once")
    return tuple(table)


POLICY_FIELDS = ("due", "grace", "per_day", "table", "cap", "times_from")
TIMES_FROM = ("mtime",)


def parse_policy(raw: Mapping[str, object]) -> LatePolicy:
    """A policy from its fields (see the module docstring); raises PolicyError."""
    for key in raw:
        if key not in POLICY_FIELDS:
            raise PolicyError(str(key), f"unknown field; expected {', '.join(POLICY_FIELDS)}")
    if raw.get("due") is None:
        raise PolicyError("due", "missing: the due date, e.g. 2026-03-01T23:59:00+01:00")
    due = parse_time(raw["due"])  # first: a bad date is the mistake to report
    if raw.get("per_day") is not None and raw.get("table") is not None:
        raise PolicyError("table", "give either per_day or table, not both")
    if raw.get("per_day") is None and raw.get("table") is None:
        raise PolicyError("per_day", "missing: give per_day (percent per day late) or table")
    times_from = raw.get("times_from")
    if times_from is not None and times_from not in TIMES_FROM:
        raise PolicyError(
            "times_from",
            f"{times_from!r}: the one source to name is mtime (the files' modification times); timestamps "
            "files and LMS file names are used without naming them",
        )
    return LatePolicy(
        due=due,
        grace=parse_duration(raw["grace"]) if raw.get("grace") is not None else timedelta(0),
        per_day=_percent(raw["per_day"], "per_day") if raw.get("per_day") is not None else None,
        table=parse_table(raw["table"]) if raw.get("table") is not None else (),
        cap=_percent(raw["cap"], "cap") if raw.get("cap") is not None else 100.0,
        times_from=times_from,
    )


# --- when each student submitted -------------------------------------------------------


# Where a submission time came from (stored with the penalty); UNKNOWN: from nowhere.
TIMESTAMPS, FILE_NAME, FILE_TIME, UNKNOWN = "timestamps", "file name", "file time", "unknown"
SOURCE_NAMES = {
    TIMESTAMPS: "the timestamps file",
    FILE_NAME: "LMS file names",
    FILE_TIME: "file modification times (--times-from mtime)",
}


@dataclass
class SubmissionTimes:
    """Student -> (time, where it came from); the students without a time; and what the
    timestamps file named in vain or left out."""

    times: dict[str, tuple[datetime, str]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)  # timestamps rows of students not found
    no_time: list[str] = field(default_factory=list)  # students no named source has a time for
    not_in_timestamps: list[str] = field(default_factory=list)  # students the timestamps file has no row for


def read_timestamps(path: Path) -> dict[str, datetime]:
    """An LMS timestamps CSV: columns `student` and `submitted_at` (others ignored).
    Raises UsageError naming the file, line and fix."""
    with open_csv(path, "timestamps file") as reader:
        header = [h.strip() for h in reader.fieldnames or []]
        if "student" not in header or "submitted_at" not in header:
            raise UsageError(
                f"{path}:1: the timestamps file needs the columns student,submitted_at (found: {', '.join(header)})"
            )
        reader.fieldnames = header
        times: dict[str, datetime] = {}
        for row in reader:
            line = reader.line_num
            student = (row.get("student") or "").strip()
            if not student:
                raise UsageError(f"{path}:{line}: student: empty; every row names a student")
            if student in times:
                raise UsageError(f"{path}:{line}: student {student!r} is listed twice; keep the latest submission")
            try:
                times[student] = parse_time(row.get("submitted_at") or "", "submitted_at")
            except PolicyError as exc:
                raise UsageError(f"{path}:{line}: {exc}") from None
    return times


def time_in_name(name: str, tz: tzinfo | None) -> datetime | None:
    """The time in a Blackboard Learn download name (`..._attempt_2026-03-01-23-59-07_...`)."""
    found = _BLACKBOARD.search(name)
    if found is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in found.groups())
    try:
        moment = datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    return moment.replace(tzinfo=tz or timezone.utc)


def submission_times(
    submissions: Iterable[Submission],
    timestamps: Mapping[str, datetime] | None,
    tz: tzinfo | None = None,
    use_mtime: bool = False,
) -> SubmissionTimes:
    """When each submission was made: the timestamps file, else its name, else (only with
    `use_mtime`) the file's modification time; else unknown (`no_time`)."""
    found = SubmissionTimes()
    students: set[str] = set()
    for submission in sorted(submissions, key=lambda s: s.student):
        students.add(submission.student)
        if timestamps is not None and submission.student not in timestamps:
            found.not_in_timestamps.append(submission.student)
        if timestamps and submission.student in timestamps:
            found.times[submission.student] = (timestamps[submission.student], TIMESTAMPS)
            continue
        named = time_in_name(submission.shown, tz)
        if named is not None:
            found.times[submission.student] = (named, FILE_NAME)
        elif use_mtime:
            mtime = submission.path.stat().st_mtime
            found.times[submission.student] = (datetime.fromtimestamp(mtime, timezone.utc), FILE_TIME)
        else:
            found.no_time.append(submission.student)
    found.unknown = sorted(s for s in timestamps or {} if s not in students)
    return found


def penalties(policy: LatePolicy, times: SubmissionTimes) -> dict[str, Penalty]:
    """Each student's penalty under `policy` (0% when on time: stored too, so that the
    exports say the submission was on time and when; 0% with the source UNKNOWN when no
    time is known, so that the exports say "time unknown")."""
    described = policy.describe()
    result = {}
    for student, (moment, source) in times.times.items():
        days = policy.days_late(moment)
        result[student] = Penalty(moment.isoformat(timespec="seconds"), source, days, policy.percent(days), described)
    for student in times.no_time:
        result[student] = Penalty("", UNKNOWN, 0, 0.0, described)
    return result

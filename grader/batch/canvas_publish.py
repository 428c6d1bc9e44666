"""`abgrade gradebook publish`: final scores (and, if asked, each student's feedback as a
submission comment with the HTML report attached) sent to a Canvas assignment through
Canvas's REST API, with `canvasapi` (an optional dependency: `pip install 'abgrade[canvas]'`).

What it calls (Canvas REST API; canvasapi's methods in brackets):
- `GET /api/v1/courses/:course/assignments/:assignment` [Course.get_assignment]: its name and
  points possible;
- `GET /api/v1/courses/:course/search_users?enrollment_type[]=student` [Course.get_users]: the
  students' Canvas ids, SIS user ids and logins, to match abgrade's students;
- `GET .../assignments/:assignment/submissions` [Assignment.get_submissions]: the grades
  Canvas holds now; only grades that differ are sent, so a rerun sends nothing;
- `PUT .../submissions/:user` with `submission[posted_grade]` (and `comment[text_comment]`,
  `comment[file_ids][]`) [Submission.edit];
- `POST .../submissions/:user/comments/files`, then the upload URL it returns [Uploader]:
  the feedback HTML as the comment's attachment.

Planning (who gets what) is a pure function of the gradebook, the roster and what Canvas
holds; sending follows the plan and records each student's publication in the gradebook.
The token comes from CANVAS_TOKEN only, is sent only over https (or to this machine), and
is never printed."""

from __future__ import annotations

import hashlib
import ipaddress
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..lab_setup import UsageError
from ..text import clean_line
from .gradebook import Publication, StoredGrade
from .lms import RosterEntry

TOKEN_VARIABLE = "CANVAS_TOKEN"
ROUNDING = 4  # decimals compared: Canvas stores scores as floats
COMMENT_CHARS = 60_000  # a comment stays readable in SpeedGrader; the HTML attachment has it all


class CanvasUnavailable(Exception):
    """canvasapi is not installed, or Canvas could not be reached or refused us."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage  # the user's mistake (a wrong id or token), not the network's


@dataclass(frozen=True)
class CanvasTarget:
    url: str  # the Canvas base URL, without /api/v1
    course: int
    assignment: int

    @property
    def label(self) -> str:
        """How the gradebook's publication records name this target."""
        return f"canvas {self.url} course {self.course} assignment {self.assignment}"


@dataclass(frozen=True)
class CanvasUser:
    id: int
    name: str
    sis_user_id: str = ""
    login_id: str = ""


@dataclass(frozen=True)
class Change:
    """One student's grade as it will be sent (and maybe their feedback)."""

    student: str
    name: str
    user: CanvasUser
    old: float | None  # what Canvas holds; None: no grade
    new: float | None  # None: the grade is already right, only the comment is new
    feedback: str | None = None  # sha256 of the feedback to post as a comment


@dataclass
class PublishPlan:
    changes: list[Change] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # graded students whose Canvas grade is right
    unmatched: list[str] = field(default_factory=list)  # "student: why": graded but not found in Canvas
    not_graded: list[str] = field(default_factory=list)  # no final score: nothing sent, Canvas keeps its grade

    @property
    def grade_changes(self) -> list[Change]:
        return [c for c in self.changes if c.new is not None]

    @property
    def comments(self) -> list[Change]:
        return [c for c in self.changes if c.feedback is not None]


def parse_target(url: str, course: str, assignment: str) -> CanvasTarget:
    """Check the command line's --canvas, --course and --assignment; UsageError otherwise.
    The token must not cross the network in clear: http only to this machine."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise UsageError(f"--canvas {url!r}: give the Canvas address, e.g. https://canvas.example.edu")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise UsageError(f"--canvas {url!r}: use https; the token must not cross the network unencrypted")
    base = url.strip().rstrip("/")
    if base.endswith("/api/v1"):
        base = base[: -len("/api/v1")]
    numbers = []
    for option, value in (("--course", course), ("--assignment", assignment)):
        if not value.isdigit():
            raise UsageError(
                f"{option} {value!r}: the Canvas id, a number (in the address: /courses/ID/assignments/ID)"
            )
        numbers.append(int(value))
    return CanvasTarget(base, numbers[0], numbers[1])


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def same_score(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and round(a, ROUNDING) == round(b, ROUNDING)


def match_user(student: str, entry: RosterEntry | None, users: Iterable[CanvasUser]) -> tuple[CanvasUser | None, str]:
    """The Canvas user of a graded student: by the roster's Canvas ID, SIS user id or SIS
    login (in that order), else by the abgrade id itself taken as any of them (a Canvas
    download's ids are Canvas user ids). (None, why) when none or several match."""
    users = list(users)
    wanted = []
    if entry is not None:
        wanted += [("canvas_id", entry.get("canvas_id")), ("sis_user_id", entry.get("sis_user_id"))]
        wanted += [("sis_login_id", entry.get("sis_login_id") or entry.get("username"))]
    wanted += [("canvas_id", student), ("sis_user_id", student), ("sis_login_id", student)]
    for kind, value in wanted:
        if not value:
            continue
        found = [u for u in users if _user_key(u, kind) == value]
        if len(found) == 1:
            return found[0], ""
        if len(found) > 1:
            return None, f"{len(found)} Canvas students have {kind} {value!r}"
    return None, "no student of the Canvas course has this id (give --roster with their Canvas ID, SIS id or login)"


def _user_key(user: CanvasUser, kind: str) -> str:
    return {"canvas_id": str(user.id), "sis_user_id": user.sis_user_id, "sis_login_id": user.login_id}[kind]


def plan_publication(
    grades: Iterable[StoredGrade],
    roster: Mapping[str, RosterEntry],
    users: list[CanvasUser],
    current: Mapping[int, float | None],
    feedback: Mapping[str, str] | None = None,
    posted: Iterable[Publication] = (),
) -> PublishPlan:
    """Who gets which grade. `current`: Canvas user id -> the score Canvas holds;
    `feedback`: student -> the sha256 of the feedback to post (None: no comments);
    `posted`: earlier publications to this target (a comment already posted is not again)."""
    plan = PublishPlan()
    already = {(p.student, p.feedback) for p in posted if p.feedback}
    taken: dict[int, str] = {}
    for grade in sorted(grades, key=lambda g: g.student):
        final = grade.mark.final
        if final is None:
            plan.not_graded.append(grade.student)
            continue
        user, why = match_user(grade.student, roster.get(grade.student), users)
        if user is None:
            plan.unmatched.append(f"{grade.student}: {why}")
            continue
        if user.id in taken:
            plan.unmatched.append(f"{grade.student}: Canvas user {user.id} is already {taken[user.id]}'s")
            continue
        taken[user.id] = grade.student
        old = current.get(user.id)
        digest = (feedback or {}).get(grade.student)
        comment = digest if digest is not None and (grade.student, digest) not in already else None
        new = None if same_score(old, final) else final
        if new is None and comment is None:
            plan.unchanged.append(grade.student)
        else:
            entry = roster.get(grade.student)
            name = (entry.get("name") if entry else "") or grade.name or user.name
            plan.changes.append(Change(grade.student, name, user, old, new, comment))
    return plan


def feedback_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _score(value: float | None) -> str:
    return "no grade" if value is None else f"{value:g}"


def plan_lines(plan: PublishPlan, dry_run: bool) -> list[str]:
    """What will change (or would, in a dry run), one line per student."""
    verb = "would" if dry_run else "will"
    lines = []
    grades = plan.grade_changes
    lines.append(f"  {verb} change {len(grades)} grade(s) (student, Canvas user, Canvas's grade -> the final score):")
    for change in grades:
        # names come from file names, rosters and Canvas profiles: student-side text (text.py)
        lines.append(
            f"    {clean_line(change.student)} ({clean_line(change.name)}) -> Canvas user {change.user.id} "
            f"({clean_line(change.user.name)}): {_score(change.old)} -> {_score(change.new)}"
        )
    if plan.comments:
        lines.append(f"  {verb} post {len(plan.comments)} feedback comment(s) with the HTML report attached")
    lines.append(f"  unchanged (Canvas already has the final score): {len(plan.unchanged)}")
    if plan.not_graded:
        lines.append(
            f"  not sent (no final score; Canvas keeps what it has): {len(plan.not_graded)}: "
            + ", ".join(clean_line(s) for s in plan.not_graded[:20])
        )
    return lines


# --- talking to Canvas ----------------------------------------------------------------


def _canvasapi() -> Any:
    try:
        import canvasapi
    except ModuleNotFoundError:
        raise CanvasUnavailable(
            "publishing to Canvas needs the canvasapi package: pip install 'abgrade[canvas]'", usage=True
        ) from None
    return canvasapi


@dataclass
class CanvasState:
    assignment_name: str
    points_possible: float | None
    users: list[CanvasUser]
    current: dict[int, float | None]
    submissions: dict[int, Any]  # Canvas user id -> canvasapi Submission


class CanvasSession:
    """The Canvas course and assignment of one publication, through canvasapi."""

    def __init__(self, target: CanvasTarget, token: str) -> None:
        canvasapi = _canvasapi()
        self.target = target
        with warnings.catch_warnings():  # canvasapi warns about http; parse_target allowed it for loopback only
            warnings.simplefilter("ignore")
            self.canvas = canvasapi.Canvas(target.url, token)
        self._assignment: Any = None

    def state(self) -> CanvasState:
        """Read the assignment, the course's students and their current grades."""
        with _errors(self.target):
            course = self.canvas.get_course(self.target.course)
            assignment = course.get_assignment(self.target.assignment)
            users = [
                CanvasUser(
                    int(u.id),
                    str(getattr(u, "name", "") or ""),
                    str(getattr(u, "sis_user_id", "") or ""),
                    str(getattr(u, "login_id", "") or ""),
                )
                for u in course.get_users(enrollment_type=["student"], per_page=100)
            ]
            submissions = {int(s.user_id): s for s in assignment.get_submissions(per_page=100)}
        self._assignment = assignment
        current = {uid: _number(getattr(s, "score", None)) for uid, s in submissions.items()}
        points = _number(getattr(assignment, "points_possible", None))
        return CanvasState(str(getattr(assignment, "name", "")), points, users, current, submissions)

    def send(
        self,
        change: Change,
        state: CanvasState,
        comment: tuple[str, Path] | None,
    ) -> None:
        """One student's grade (and comment with its attachment) in one PUT."""
        from canvasapi.upload import Uploader

        with _errors(self.target):
            submission = state.submissions.get(change.user.id)
            if submission is None:
                submission = self._assignment.get_submission(change.user.id)
            arguments: dict[str, Any] = {}
            if change.new is not None:
                arguments["submission"] = {"posted_grade": f"{change.new:g}"}
            if comment is not None:
                text, attachment = comment
                # canvasapi's upload_comment would post an empty comment of its own for the file:
                # upload it here and attach it to the one comment with the text
                url = (
                    f"courses/{self.target.course}/assignments/{self.target.assignment}/submissions/"
                    f"{change.user.id}/comments/files"
                )
                uploaded, answer = Uploader(submission._requester, url, str(attachment)).start()
                if not uploaded or "id" not in answer:
                    raise CanvasUnavailable(f"Canvas did not accept the attachment {attachment.name}")
                arguments["comment"] = {"text_comment": text[:COMMENT_CHARS], "file_ids": [answer["id"]]}
            submission.edit(**arguments)


def _number(value: object) -> float | None:
    try:
        return None if value is None else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


class _errors:
    """canvasapi's and the network's exceptions as one line (never with the token)."""

    def __init__(self, target: CanvasTarget) -> None:
        self.target = target

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        if exc is None or isinstance(exc, CanvasUnavailable):
            return
        name = type(exc).__name__
        where = f"{self.target.url} (course {self.target.course}, assignment {self.target.assignment})"
        messages: dict[str, tuple[str, bool]] = {
            "InvalidAccessToken": (f"Canvas at {where} refused the token in CANVAS_TOKEN (invalid or expired)", True),
            "Unauthorized": (f"Canvas at {where}: the token's user may not grade this course", True),
            "Forbidden": (f"Canvas at {where}: the token's user may not grade this course", True),
            "ResourceDoesNotExist": (f"Canvas at {where}: no such course or assignment (check the ids)", True),
        }
        if name in messages:
            message, usage = messages[name]
            raise CanvasUnavailable(message, usage) from None
        module = type(exc).__module__ or ""
        if module.startswith(("canvasapi", "requests", "urllib3")) or isinstance(exc, OSError):
            first = " ".join(str(exc).split())[:300]
            raise CanvasUnavailable(f"Canvas at {where} could not be reached or failed: {name}: {first}") from None


def read_feedback(
    folder: Path, students: Iterable[str], names: Callable[[list[str]], dict[str, str]]
) -> dict[str, str]:
    """student -> their feedback Markdown, from the batch's feedback/ folder (missing: left out)."""
    students = list(students)
    found = {}
    for student, file in names(students).items():
        path = folder / file
        if path.is_file():
            found[student] = path.read_text(encoding="utf-8", errors="replace")
    return found

"""The grading pipeline, the same for every lab: check the file, load it in a worker,
run each case plan, judge the observations in this process, and add up the results."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Generic, TypeVar

from .checks import Verdict
from .checks.cause import explained
from .checks.limits import Incident, check_limits
from .checks.load import check_load
from .labs import CasePlan, Judgement, Lab
from .labs.kit.observations import STUDENT_CPU
from .labs.kit.state import STATE_HINT, STATE_KEPT, repeat_difference
from .observations import sanitize_call, sanitize_load
from .results import GradeReport, TestResult
from .sandbox.channel import WorkerFailure
from .sandbox.opening import open_session
from .sandbox.session import Session
from .seeding import Seed, spec_seed, student_seed
from .source_encoding import SAMPLE_BYTES, resave_advice, wide_encoding
from .spec import Spec
from .text import LINE_CHARS, OUTPUT_CHARS, clean_line, clean_text, without_work_folder

SUPPORTED_SUFFIXES = (".py", ".ipynb")


def grade_submission(
    path: Path,
    lab: Lab,
    spec: Spec,
    seed: Seed | int | None = None,
    visible_only: bool = False,
    session: Session | None = None,
    hidden: Sequence[Path] = (),
    plans: list[CasePlan] | None = None,
) -> GradeReport:
    """Grade one submission file. A broken submission is a graded result, never an exception.
    `session`: one opened early on `path` (see commands/grade.py); it is closed here.
    `hidden`: folders the student process must not see besides the grader, its own folder
    and the lab's private folders (a batch passes the class folder and its output folder).
    `seed`: the random cases' seed; a number is one given with --seed; None: the spec's own
    (seeding.py: never a fresh draw, so that the same file always gets the same grade).
    `plans`: `lab.plans(spec, seed)` built already, for a lab whose plans are reusable
    (Lab.reusable_plans: a batch's grader process builds them once); never changed here."""
    started = time.monotonic()
    seed = as_seed(spec, seed)
    if plans is None:
        plans = lab.plans(spec, seed.value)  # a broken spec raises SpecError before anything runs
    if visible_only:  # the student's side: hidden checks never run and never show
        plans = [p for p in plans if any(_visibility(spec, p, kind) == "visible" for kind in p.kinds)]
    report = GradeReport(lab=lab.name, submission=clean_line(str(path), LINE_CHARS), tests=[])
    if spec.random and not visible_only:
        report.notes.append(seed.note())
    problem = _file_problem(path)
    if problem:
        if session is not None:
            session.close()
        _fail_everything(report, spec, plans, Verdict.fail(f"{clean_line(path.name)}: {problem}"))
    else:
        # a lab folder (its reference above all) is out of the student's sight too
        session = session or open_session(path, (*hidden, *lab.private_dirs))
        _run(report, path, lab, spec, plans, session.configure(lab.probe, spec.limits, student_seed(seed)))
    if visible_only:
        report.tests = [t for t in report.tests if t.visibility == "visible"]
    report.execution_time = time.monotonic() - started
    return report


def as_seed(spec: Spec, seed: Seed | int | None) -> Seed:
    """The random cases' seed of a grading given `seed` (see grade_submission)."""
    if isinstance(seed, Seed):
        return seed
    return spec_seed(spec) if seed is None else Seed(seed, "given with --seed")


def _file_problem(path: Path) -> str | None:
    if not path.exists():
        return "no such file"
    if path.is_dir():
        return "is a folder; give the submission file itself"
    if path.suffix not in SUPPORTED_SUFFIXES:
        return f"not a Python file (expected one of {', '.join(SUPPORTED_SUFFIXES)})"
    if path.suffix == ".py":
        try:
            with path.open("rb") as handle:
                wide = wide_encoding(handle.read(SAMPLE_BYTES))
        except OSError:
            wide = None  # the worker says why it can't be read
        if wide is not None:
            return resave_advice(wide)
    return None


Result = TypeVar("Result")


class Pending(Generic[Result]):
    """The result of work handed to the judging thread, once it is done."""

    def __init__(self, work: Callable[[], Result]) -> None:
        self.work = work
        self.done = threading.Event()
        self.value: Result | None = None
        self.error: BaseException | None = None

    def result(self) -> Result:
        self.done.wait()
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # set before `done`


class JudgingThread:
    """One thread that runs the work handed to it in order (a ThreadPoolExecutor of one
    worker without concurrent.futures, whose import, logging's included, cost `abgrade
    grade` more than the judging of a small lab). `close` drops work not yet started and
    waits for the running one."""

    def __init__(self) -> None:
        self._queue: deque[Pending] = deque()
        self._ready = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="abgrade-judge", daemon=True)
        self._thread.start()

    def submit(self, work: Callable[..., Result], *args: object) -> Pending[Result]:
        pending: Pending[Result] = Pending(partial(work, *args))
        with self._ready:
            self._queue.append(pending)
            self._ready.notify()
        return pending

    def _serve(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    return
                pending = self._queue.popleft()
            try:
                pending.value = pending.work()
            except BaseException as exc:  # noqa: BLE001 - handed to whoever reads the result
                pending.error = exc
            pending.done.set()

    def close(self) -> None:
        with self._ready:
            self._closed = True
            dropped, self._queue = self._queue, deque()
            self._ready.notify()
        for pending in dropped:
            pending.error = RuntimeError("not run: grading ended first")
            pending.done.set()
        self._thread.join()


def _run(report: GradeReport, path: Path, lab: Lab, spec: Spec, plans: list[CasePlan], session: Session) -> None:
    # Judging runs on one thread beside the cases: while the student's process works on the
    # next request (another process, another core), the grader judges the last one. Work a
    # plan's judge will need (`prepare`) starts there at once, while the submission loads.
    judges = JudgingThread()
    try:
        for plan in plans:
            if plan.prepare is not None:
                judges.submit(plan.prepare)
        _run_cases(report, path, lab, spec, plans, session, judges)
    finally:
        judges.close()


def _run_cases(
    report: GradeReport,
    path: Path,
    lab: Lab,
    spec: Spec,
    plans: list[CasePlan],
    session: Session,
    judges: JudgingThread,
) -> None:
    with session:  # configured with the limits and the student's random seed (grade_submission)
        report.notes.append(session.isolation_note)
        load = sanitize_load(session.load(), _work_folder(session))  # the boundary: student-side text is made safe here
        report.load_notes = list(load.notes)
        verdict, usable = check_load(load, lab.api, clean_line(path.name))
        if not usable:
            _fail_everything(report, spec, plans, verdict)
            session.close()
            report.student_output = _student_output(session.output, _work_folder(session))
            return
        report.tests.append(_load_test(spec, verdict))
        incidents: list[Incident] = []
        judged: list[tuple[CasePlan, Judgement]] = []
        pending: list[tuple[CasePlan, Pending[tuple[list[dict], Judgement]] | WorkerFailure]] = []
        public: str | None = None  # what was printed before the first hidden case was sent
        for index, plan in enumerate(plans):
            if public is None and _hidden(spec, plan):
                public = session.printed_so_far()
            reply: dict | list[dict] | WorkerFailure = (
                plan.play(partial(_ask, session, lab))
                if plan.play
                else session.run(plan.request, ahead=_ahead(spec, plans[index + 1 :], public is None))
            )
            if isinstance(reply, WorkerFailure):
                pending.append((plan, reply))
            else:
                pending.append((plan, judges.submit(_sanitize_and_judge, lab, plan, reply)))
        probe = _repeat_probe(session, lab, spec, plans)
        shrinking = _may_shrink(spec, plans)
        if not shrinking:  # the student's part is over: closing it overlaps the judging still under way
            _close_session(session, report, public)
        for plan, outcome in pending:
            if isinstance(outcome, WorkerFailure):
                # the `limits` test may be visible: a hidden case's failure says only its kind
                # there (an exit code the student chose could carry what the case holds)
                said = f"{outcome.kind} (details withheld: a hidden case)" if _hidden(spec, plan) else outcome.message
                incidents.append(Incident(plan.case, outcome.kind, said))
                verdicts = {k: Verdict.fail(f"not judged: {outcome.message}.") for k in plan.kinds}
                judged.append((plan, Judgement(verdicts)))
            else:
                calls, judgement = outcome.result()
                incidents.extend(_call_incidents(plan, calls))
                judged.append((plan, judgement))
        consistent = _consistent_bugs([judgement for _, judgement in judged])
        # the lab's hints only where a verdict failed (a passing grade doesn't import its classic bugs)
        failed = any(not verdict.passed for _, judgement in judged for verdict in judgement.verdicts.values())
        hints = lab.hints(spec) if failed else {}
        kept = _state_kept(lab, probe, pending) if failed else None
        per_plan = [_tests(spec, plan, judgement.verdicts, consistent, hints, kept) for plan, judgement in judged]
        for tests in per_plan:
            report.tests.extend(tests)
        _add_limits_test(report, spec, check_limits(incidents, len(plans)))
        if shrinking:  # after every graded case: shrinking changes no score
            _add_counterexamples(session, lab, spec, judged, per_plan, consistent, report.notes)
            _close_session(session, report, public)


def _ahead(spec: Spec, later: list[CasePlan], public: bool) -> list[dict]:
    """The requests of the plans after the current one that may be sent ahead of their
    turn (channel.py): up to the next interactive plan (its requests depend on replies),
    and while the public output is still being collected (`public`), up to the first
    hidden case (what a hidden case makes the student print must come after it)."""
    ahead = []
    for plan in later:
        if plan.play is not None or (public and _hidden(spec, plan)):
            break
        ahead.append(plan.request)
    return ahead


def _may_shrink(spec: Spec, plans: list[CasePlan]) -> bool:
    """Whether a failed random case could be shrunk: then the student's process stays open
    until judging is done (it answers the smaller cases); else it closes as soon as its
    replies are in, while judging still runs."""
    return spec.random is not None and spec.random.shrink.enabled and any(p.shrink is not None for p in plans)


def _close_session(session: Session, report: GradeReport, public: str | None) -> None:
    """The student's process closed, and what it printed kept (what a hidden case's
    request made it print withheld from the public part)."""
    session.close()
    folder = _work_folder(session)
    report.student_output = _student_output(session.output, folder)
    if public is not None:
        withheld = len(session.output) > len(public)
        report.public_output = _student_output(public, folder) + (HIDDEN_OUTPUT_NOTE if withheld else "")


def _add_counterexamples(
    session: Session,
    lab: Lab,
    spec: Spec,
    judged: list[tuple[CasePlan, Judgement]],
    per_plan: list[list[TestResult]],
    consistent: frozenset[str] | None,
    notes: list[str],
) -> None:
    """The smallest failing case of each failed random case that can shrink, kept with its
    random test (grader/shrinking.py, grader/counterexample.py); a lab's failed way of
    shrinking (the course's error) is one line in the instructor's `notes`."""
    random_verdicts = (judgement.verdicts.get("random") for _, judgement in judged)
    if all(verdict is None or verdict.passed for verdict in random_verdicts):
        return  # nothing to shrink: a passing grade doesn't import the shrinker
    from .counterexample import Counterexample, attach
    from .shrinking import shrink_all

    assert spec.random is not None
    policy = spec.random.shrink

    def run(plan: CasePlan, seconds: float) -> Judgement | WorkerFailure:
        timeout = max(0.01, min(spec.limits.case_seconds, seconds))
        reply = plan.play(partial(_ask, session, lab)) if plan.play else session.run(plan.request, timeout)
        return reply if isinstance(reply, WorkerFailure) else _sanitize_and_judge(lab, plan, reply)[1]

    for index, shrunk in shrink_all(judged, run, policy, session.cpu_used, notes).items():
        test = next((t for t in per_plan[index] if t.kind == "random"), None)
        if test is None:
            continue
        bugs = shrunk.judgement.bugs()
        diagnoses = [
            d
            for d in shrunk.verdict.diagnoses
            if (consistent is None or d in consistent) and (bugs is None or d in bugs)
        ]
        output, cause = explained(shrunk.verdict, diagnoses, lab.hints(spec))
        assert shrunk.plan.shrink is not None and shrunk.original.shrink is not None
        example = Counterexample(
            case=shrunk.original.case,
            check=shrunk.check,
            text=shrunk.plan.shrink.text,
            original_text=shrunk.original.shrink.text,
            size=shrunk.plan.shrink.size,
            original_size=shrunk.original.shrink.size,
            output=output,
            cause=cause,
            details=shrunk.verdict.details,
            calls=shrunk.calls,
            stopped=shrunk.stopped,
            revealed=policy.reveal,
        )
        attach(test, example)


def _sanitize_and_judge(lab: Lab, plan: CasePlan, reply: dict | list[dict]) -> tuple[list[dict], Judgement]:
    """The observations made safe (an interactive plan's are already) and judged; nothing
    here may raise into the grading (a judge's own failure is caught by `_judge`)."""
    try:
        calls = reply if isinstance(reply, list) else _sanitized_calls(lab, reply)
    except Exception as exc:  # noqa: BLE001 - a reply too mangled to read fails its own tests
        message = f"not judged: the observation could not be read ({type(exc).__name__})."
        return [], Judgement({k: Verdict.fail(message) for k in plan.kinds})
    return calls, _judge(plan, calls)


def _ask(session: Session, lab: Lab, request: dict) -> list[dict] | WorkerFailure:
    """One request of an interactive plan: its calls' observations, sanitised at once (the
    plan reads them to make its next request; what it returns is judged as it is), or the
    failure that ended the process. Each call also carries the student CPU time the grader
    measured for the request (STUDENT_CPU), for judges that must not take the process's word."""
    before = session.cpu_used()
    reply = session.run(request)
    if isinstance(reply, WorkerFailure):
        return reply
    calls = _sanitized_calls(lab, reply)
    spent = max(0.0, session.cpu_used() - before)
    for call in calls:
        call[STUDENT_CPU] = spent  # the grader's measurement: whatever the reply said under this name goes
    return calls


def _sanitized_calls(lab: Lab, reply: dict) -> list[dict]:
    calls = reply.get("calls")
    return [sanitize_call(c, lab.observed_fields) for c in calls] if isinstance(calls, list) else []


_DROPPED = "\n[output truncated: "  # the sandbox's own note that output was dropped


def _work_folder(session: Session) -> tuple[str, ...]:
    """The student's work folder's path as made and as resolved (a symlinked TMPDIR)."""
    return (str(session.workdir), os.path.realpath(session.workdir))


def _student_output(text: str, folder: tuple[str, ...] = ()) -> str:
    """What the student printed, made safe and cut, its work folder's random path shown as
    one fixed name (text.without_work_folder); the sandbox's note about output it dropped
    is kept at the end (it is the grader's text, and the news)."""
    body, marker, dropped = text.rpartition(_DROPPED)
    if not marker or "\n" in dropped:
        body, dropped = text, ""
    return clean_text(without_work_folder(body, *folder), OUTPUT_CHARS) + (
        _DROPPED + clean_line(dropped) if dropped else ""
    )


def _judge(plan: CasePlan, calls: list[dict]) -> Judgement:
    """The plan's judgement; observations too mangled to judge fail this plan's tests
    (a tampered observer can only hurt its own score)."""
    expected = len(plan.request.get("calls", [])) if isinstance(plan.request.get("calls"), list) else None
    if not calls or (expected is not None and len(calls) > expected):
        return Judgement(
            {
                k: Verdict.fail("not judged: the observer's reply did not match the request (was it tampered with?).")
                for k in plan.kinds
            }
        )
    try:
        return plan.judge(calls)
    except Exception as exc:  # noqa: BLE001 - a judge fed nonsense must not take the grader down
        return Judgement(
            {
                k: Verdict.fail(
                    f"not judged: the observation could not be read ({type(exc).__name__}); "
                    "was the observer tampered with?"
                )
                for k in plan.kinds
            }
        )


def _call_incidents(plan: CasePlan, calls: list[dict]) -> list[Incident]:
    incidents = []
    for call in calls:
        error = call.get("error") if isinstance(call, dict) else None
        if isinstance(error, dict):
            if error.get("recursion"):
                incidents.append(Incident(plan.case, "recursion", "RecursionError: the recursion limit was exceeded"))
            elif error.get("memory"):
                incidents.append(Incident(plan.case, "memory", "MemoryError: the memory limit was exceeded"))
    return incidents[:1]


HIDDEN_OUTPUT_NOTE = "\n[what your code printed from the first hidden case on is not shown]"


def _hidden(spec: Spec, plan: CasePlan) -> bool:
    """A plan with a test that is not visible: its inputs are not for the student's eyes."""
    return any(_visibility(spec, plan, kind) != "visible" for kind in plan.kinds)


def _visibility(spec: Spec, plan: CasePlan, kind: str) -> str:
    policy = spec.policy(kind)
    return plan.visibility or (policy.visibility if policy else "visible")


def _consistent_bugs(judgements: list[Judgement]) -> frozenset[str] | None:
    """The classic bugs that explain every request that speaks about bugs (worked out
    only when some verdict names a bug at all)."""
    if not any(v.diagnoses for judgement in judgements for v in judgement.verdicts.values()):
        return None
    consistent: frozenset[str] | None = None
    # a judgement that can narrow its replays (Judgement.narrowed) comes last, asked only
    # about the bugs the others left: the same intersection, in fewer replays
    for judgement in sorted(judgements, key=lambda judgement: judgement.narrowed is not None):
        bugs = judgement.bugs() if consistent is None else judgement.bugs_among(consistent)
        if bugs is not None:
            consistent = bugs if consistent is None else consistent & bugs
    return consistent


def _repeat_probe(session: Session, lab: Lab, spec: Spec, plans: list[CasePlan]) -> tuple[CasePlan, Any] | None:
    """A visible case asked again once every case is in (the lab's pick, Lab.repeat_plan):
    its plan and the reply, or None. It changes no score: nothing here is judged, and a
    failure of the process here is no incident."""
    if session.worker is None:  # the last case ended the process: a fresh one holds no state
        return None
    plan = lab.repeat_plan([p for p in plans if p.play is None and not _hidden(spec, p)])
    if plan is None:
        return None
    reply = session.run(plan.request)
    return None if isinstance(reply, WorkerFailure) else (plan, reply)


def _state_kept(lab: Lab, probe: tuple[CasePlan, Any] | None, pending: list) -> str | None:
    """What the repeated case answered otherwise than the first time (kit/state.py), or None."""
    if probe is None:
        return None
    plan, reply = probe
    first = next((outcome for p, outcome in pending if p is plan), None)
    if first is None or isinstance(first, WorkerFailure):
        return None
    try:
        calls, _ = first.result()
        again = _sanitized_calls(lab, reply)
    except Exception:  # noqa: BLE001 - a probe never fails a grading
        return None
    return repeat_difference(plan.case, calls, again)


def _tests(
    spec: Spec,
    plan: CasePlan,
    verdicts: dict[str, Verdict],
    consistent: frozenset[str] | None = None,
    hints: Mapping[str, str] | None = None,
    kept: str | None = None,
) -> list[TestResult]:
    """The plan's tests; `kept`: what a case asked again answered otherwise (state kept
    between calls), named on every failed test beside its classic bugs."""
    tests = []
    for kind in plan.kinds:
        policy = spec.policy(kind)
        points = plan.points.get(kind, policy.points if policy else 0.0)
        verdict = verdicts.get(kind) or Verdict.fail("not judged: the observer sent nothing for this check.")
        diagnoses = [d for d in verdict.diagnoses if consistent is None or d in consistent]
        if kept and not verdict.passed:
            diagnoses.append(STATE_KEPT)
            hints = {**(hints or {}), STATE_KEPT: f"{STATE_HINT} {kept}"}
        output, cause = explained(verdict, diagnoses, hints or {})
        tests.append(
            TestResult(
                name=f"{plan.case}: {kind}",
                kind=kind,
                max_score=points,
                passed=verdict.passed,
                output=output,
                visibility=_visibility(spec, plan, kind),
                case=plan.case,
                diagnoses=diagnoses,
                details=verdict.details,
                cause=cause,
            )
        )
    return tests


def _load_test(spec: Spec, verdict: Verdict) -> TestResult:
    policy = spec.policy("load")
    return TestResult(
        "load",
        "load",
        policy.points if policy else 0.0,
        verdict.passed,
        verdict.message,
        policy.visibility if policy else "visible",
    )


def _add_limits_test(report: GradeReport, spec: Spec, verdict: Verdict) -> None:
    policy = spec.policy("limits")
    if policy is not None:
        report.tests.append(
            TestResult("limits", "limits", policy.points, verdict.passed, verdict.message, policy.visibility)
        )


NOT_RUN = "not run: the submission did not load (see the load test)."


def _fail_everything(report: GradeReport, spec: Spec, plans: list[CasePlan], load: Verdict) -> None:
    """The submission can't run: load fails with the reason; every other test is kept (a
    Gradescope entry each) but marked `not_run`, so writers show one line for them all."""
    report.tests.append(_load_test(spec, load))
    not_run = {k: Verdict.fail(NOT_RUN) for plan in plans for k in plan.kinds}
    first = len(report.tests)
    for plan in plans:
        report.tests.extend(_tests(spec, plan, not_run))
    _add_limits_test(report, spec, Verdict.fail(NOT_RUN))
    for test in report.tests[first:]:
        test.not_run = True

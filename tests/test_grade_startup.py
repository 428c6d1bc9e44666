"""One `abgrade grade` of a `.py` at its start and end (issue 26, goal 1): modules a run
doesn't use stay out of its start-up (checked in a fresh interpreter, as users run it),
and the work folder's removal and the uid's release, left to a thread while the report
prints, are waited for."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from grader.paths import SOLUTIONS_DIR

# each with why a passing `grade -q` of the tree lab has no use for it
NOT_IMPORTED = {
    "grader.sandbox.kernel_zygote": "no zygote: a single grade starts its worker itself",
    "logging": "nothing is logged on the hot path",
    "socket": "the zygote's sockets",
    "grader.course.config": "no abgrade.yaml above the working folder",
    "grader.report.gradescope": "no --json",
    "grader.report.html": "no --html",
    "grader.report.terminal": "-q prints the score line only",
    "grader.labs.tree.picture": "no picture is drawn",
    "grader.shrinking": "no random case failed",
    "grader.counterexample": "no random case failed",
    "glob": "the seccomp filter's cache is keyed without listing library folders",
}

PROBE = """
import io, json, sys, contextlib
from grader.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def test_a_passing_quiet_grade_imports_nothing_it_does_not_use(tmp_path) -> None:
    submission = SOLUTIONS_DIR / "tree.py"
    run = subprocess.run(
        [sys.executable, "-c", PROBE, "grade", str(submission), "--lab", "tree", "--seed", "1", "-q"],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # no abgrade.yaml here or above (the project's own tests hold none at /tmp)
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.splitlines()[-1])
    assert seen["code"] == 0 and seen["out"].strip() == "75/75"
    imported = {name: why for name, why in NOT_IMPORTED.items() if name in seen["modules"]}
    assert imported == {}


def test_a_cleanup_on_its_thread_is_waited_for_and_its_error_raised(tmp_path, monkeypatch) -> None:
    """`grade`'s session removes its folder and releases its uid on a thread: wait_closed
    returns once both are done, and raises what went wrong there, as close would have."""
    from grader.sandbox.opening import open_session
    from grader.sandbox.session import Session

    submission = tmp_path / "tree.py"
    submission.write_text((SOLUTIONS_DIR / "tree.py").read_text())
    session = open_session(submission)
    session.cleanup_in_background = True
    session.close()
    session.wait_closed()
    assert not session.workdir.exists()

    def failing(self: Session) -> None:
        raise OSError("the uid could not be released")

    monkeypatch.setattr(Session, "_clean_up", failing)
    second = open_session(submission)
    second.cleanup_in_background = True
    second.close()
    with pytest.raises(OSError, match="could not be released"):
        second.wait_closed()
    monkeypatch.undo()
    second._clean_up()  # what the failing stand-in skipped

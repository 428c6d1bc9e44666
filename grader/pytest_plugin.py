"""pytest plugin (entry point `pytest11`): `pytest --abgrade tree=labs/tree.ipynb` adds one
pytest test per visible abgrade check of that lab, failing with abgrade's own message.

    --abgrade LAB=PATH   check the lab's submission at PATH (relative to the working folder)
    --abgrade LAB        check LAB as listed in abgrade.yaml
    --abgrade            check every lab of abgrade.yaml (the nearest in or above the working folder)

The option repeats. Without `--abgrade` the plugin does nothing at all: it is loaded in
every pytest run of an environment where abgrade is installed (`-p no:abgrade` unloads
it). The labs are graded while pytest collects (the tests are abgrade's, known only after
grading); the tests then pass or fail with what was found. Hidden and after_published
checks never run or show here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from .course.config import LabEntry
    from .results import TestResult

_ENTRIES = pytest.StashKey["list[LabEntry]"]()
USAGE_EXIT = 2  # abgrade's exit code for a usage error, in `abgrade check` and here alike


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("abgrade", "abgrade lab checks")
    group.addoption(
        "--abgrade",
        action="append",
        nargs="?",
        const="",
        default=None,
        metavar="LAB=PATH",
        help="add a test per visible abgrade check of a lab: LAB=PATH, or LAB (from abgrade.yaml); "
        "alone, every lab of abgrade.yaml. Repeatable.",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Read the labs and check their paths up front, so that a mistake in them stops
    pytest at once with one line and exit code 2, as `abgrade check` does."""
    values = config.getoption("abgrade", None)
    if values is None:
        return
    from .course.config import select_labs
    from .lab_setup import UsageError, check_submission_path
    from .spec import SpecError

    start = config.invocation_params.dir
    try:
        entries = select_labs(values, None, start)
        for entry in entries:
            check_submission_path(_near(entry.submission, start))
    except (UsageError, SpecError) as exc:
        pytest.exit(f"abgrade: --abgrade: {exc}", returncode=USAGE_EXIT)
    config.stash[_ENTRIES] = entries


def _near(path: Path, start: Path) -> Path:
    """`path` as the user would write it: relative to the working folder when inside it."""
    try:
        return path.relative_to(start)
    except ValueError:
        return path


@pytest.hookimpl(tryfirst=True)  # before -k, -m and --deselect filter the items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    for entry in config.stash.get(_ENTRIES, []):
        labs = LabChecks.from_parent(
            session, name=entry.lab, nodeid=f"abgrade::{entry.lab}", path=entry.submission, entry=entry
        )
        items.extend(session.genitems(labs))  # with pytest's collection reports, as for files


class CheckFailed(Exception):
    """An abgrade check failed; its message is abgrade's output for the test."""


class LabChecks(pytest.Collector):
    """One lab's submission: grading it yields its visible checks as items."""

    def __init__(self, *, entry: LabEntry, **kwargs) -> None:
        super().__init__(**kwargs)
        self.entry = entry

    def collect(self) -> list[pytest.Item]:
        from .course.visible import check_lab

        report = check_lab(self.entry)
        return [LabCheck.from_parent(self, name=test.name, entry=self.entry, result=test) for test in report.tests]

    def repr_failure(  # `style` as in Node's; pytest gives a collector none
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str:
        from .spec import SpecError

        if isinstance(excinfo.value, SpecError):  # a broken course spec: its file:line, no traceback
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class LabCheck(pytest.Item):
    """One abgrade test; it passes or fails as abgrade judged it."""

    def __init__(self, *, entry: LabEntry, result: TestResult, **kwargs) -> None:
        super().__init__(**kwargs)
        self.entry = entry
        self.result = result

    def runtest(self) -> None:
        if not self.result.passed:
            raise CheckFailed(self.result.output)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, CheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.entry.submission, None, f"abgrade {self.entry.lab}: {self.result.name}"

"""What the server imports once, before it serves: everything a grade of a `.py` or of a
notebook imports (the CLI, every command, the registry and each installed lab's modules,
the sandbox's sessions, the pipeline, the reports), so that a request's child starts
where a cold grade's imports end. Importing is all it does: no lab is instantiated, no
spec read, no sandbox opened. The registry's memos that loading the labs filled are
cleared again, so that a child finds the installed labs as a cold process does."""

from __future__ import annotations

import importlib
import sys

# what a grade imports besides the commands and the labs (lazily, in the cold path)
MODULES = (
    "grader.cli",
    "grader.commands.grade_early",
    "grader.sandbox.first_spawn",
    "grader.sandbox.worker_zygote",
    "grader.sandbox.kernel_zygote",
    "grader.sandbox.session",
    "grader.sandbox.worker",
    "grader.sandbox.isolation",
    "grader.sandbox.notebook",
    "grader.grading",
    "grader.report.terminal",
    "grader.report.gradescope",
    "grader.report.html",
    "grader.spec",
    "grader.seeding",
)
# each lab package's modules that a grading imports (those it has)
LAB_MODULES = ("adapter", "cases", "plans", "judges", "hints", "random_cases", "picture")


def preload() -> list[str]:
    """Import everything (see the module docstring); the top-level packages of the labs'
    entry points, whose files the server then watches (staleness.py)."""
    from ..registry import FOLDER_GROUP, GROUP, group_points

    commands = importlib.import_module("grader.commands").COMMANDS  # by name: the commands sit above
    for name in (*MODULES, *(f"grader.commands.{command}" for command in commands)):
        _import(name)
    packages = {"grader", "reference"}
    for group in (GROUP, FOLDER_GROUP):
        for point in group_points(group):
            module = point.value.partition(":")[0].strip()
            packages.add(module.partition(".")[0])
            if _import(module):
                for part in LAB_MODULES:
                    _import(f"{module}.{part}")
    _import("reference")
    _forget_memos()
    return sorted(packages)


def _import(name: str) -> bool:
    """Import `name` if there is such a module (a lab without `hints`, an optional part)."""
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(f"{exc.name}.")):
            return False
        raise
    return True


def _forget_memos() -> None:
    """Clear every `functools.cache` of the grader's modules (preloading filled the
    registry's): a child works everything out again as a cold grade would."""
    for name, module in list(sys.modules.items()):
        if not name.startswith(("grader.", "reference.")) or module is None:
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == name:
                clear()

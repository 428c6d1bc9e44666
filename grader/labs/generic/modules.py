"""Running a lab folder's Python files in the grader: each as a fresh module of its own,
never put in `sys.modules`, whose `import <game>` gets that run's own copy of the game
module. An error while loading one is a LabError at its file and line."""

from __future__ import annotations

import builtins
import traceback
import types
from collections.abc import Mapping
from typing import Any

from .files import LabError, SourceFile


def error_line(exc: BaseException, source: SourceFile) -> int | None:
    """The line of `source` where `exc` was raised (its deepest frame in that file)."""
    if isinstance(exc, SyntaxError) and exc.filename == source.shown:
        return exc.lineno
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == source.shown]
    return lines[-1] if lines else None


def describe(exc: BaseException) -> str:
    message = str(exc.msg if isinstance(exc, SyntaxError) else exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return " ".join(text.split())[:300]


def load_module(source: SourceFile, name: str, imports: Mapping[str, types.ModuleType] | None = None) -> Any:
    """`source` run as a new module called `name`; `import X` of a name in `imports` gets
    that module (and nothing is looked up in, or added to, sys.modules for it)."""
    module = types.ModuleType(name)
    module.__file__ = source.shown
    if imports:
        module.__dict__["__builtins__"] = _builtins_importing(dict(imports))
    try:
        code = compile(source.text, source.shown, "exec")
        exec(code, module.__dict__)  # noqa: S102 - the instructor's own file, in the grader by design
    except (Exception, SystemExit) as exc:
        raise LabError(source.shown, error_line(exc, source), "load", describe(exc)) from None
    return module


def _builtins_importing(modules: dict[str, types.ModuleType]) -> dict[str, Any]:
    """The builtins, with an `__import__` that hands out `modules` by name first."""
    original = builtins.__import__

    def lab_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002 - __import__'s own names
        if level == 0 and name in modules:
            return modules[name]
        return original(name, globals, locals, fromlist, level)

    table = dict(builtins.__dict__)
    table["__import__"] = lab_import
    return table

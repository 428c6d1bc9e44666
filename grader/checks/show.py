"""How observed values, errors and calls are written in feedback."""

from __future__ import annotations

import math
from typing import Any


def show(value: Any) -> str:
    """A student's value (plain JSON data from the observer) as the student would write it."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, dict) and "items" in value:
        items = [show(v) for v in value["items"]]
        if value.get("type") == "tuple":
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if value.get("type") == "ndarray":
            return "array(" + show({"type": "list", "items": value["items"]}) + ")"
        return "[" + ", ".join(items) + "]"
    if isinstance(value, dict) and "repr" in value:
        return f"{value['repr']} (a {value.get('type', 'object')})"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return repr(value)


def show_call(function: str, *args: Any) -> str:
    return f"{function}({', '.join(show(a) for a in args)})"


def is_number(value: Any) -> bool:
    """A real number the student returned (bools and objects are not numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# Errors of code that waits for someone to type (a debugger stop, input()): nobody types while grading.
WAITS_FOR_TYPING = {
    "BdbQuit": " (a debugger stop, pdb.set_trace(), was left in the code: nobody can type at it while grading, "
    "so it quits; remove it)",
    "StdinNotImplementedError": " (input() or a debugger stop waits for typing, and nobody can type while "
    "grading; remove it from your functions)",
    "EOFError": " (if this is input() or a debugger stop: nobody can type while grading; remove it)",
}


def describe_error(error: dict) -> str:
    """An exception from student code, with its traceback trimmed to the student's frames."""
    if error.get("exit"):
        head = f"the code called sys.exit({error.get('message', '')}) instead of returning"
    else:
        message = error.get("message", "")
        head = f"{error.get('type', 'Exception')}: {message}" if message else str(error.get("type", "Exception"))
    head += WAITS_FOR_TYPING.get(str(error.get("type")), "")
    lines = [head]
    for frame in error.get("frames", []):
        file, line, name, text, *repeats = frame
        where = f"{file}:{line} in {name}"
        again = f" (x{repeats[0]})" if repeats and repeats[0] > 1 else ""
        lines.append(f"    at {where}" + (f": {text}" if text else "") + again)
    if error.get("recursion"):
        lines.append("    (the recursion never stopped: is the leaf test right, and does each call go one level down?)")
    return "\n".join(lines)

"""Observations arrive from an untrusted process: they are plain JSON, but their shape is
whatever the student process wrote. Everything the judges read goes through here first,
so a tampered observer can fail its own tests but never crash the grader."""
from __future__ import annotations

from typing import Any

MALFORMED = {"type": "malformed", "repr": "<an observation the grader could not read>"}
_ERROR_FLAGS = ("recursion", "memory", "exit")


def sanitize_value(value: Any, depth: int = 0) -> Any:
    """A returned value in the observer's encoding: numbers, strings, bools, None, or
    {"type", "items"} / {"type", "repr"} records; anything else becomes MALFORMED."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict) and isinstance(value.get("type"), str) and depth < 6:
        if isinstance(value.get("items"), list):
            return {"type": value["type"], "items": [sanitize_value(v, depth + 1) for v in value["items"]]}
        if isinstance(value.get("repr"), str):
            return {"type": value["type"], "repr": value["repr"]}
    return dict(MALFORMED)


def sanitize_error(error: Any) -> dict | None:
    if error is None:
        return None
    if not isinstance(error, dict):
        return {"type": "MalformedError", "message": "the observer sent an unreadable error", "frames": []}
    frames = []
    for frame in error.get("frames", []) if isinstance(error.get("frames"), list) else []:
        if (isinstance(frame, list) and len(frame) >= 4 and isinstance(frame[0], str) and isinstance(frame[1], int)
                and isinstance(frame[2], str) and isinstance(frame[3], str)):
            repeats = frame[4] if len(frame) > 4 and isinstance(frame[4], int) else 1
            frames.append([frame[0], frame[1], frame[2], frame[3], repeats])
    clean = {
        "type": error["type"] if isinstance(error.get("type"), str) else "Exception",
        "message": error["message"] if isinstance(error.get("message"), str) else "",
        "frames": frames,
    }
    clean.update({flag: error.get(flag) is True for flag in _ERROR_FLAGS})
    for key in ("line",):
        if isinstance(error.get(key), int):
            clean[key] = error[key]
    for key in ("text", "file"):
        if isinstance(error.get(key), str):
            clean[key] = error[key]
    return clean


def sanitize_call(call: Any) -> dict:
    """One call's observation with the common fields made safe; lab-specific fields are
    kept as they came (each lab's judge reads them defensively)."""
    if not isinstance(call, dict):
        return {"returned": None, "error": sanitize_error("malformed"), "reads": [], "seconds": 0.0}
    clean = dict(call)
    clean["returned"] = sanitize_value(call.get("returned"))
    clean["error"] = sanitize_error(call.get("error"))
    reads = call.get("reads")
    clean["reads"] = [r for r in reads if isinstance(r, str)] if isinstance(reads, list) else []
    seconds = call.get("seconds")
    clean["seconds"] = float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else 0.0
    return clean

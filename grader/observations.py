"""Observations arrive from an untrusted process: they are plain JSON, but their shape is
whatever the student process wrote. Everything the judges read goes through here first,
so a tampered observer can fail its own tests but never crash the grader. Every string in
them passes the text boundary (`grader/text.py`) here, so no writer ever sees a lone
surrogate, a terminal escape or an unbounded message from the student side."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal, Protocol, TypeVar

from .text import (
    LINE_CHARS,
    NAME_CHARS,
    PLAIN_TYPES,
    clean_data,
    clean_line,
    clean_lines,
    clean_text,
    unsafe_in_line,
    without_work_folder,
)

MALFORMED = {"type": "malformed", "repr": "<an observation the grader could not read>"}
_ERROR_FLAGS = ("recursion", "memory", "exit")
_SET_BELOW = frozenset({"returned", "error", "seconds"})  # sanitize_call's own fields

# How a lab's own observation field is sanitised (a lab declares its fields, Lab.observed_fields):
# "labels": a list of short strings (node names, board notations), anything else dropped;
# "value": a returned value in the observer's encoding (sanitize_value).
FieldKind = Literal["labels", "value"]


def sanitize_value(value: Any, depth: int = 0) -> Any:
    """A returned value in the observer's encoding: numbers, strings, bools, None, or
    {"type", "items"} / {"type", "repr"} records; anything else becomes MALFORMED."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict) and isinstance(value.get("type"), str) and depth < 6:
        kind = clean_line(value["type"])
        if isinstance(value.get("items"), list):
            return {"type": kind, "items": [sanitize_value(v, depth + 1) for v in value["items"]]}
        if isinstance(value.get("repr"), str):
            return {"type": kind, "repr": clean_text(value["repr"])}
    return dict(MALFORMED)


def sanitize_error(error: Any) -> dict | None:
    if error is None:
        return None
    if not isinstance(error, dict):
        return {"type": "MalformedError", "message": "the observer sent an unreadable error", "frames": []}
    frames = []
    for frame in error.get("frames", []) if isinstance(error.get("frames"), list) else []:
        if (
            isinstance(frame, list)
            and len(frame) >= 4
            and isinstance(frame[0], str)
            and isinstance(frame[1], int)
            and isinstance(frame[2], str)
            and isinstance(frame[3], str)
        ):
            repeats = frame[4] if len(frame) > 4 and isinstance(frame[4], int) else 1
            frames.append(
                [clean_line(frame[0]), frame[1], clean_line(frame[2]), clean_line(frame[3], LINE_CHARS), repeats]
            )
    clean: dict[str, Any] = {
        "type": clean_line(error["type"]) if isinstance(error.get("type"), str) else "Exception",
        "message": clean_text(error.get("message")),
        "frames": frames,
    }
    clean.update({flag: error.get(flag) is True for flag in _ERROR_FLAGS})
    for key in ("line",):
        if isinstance(error.get(key), int):
            clean[key] = error[key]
    for key in ("text", "file"):
        if isinstance(error.get(key), str):
            clean[key] = clean_line(error[key], LINE_CHARS)
    return clean


def sanitize_call(call: Any, fields: Mapping[str, FieldKind] | None = None) -> dict:
    """One call's observation with the common fields and the lab's declared `fields` made
    safe; other lab fields are kept as cleaned plain data (each judge reads them defensively)."""
    fields = fields or {}
    if not isinstance(call, dict):
        malformed: dict[str, Any] = {"returned": None, "error": sanitize_error("malformed"), "seconds": 0.0}
        malformed.update({name: [] if kind == "labels" else None for name, kind in fields.items()})
        return malformed
    # a batch sanitises about 500 calls per submission: the keys' common case and plain
    # values cost no call, and the fields set below are not cleaned twice (each keeps its
    # place in the dict: None until it is set)
    later = _SET_BELOW.union(fields)
    clean = {
        (k if len(k) <= NAME_CHARS and not unsafe_in_line(k) else clean_line(k)): (
            None if k in later else v if type(v) in PLAIN_TYPES else clean_data(v)
        )
        for k, v in call.items()
        if isinstance(k, str)
    }
    clean["returned"] = sanitize_value(call.get("returned"))
    clean["error"] = sanitize_error(call.get("error"))
    for name, kind in fields.items():
        value = call.get(name)
        if kind == "labels":
            clean[name] = clean_lines(value)
        else:
            clean[name] = sanitize_value(value)
    seconds = call.get("seconds")
    clean["seconds"] = float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else 0.0
    return clean


class LoadLike(Protocol):
    """What the observer saw while loading (the sandbox's LoadObservation, a dataclass):
    named by its shape, so that this module, below the sandbox, imports nothing of it."""

    api: dict[str, Any]
    error: dict | None
    failure: Any  # the sandbox's WorkerFailure (a dataclass with `message`) or None
    problem: str | None
    notes: list[str]


Load = TypeVar("Load", bound=LoadLike)


def sanitize_load(load: Load, folder: tuple[str, ...] = ()) -> Load:
    """The load observation with every student-side string made safe: the API entries
    (signatures show the student's default values), the loading error, cell notes and
    the messages about unusable files and workers (they may quote the student); the
    student's work `folder` (its paths) shown as one fixed name (text.without_work_folder:
    a notebook cell's error quotes the full path of a file it did not find)."""
    api = {
        clean_line(name): clean_data(entry, NAME_CHARS)
        for name, entry in load.api.items()
        if isinstance(name, str) and isinstance(entry, dict)
    }
    clean = copy.copy(load)  # a new observation: the sandbox's own is left as it came
    if load.failure is not None:
        clean.failure = replace(load.failure, message=clean_text(_unfoldered(load.failure.message, folder)))
    clean.api = api
    clean.error = sanitize_error(load.error) if load.error is not None else None
    if clean.error is not None:
        clean.error["message"] = without_work_folder(clean.error["message"], *folder)
    clean.problem = None if load.problem is None else clean_text(_unfoldered(load.problem, folder))
    clean.notes = [clean_text(_unfoldered(note, folder), LINE_CHARS) for note in load.notes]
    return clean


def _unfoldered(text: object, folder: tuple[str, ...]) -> object:
    """A string with the work folder's paths replaced; anything else as it came (clean_text judges it)."""
    return without_work_folder(text, *folder) if isinstance(text, str) else text

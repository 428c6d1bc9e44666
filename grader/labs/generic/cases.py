"""A lab folder's spec cases, validated as they are read: the case's world (what the game's
`setup` takes), the search call (every parameter of SEARCH but the window, and CHOOSE's),
an optional root window, and optional stored expectations that `abgrade specs verify`
checks against the reference (value, nodes, move)."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any

from ...spec import Spec
from ...spec.yaml_lines import LineDict
from ..kit.fields import CaseHeader, expected_keys, read_header
from .declarations import Declarations
from .files import LabError
from .runs import FULL_WINDOW, GameHooks, to_json

CASE_FIELDS = {"world", "call", "window"}
EXPECT_KEYS = {"value": ["value"], "nodes": ["nodes"], "pruned": [], "bounds": [], "choice": ["move"]}


@dataclass(frozen=True)
class FolderCase:
    """One fixed case: its header (name, checks, points), world, call and root window."""

    header: CaseHeader
    world: dict | None
    call: dict[str, Any]
    window: tuple[float, float]


def read_cases(spec: Spec, kinds: tuple[str, ...], declarations: Declarations, hooks: GameHooks) -> list[FolderCase]:
    names: set[str] = set()
    return [read_case(spec, index, raw, kinds, declarations, hooks, names) for index, raw in enumerate(spec.cases)]


def read_case(
    spec: Spec,
    index: int,
    raw: LineDict,
    kinds: tuple[str, ...],
    declarations: Declarations,
    hooks: GameHooks,
    names: set[str],
) -> FolderCase:
    header = read_header(spec, index, _with_expect(raw), kinds, CASE_FIELDS, names)
    expected_keys(spec, header, EXPECT_KEYS)
    world = _world(spec, raw, hooks)
    call = _call(spec, raw, header, declarations)
    window = _window(spec, raw)
    try:
        hooks.decoded(world, call)
    except LabError as exc:
        raise spec.error_at(
            raw["call"], declarations.state, f"the game can't decode this state: {exc.problem}"
        ) from None
    return FolderCase(header, world, call, window)


def _with_expect(raw: LineDict) -> LineDict:
    """The case with an empty `expect` when it has none: stored expectations are optional
    here (the reference computes them at grading time; `specs verify` checks those given)."""
    if "expect" in raw:
        return raw
    copy = LineDict(raw)
    copy.line, copy.lines, copy.path = raw.line, dict(raw.lines), raw.path
    expect = LineDict()
    expect.line, expect.lines, expect.path = raw.line, {}, f"{raw.path}.expect"
    copy["expect"] = expect
    return copy


def _plain(spec: Spec, raw: LineDict, key: str) -> Any:
    try:
        return to_json(raw[key])
    except (TypeError, ValueError) as exc:
        raise spec.error_at(raw, key, f"must be plain data (numbers, text, lists, mappings): {exc}") from None


def _world(spec: Spec, raw: LineDict, hooks: GameHooks) -> dict | None:
    if "world" not in raw:
        return None
    world = raw["world"]
    if not isinstance(world, dict):
        raise spec.error_at(raw, "world", "must be a mapping: the arguments of the game's setup(**world)")
    if not hooks.has("setup"):
        raise spec.error_at(raw, "world", "the game has no setup(**world) to take it")
    try:
        inspect.signature(hooks.module.setup).bind(**world)
    except TypeError as exc:
        raise spec.error_at(raw, "world", f"setup(**world) can't take it: {exc}") from None
    return _plain(spec, raw, "world")


def _call(spec: Spec, raw: LineDict, header: CaseHeader, declarations: Declarations) -> dict[str, Any]:
    search, choose = declarations.search, declarations.choose
    if not isinstance(raw.get("call"), dict):
        raise spec.error(
            raw,
            "call" if "call" in raw else None,
            f"{header.where}.call",
            f"missing: the arguments of {search.shape} but alpha and beta, as a mapping",
        )
    call = raw["call"]
    needed = [p for p in declarations.call_params if p in search.params]
    if "choice" in header.checks and choose is not None:
        needed += [p for p in choose.params if p not in needed]
    for key in call:
        if key not in declarations.call_params:
            raise spec.error_at(call, key, f"not a parameter; expected {', '.join(declarations.call_params)}")
    for param in needed:
        if param not in call:
            shapes = search.shape + (f" and {choose.shape}" if choose and param in choose.params else "")
            raise spec.error(call, None, f"{header.where}.call.{param}", f"missing: {shapes} needs it")
    return _plain(spec, raw, "call")


def _window(spec: Spec, raw: LineDict) -> tuple[float, float]:
    if "window" not in raw:
        return FULL_WINDOW
    window = raw["window"]
    if (
        not isinstance(window, list)
        or len(window) != 2
        or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isnan(x) for x in window)
        or not window[0] < window[1]
    ):
        raise spec.error_at(raw, "window", "must be [alpha, beta] with alpha < beta (-.inf and .inf allowed)")
    return window[0], window[1]

"""Reading the fields every lab's cases share (name, checks, visibility, points, expect),
with SpecErrors that point at the line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...results import VISIBILITIES
from ...spec import Spec
from ...spec.yaml_lines import LineDict


@dataclass(frozen=True)
class CaseHeader:
    """What every fixed case has: its name, place, checks and stored expectations."""

    name: str
    where: str  # "cases[3]" for messages
    checks: tuple[str, ...]
    visibility: str | None
    points: dict[str, float]
    expect: LineDict


def read_header(
    spec: Spec, index: int, case: LineDict, kinds: tuple[str, ...], fields: set[str], seen_names: set[str]
) -> CaseHeader:
    """Validate the common fields of `cases[index]`; `fields` are the lab's own extra keys."""
    where = f"cases[{index}]"  # also case.path: the spec names each field from its node
    allowed = {"name", "about", "checks", "visibility", "points", "expect"} | fields
    for key in case:
        if key not in allowed:
            raise spec.error_at(case, key, f"unknown field; expected one of {', '.join(sorted(allowed))}")
    name = case.get("name")
    if not isinstance(name, str) or not name:
        raise spec.error(case, "name" if "name" in case else None, f"{where}.name", "every case needs a non-empty name")
    if name in seen_names:
        raise spec.error_at(case, "name", f"duplicate case name {name!r}")
    seen_names.add(name)
    checks = case.get("checks", list(kinds))
    if not isinstance(checks, list) or any(k not in kinds for k in checks):
        raise spec.error_at(case, "checks", f"must be a list drawn from {', '.join(kinds)}")
    for kind in checks:
        if spec.policy(kind) is None:
            raise spec.error_at(case, "checks", f"check kind {kind!r} has no points in the spec's 'checks'")
    visibility = case.get("visibility")
    if visibility is not None and visibility not in VISIBILITIES:
        raise spec.error_at(case, "visibility", f"must be one of {', '.join(VISIBILITIES)}")
    points = case.get("points", {})
    if not isinstance(points, dict) or any(k not in checks or not _is_number(v) or v < 0 for k, v in points.items()):
        raise spec.error_at(case, "points", "must map this case's check kinds to non-negative numbers")
    expect = case.get("expect")
    if not isinstance(expect, LineDict):  # the spec's YAML loads every mapping as a LineDict
        raise spec.error(
            case,
            "expect" if "expect" in case else None,
            f"{where}.expect",
            "missing: the stored expectations (run `abgrade specs verify` to compute them)",
        )
    return CaseHeader(name, where, tuple(checks), visibility, {k: float(v) for k, v in points.items()}, expect)


def need(spec: Spec, node: LineDict, key: str, kind: type | tuple[type, ...], what: str) -> Any:
    """`require`, the field named from the node's own place in the spec (`node.path`)."""
    from ...spec.yaml_lines import field_path

    return require(spec, node, key, field_path(node, key), kind, what)


def require(spec: Spec, node: LineDict, key: str, field_name: str, kind: type | tuple[type, ...], what: str) -> Any:
    """`node[key]`, checked to be of `kind`; else a SpecError saying `what` belongs there."""
    if key not in node:
        raise spec.error(node, None, field_name, f"missing: {what}")
    value = node[key]
    if (
        not isinstance(value, kind)
        or isinstance(value, bool)
        and bool not in (kind if isinstance(kind, tuple) else (kind,))
    ):
        raise spec.error(node, key, field_name, f"must be {what}, got {value!r}")
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def expected_keys(spec: Spec, header: CaseHeader, keys_by_kind: Mapping[str, Sequence[str]]) -> set[str]:
    """The `expect` keys this case's checks need; a SpecError names a stored key none uses."""
    needed = {key for kind in header.checks for key in keys_by_kind[kind]}
    for key in header.expect:
        if key not in needed:
            raise spec.error(
                header.expect,
                key,
                f"{header.where}.expect.{key}",
                f"not used by this case's checks; expected {', '.join(sorted(needed))}",
            )
    return needed

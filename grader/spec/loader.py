"""Read a spec file: YAML syntax, then the lab-independent fields (lab, limits, checks,
cases, random). Cases are parsed later by the lab adapter, which knows their fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..digests import sha256
from ..paths import SPECS_DIR
from ..registry import spec_conventions, spec_fields, spec_kinds
from ..results import VISIBILITIES
from .errors import SpecError
from .model import CUTOFFS, MIN_MEMORY_MB, RETURNS, CheckPolicy, Conventions, Limits, RandomPolicy, ShrinkPolicy, Spec
from .yaml_lines import LineDict, LineList, line_of, read_yaml_file

_TOP_FIELDS = {"lab", "version", "title", "limits", "checks", "cases", "random", "conventions"}
_LIMIT_FIELDS = {
    "case_seconds": float,
    "cell_seconds": float,
    "submission_seconds": float,
    "load_seconds": float,
    "memory_mb": int,
    "output_bytes": int,
    "recursion_limit": int,
    "file_mb": int,
    "processes": int,
}


def spec_path(lab: str) -> Path:
    """Where the bundled spec of `lab` lives."""
    return SPECS_DIR / f"{lab}.yaml"


def load_spec(path: str | Path) -> Spec:
    """Parse and validate the generic part of a spec; raises SpecError with file and line."""
    path = Path(path)
    shown = _shown(path)
    text, raw = read_yaml_file(path, shown, "spec", SpecError)
    if not isinstance(raw, LineDict):
        raise SpecError(shown, 1, "spec", "the spec must be a YAML mapping with keys lab, cases, ...")
    allowed = _TOP_FIELDS | set(spec_fields(str(raw.get("lab"))))  # a lab may declare fields of its own
    unknown = set(raw) - allowed
    if unknown:
        key = sorted(unknown, key=str)[0]
        raise SpecError(
            shown, line_of(raw, key), str(key), f"unknown field; expected one of {', '.join(sorted(allowed))}"
        )
    lab = _require(raw, "lab", str, shown)
    cases = raw.get("cases", LineList())
    if not isinstance(cases, list):
        raise SpecError(shown, line_of(raw, "cases"), "cases", "must be a list of cases")
    for index, case in enumerate(cases):
        if not isinstance(case, dict):
            raise SpecError(shown, line_of(cases, index), f"cases[{index}]", "each case must be a mapping")
    return Spec(
        lab=lab,
        version=str(raw.get("version", "1")),
        title=str(raw.get("title", lab)),
        path=shown,
        digest=sha256(text.encode()).hexdigest()[:16],
        limits=_limits(raw.get("limits"), raw, shown),
        checks=_checks(raw.get("checks"), raw, shown),
        cases=list(cases),
        random=_random(raw.get("random"), raw, shown),
        raw=raw,
        conventions=_conventions(raw.get("conventions"), raw, shown),
    )


def _shown(path: Path) -> str:
    """A path the user gave is shown as given; a bundled spec (or a shipped example)
    relative to the working folder when it is inside it (`specs/tree.yaml`, not a long
    absolute path)."""
    if not path.is_absolute() or not path.resolve().is_relative_to(SPECS_DIR):
        return str(path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _require(node: dict, key: str, kind: type, file: str) -> Any:
    if key not in node:
        raise SpecError(file, line_of(node), key, f"missing required field '{key}'")
    value = node[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SpecError(file, line_of(node, key), key, f"must be a {kind.__name__}, got {value!r}")
    return value


def _number(node: dict, key: str, kind: type, file: str, field_name: str) -> Any:
    value = node[key]
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        ok = ok and float(value).is_integer()
    if not ok or value < 0:
        raise SpecError(
            file,
            line_of(node, key),
            field_name,
            f"must be a non-negative {'whole ' if kind is int else ''}number, got {value!r}",
        )
    return kind(value)


def _limits(node: Any, parent: dict, file: str) -> Limits:
    if node is None:
        return Limits()
    if not isinstance(node, dict):
        raise SpecError(file, line_of(parent, "limits"), "limits", "must be a mapping")
    values = {}
    for key in node:
        if key not in _LIMIT_FIELDS:
            raise SpecError(
                file, line_of(node, key), f"limits.{key}", f"unknown limit; expected one of {', '.join(_LIMIT_FIELDS)}"
            )
        values[key] = _number(node, key, _LIMIT_FIELDS[key], file, f"limits.{key}")
    if values.get("memory_mb", MIN_MEMORY_MB) < MIN_MEMORY_MB:
        raise SpecError(
            file,
            line_of(node, "memory_mb"),
            "limits.memory_mb",
            f"must be at least {MIN_MEMORY_MB} (MB), got {values['memory_mb']:g}: below it Python and a "
            f"Jupyter kernel don't start; write {MIN_MEMORY_MB} or more",
        )
    submission = values.get("submission_seconds", Limits.submission_seconds)
    if "load_seconds" not in values:  # the default never exceeds a short submission budget
        values["load_seconds"] = min(Limits.load_seconds, submission)
    elif values["load_seconds"] > submission:
        raise SpecError(
            file,
            line_of(node, "load_seconds"),
            "limits.load_seconds",
            f"must be at most limits.submission_seconds ({submission:g}), got {values['load_seconds']:g}: "
            "loading is part of the submission's time",
        )
    return Limits(**values)


def _visibility(node: dict, key: str, file: str, field_name: str) -> str:
    value = node[key]
    if value not in VISIBILITIES:
        raise SpecError(
            file,
            line_of(node, key),
            field_name,
            f"unknown visibility {value!r}; expected one of {', '.join(VISIBILITIES)}",
        )
    return value


def _checks(node: Any, parent: dict, file: str) -> dict[str, CheckPolicy]:
    if node is None:
        raise SpecError(file, line_of(parent), "checks", "missing: say the points of each check kind")
    if not isinstance(node, dict):
        raise SpecError(file, line_of(parent, "checks"), "checks", "must be a mapping kind -> {points, visibility}")
    policies: dict[str, CheckPolicy] = {}
    kinds = spec_kinds(str(parent.get("lab")))  # the spec's lab says which kinds it has
    for kind, body in node.items():
        where = f"checks.{kind}"
        if kind not in kinds:
            raise SpecError(file, line_of(node, kind), where, f"unknown check kind; expected one of {', '.join(kinds)}")
        if not isinstance(body, dict):
            raise SpecError(file, line_of(node, kind), where, "must be a mapping with 'points'")
        for key in body:
            if key not in ("points", "visibility"):
                raise SpecError(
                    file, line_of(body, key), f"{where}.{key}", "unknown field; expected points or visibility"
                )
        if "points" not in body:
            raise SpecError(file, line_of(node, kind), where, "missing 'points'")
        points = _number(body, "points", float, file, f"{where}.points")
        visibility = _visibility(body, "visibility", file, f"{where}.visibility") if "visibility" in body else "visible"
        policies[kind] = CheckPolicy(kind, points, visibility)
    return policies


def _random(node: Any, parent: dict, file: str) -> RandomPolicy | None:
    if node is None:
        return None
    if not isinstance(node, dict):
        raise SpecError(
            file, line_of(parent, "random"), "random", "must be a mapping with 'count' and generator settings"
        )
    if "count" not in node:
        raise SpecError(file, line_of(node), "random.count", "missing: how many random cases to generate")
    count = _number(node, "count", int, file, "random.count")
    params = {k: v for k, v in node.items() if k not in ("count", "shrink", "reveal_counterexample")}
    return RandomPolicy(count=count, params=params, line=line_of(parent, "random"), shrink=_shrink(node, file))


def _shrink(node: dict, file: str) -> ShrinkPolicy:
    """`random.shrink: {calls, seconds}` and `random.reveal_counterexample` (both optional)."""
    values: dict[str, Any] = {}
    budget = node.get("shrink")
    if budget is not None:
        if not isinstance(budget, dict):
            raise SpecError(file, line_of(node, "shrink"), "random.shrink", "must be a mapping {calls: N, seconds: S}")
        for key in budget:
            if key not in ("calls", "seconds"):
                raise SpecError(
                    file, line_of(budget, key), f"random.shrink.{key}", "unknown field; expected calls or seconds"
                )
            kind = int if key == "calls" else float
            values[key] = _number(budget, key, kind, file, f"random.shrink.{key}")
    if "reveal_counterexample" in node:
        reveal = node["reveal_counterexample"]
        if not isinstance(reveal, bool):
            raise SpecError(
                file,
                line_of(node, "reveal_counterexample"),
                "random.reveal_counterexample",
                f"must be true or false, got {reveal!r}",
            )
        values["reveal"] = reveal
    return ShrinkPolicy(**values)


def _conventions(node: Any, parent: dict, file: str) -> Conventions:
    """`conventions: {cutoff: inclusive | strict, returns: [fail-soft, fail-hard]}`, each
    one the spec's lab takes (a lab declares which: Lab.conventions)."""
    if node is None:
        return Conventions()
    lab = str(parent.get("lab"))
    taken = spec_conventions(lab)
    if not isinstance(node, dict):
        raise SpecError(file, line_of(parent, "conventions"), "conventions", "must be a mapping, e.g. {cutoff: strict}")
    values: dict[str, Any] = {}
    for key, value in node.items():
        where = f"conventions.{key}"
        if key not in ("cutoff", "returns"):
            raise SpecError(file, line_of(node, key), where, "unknown convention; expected cutoff or returns")
        if key not in taken:
            said = f"the {lab} lab takes {', '.join(sorted(taken))}" if taken else f"the {lab} lab takes none"
            raise SpecError(file, line_of(node, key), where, f"not a convention of this lab ({said}; DESIGN.md)")
        if key == "cutoff":
            if value not in CUTOFFS:
                raise SpecError(
                    file,
                    line_of(node, key),
                    where,
                    f"must be inclusive (prune when alpha >= beta) or strict (only when alpha > beta), got {value!r}",
                )
            values["cutoff"] = value
        else:
            listed = [value] if isinstance(value, str) else value
            if not isinstance(listed, list) or not listed or any(v not in RETURNS for v in listed):
                raise SpecError(
                    file,
                    line_of(node, key),
                    where,
                    f"must list what counts as correct: fail-soft, fail-hard or both, got {value!r}",
                )
            values["returns"] = frozenset(listed)
    return Conventions(**values)

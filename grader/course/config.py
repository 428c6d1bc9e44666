"""Which file holds which lab in a course or student repository: `abgrade.yaml` at the
repository root, or `LAB=PATH` arguments. Example config:

    labs:
      tree: labs/tree.ipynb            # short form: the submission file
      negamax:                         # long form
        submission: negamax.py
        spec: specs/negamax.yaml       # optional: the course's own spec
      nim:                             # a lab folder (game.py, reference.py, spec.yaml)
        lab: labs/nim
        submission: nim_lab.py

Paths are relative to the config file. Mistakes are reported as `file:line: field: problem`,
like spec errors, so that a CI log points at the line to fix.

The instructor's side may add late policies per lab, read by `abgrade batch` (the fields
are checked by grader/batch/late.py; `deadline_fields` hands them over with their lines):

    deadlines:
      tree: {due: "2026-03-01T23:59:00+01:00", grace: 15m, per_day: 10, cap: 50}

and the seed of the random cases (`grade`, `check`, and a batch's first run), instead of
the spec's own (`grade`, `check`) or a fresh one (a batch):

    seed: 20260301
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ..lab_setup import UsageError
from ..labs import lab_names
from ..registry import folder_of
from ..seeding import seed_problem
from ..spec import SpecError
from ..spec.yaml_lines import LineDict, line_of, read_yaml_file
from .config_file import CONFIG_NAME, find_config

_TOP_FIELDS = ("labs", "deadlines", "seed")
_LAB_FIELDS = ("submission", "spec", "lab")


class ConfigError(SpecError):
    """A mistake in abgrade.yaml, shown as `file:line: field: problem` (exit code 2)."""


@dataclass(frozen=True)
class LabEntry:
    """One lab to check: its name, the submission file and, optionally, a spec of its own
    and the lab folder the lab is read from (a lab that is no installed package)."""

    lab: str
    submission: Path
    spec: Path | None = None
    folder: Path | None = None

    @property
    def source(self) -> str:
        """What `load_lab` takes: the lab folder's path, else the lab's name."""
        return str(self.folder) if self.folder is not None else self.lab


def load_config(path: Path) -> list[LabEntry]:
    """Every lab of the config file, in file order; raises ConfigError on any mistake."""
    shown = str(path)
    raw = read_config(path)
    labs = raw.get("labs")
    if not isinstance(labs, LineDict) or not labs:
        raise ConfigError(
            shown,
            line_of(raw, "labs") or line_of(raw),
            "labs",
            "must map each lab to its submission file, e.g. `labs: {tree: labs/tree.py}`",
        )
    return [_entry(shown, path.parent, labs, name) for name in labs]


def _entry(shown: str, base: Path, labs: LineDict, name: Any) -> LabEntry:
    where = f"labs.{name}"
    body = labs[name]
    if isinstance(body, str):
        body = {"submission": body}
    if not isinstance(body, dict):
        raise ConfigError(
            shown,
            line_of(labs, name),
            where,
            "must be the submission's path, or a mapping with 'submission' and optionally 'spec' and 'lab'",
        )
    if name not in lab_names() and "lab" not in body:
        raise ConfigError(
            shown,
            line_of(labs, name),
            where,
            f"unknown lab; known labs: {', '.join(lab_names())} (a lab folder: give its path as `lab:`)",
        )
    for key in body:
        if key not in _LAB_FIELDS:
            raise ConfigError(
                shown, line_of(body, key), f"{where}.{key}", f"unknown field; expected {' or '.join(_LAB_FIELDS)}"
            )
    paths = {}
    for key in _LAB_FIELDS:
        value = body.get(key)
        if key == "submission" and value is None:
            raise ConfigError(
                shown,
                line_of(body) or line_of(labs, name),
                f"{where}.submission",
                "missing: the path of the submission file",
            )
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ConfigError(
                shown,
                line_of(body, key) or line_of(labs, name),
                f"{where}.{key}",
                f"must be a path (text), got {value!r}",
            )
        paths[key] = base / value if value is not None else None
    return LabEntry(name, cast(Path, paths["submission"]), paths["spec"], paths["lab"])  # submission: checked above


def read_config(path: Path) -> LineDict:
    """The config file as a mapping with line numbers, its top-level fields checked."""
    shown = str(path)
    _, raw = read_yaml_file(path, shown, "config", ConfigError)
    if not isinstance(raw, LineDict):
        raise ConfigError(shown, 1, "config", f"must be a YAML mapping with the keys {', '.join(_TOP_FIELDS)}")
    for key in raw:
        if key not in _TOP_FIELDS:
            raise ConfigError(shown, line_of(raw, key), str(key), f"unknown field; expected {', '.join(_TOP_FIELDS)}")
    return raw


def config_seed(path: Path) -> int | None:
    """abgrade.yaml's `seed:` (None when it has none); a bad value is reported at its line."""
    raw = read_config(path)
    if "seed" not in raw:
        return None
    value = raw["seed"]
    problem = seed_problem(value)
    if problem:
        raise ConfigError(str(path), line_of(raw, "seed"), "seed", problem)
    return value


def nearest_config_seed(config: Path | None, start: Path) -> int | None:
    """The seed of `config`, else of the nearest abgrade.yaml above `start` (None: no
    config, or no `seed:` in it)."""
    path = config or find_config(start)
    if path is None:
        return None
    if not path.is_file():
        raise UsageError(f"{path}: no such config file")
    return config_seed(path)


def deadline_fields(path: Path, lab: str) -> LineDict | None:
    """The `deadlines.<lab>` mapping of the config (None when it has none for this lab),
    with the lines of its keys, so that a bad value is reported at its line."""
    shown = str(path)
    deadlines = read_config(path).get("deadlines")
    if deadlines is None:
        return None
    if not isinstance(deadlines, LineDict):
        raise ConfigError(shown, line_of(deadlines), "deadlines", "must map each lab to its late policy")
    fields = deadlines.get(lab)
    if fields is not None and not isinstance(fields, LineDict):
        raise ConfigError(
            shown,
            line_of(deadlines, lab),
            f"deadlines.{lab}",
            "must be a mapping, e.g. {due: '2026-03-01T23:59:00+01:00', per_day: 10}",
        )
    return fields


def select_labs(arguments: Sequence[str], config: Path | None, start: Path) -> list[LabEntry]:
    """What to check: `LAB=PATH` arguments as given (relative to `start`), bare `LAB` names
    picked from the config, and with no arguments every lab of the config. `config` is the
    config file to use; None means the nearest abgrade.yaml above `start`."""
    arguments = [a for a in arguments if a]
    if not arguments:
        return load_config(_config_path(config, start))
    configured = load_config(_config_path(config, start)) if any("=" not in a for a in arguments) else []
    entries: list[LabEntry] = []
    for argument in arguments:
        entry = _argument_entry(argument, start) if "=" in argument else _configured_entry(argument, configured)
        if any(e.lab == entry.lab for e in entries):
            raise UsageError(f"lab {entry.lab!r} is given twice")
        entries.append(entry)
    return entries


def _config_path(config: Path | None, start: Path) -> Path:
    if config is not None:
        return config
    found = find_config(start)
    if found is None:
        raise UsageError(
            f"no {CONFIG_NAME} in {start.resolve()} or its parents; write one "
            f"(labs: {{tree: labs/tree.py}}) or name the labs as LAB=PATH"
        )
    return found


def _argument_entry(argument: str, start: Path) -> LabEntry:
    lab, _, path = argument.partition("=")
    folder = folder_of(lab) if lab not in lab_names() else None
    if lab not in lab_names() and folder is None:
        raise UsageError(
            f"{argument}: unknown lab {lab!r}; known labs: {', '.join(lab_names())}, or a lab folder's path"
        )
    if not path:
        raise UsageError(f"{argument}: give the submission's path after '='")
    return LabEntry(lab, start / path, folder=start / folder if folder is not None else None)


def _configured_entry(lab: str, configured: list[LabEntry]) -> LabEntry:
    for entry in configured:
        if entry.lab == lab:
            return entry
    known = ", ".join(e.lab for e in configured)
    raise UsageError(f"lab {lab!r} is not in {CONFIG_NAME} (it lists: {known}); give it as {lab}=PATH")

"""A lab read from a folder of three files (README, "Write your own lab"): `game.py` (the
game the student's code calls, and what the grader watches), `reference.py` (the
instructor's solution in the student API; it runs in the grader only) and `spec.yaml`
(cases, points, limits, random cases, accepted `variants`), plus optional `bugs/*.py`
(replays of classic mistakes, each with a one-line `HINT`).

Each folder becomes a `FolderLab` subclass of its own (its name, API and observer setup
are class attributes, as an installed lab's are). It pickles as its files' snapshot, so a
grading task carries the lab to another process or machine.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from ...sandbox.session import ProbeSetup
from ...spec import Spec
from ..kit import CasePlan, Lab
from ..kit.random_settings import rng
from .cases import read_cases
from .declarations import Declarations, read_declarations
from .files import LabError, LabFiles, SourceFile, read_folder
from .modules import load_module
from .picture import lab_tree_figure
from .plans import Bench, case_plans, random_plan
from .replays import diagnosis
from .runs import OBSERVED_FIELDS, GameHooks, Run
from .skeleton import write_skeleton

KINDS = ("value", "nodes", "pruned", "bounds", "choice")
PIPELINE_KINDS = ("load", "random", "limits")
HERE = Path(__file__).resolve().parent
HINT_CHARS = 200


class FolderLab(Lab):
    """The lab of one folder; `load_folder` makes its class."""

    kinds = KINDS
    observed_fields = OBSERVED_FIELDS
    spec_fields = ("variants",)
    files: ClassVar[LabFiles]
    declarations: ClassVar[Declarations]

    def __init__(self) -> None:
        self._runs: dict[tuple[str, bool], Run] = {}
        self._hooks: GameHooks | None = None
        self._benches: dict[tuple[str, str], Bench] = {}
        self._lock = threading.RLock()

    def __reduce__(self) -> tuple[Any, tuple[LabFiles]]:
        return lab_from_files, (self.files,)

    @classmethod
    def from_folder(cls, folder: Path) -> FolderLab:
        """The lab in `folder` (how grader.registry opens a lab folder)."""
        return load_folder(folder)

    @classmethod
    def new_folder(cls, folder: Path) -> list[Path]:
        """`abgrade lab new`: a working lab in the new `folder` (how grader.registry makes one)."""
        return write_skeleton(folder)

    # --- the folder's code, loaded once per lab instance ----------------------------------

    @property
    def hooks(self) -> GameHooks:
        with self._lock:
            if self._hooks is None:
                self._hooks = GameHooks(self.files, self.declarations)
            return self._hooks

    def run(self, source: SourceFile, strict: bool = True) -> Run:
        with self._lock:
            key = (source.name, strict)
            if key not in self._runs:
                self._runs[key] = Run(self.files, source, self.declarations, strict)
            return self._runs[key]

    def bench(self, spec: Spec) -> Bench:
        """The references of `spec` (reference.py and its variants), the bugs and hooks."""
        with self._lock:
            key = (spec.path, spec.digest)
            if key not in self._benches:
                references = (self.run(self.files.reference), *(self.run(v) for v in self.variants(spec)))
                bugs = tuple(self.run(bug, strict=False) for bug in self.files.bugs)
                self._benches[key] = Bench(self.declarations, self.hooks, references, bugs)
            return self._benches[key]

    def variants(self, spec: Spec) -> list[SourceFile]:
        """The spec's accepted variants: files of the folder, each in the student API."""
        names = spec.raw.get("variants", [])
        if not isinstance(names, list):
            raise spec.error(spec.raw, "variants", "variants", "must be a list of files of the lab folder")
        found = []
        for index, name in enumerate(names):
            source = self.files.source(name) if isinstance(name, str) else None
            if source is None or name == "game.py":
                raise spec.error(
                    names,
                    index,
                    f"variants[{index}]",
                    f"{name!r} is no Python file of the lab folder {self.files.shown}",
                )
            missing = self.run(source).missing(list(self.api))
            if missing is not None:
                raise missing
            found.append(source)
        return found

    # --- the Lab interface ----------------------------------------------------------------

    def repeat_plan(self, candidates: Sequence[CasePlan]) -> CasePlan | None:
        """The first visible case that is not a game against the student (its spec's first)."""
        return candidates[0] if candidates else None

    def adopt(self, spec: Spec) -> Spec:
        digest = hashlib.sha256(f"{spec.digest}:{self.files.digest()}".encode()).hexdigest()[:16]
        return replace(spec, digest=digest)

    def scored_kinds(self, spec: Spec) -> tuple[str, ...]:
        """This lab's check kinds the spec gives points to; a SpecError for one it can't judge."""
        for kind in spec.checks:
            if kind not in KINDS + PIPELINE_KINDS:
                raise spec.error(
                    spec.raw["checks"],
                    kind,
                    f"checks.{kind}",
                    f"a lab folder has no such check; expected one of {', '.join(KINDS + PIPELINE_KINDS)}",
                )
        if "choice" in spec.checks and self.declarations.choose is None:
            raise spec.error(spec.raw["checks"], "choice", "checks.choice", "the game declares no CHOOSE function")
        return tuple(kind for kind in KINDS if spec.policy(kind) is not None)

    def cases(self, spec: Spec) -> list[Any]:  # FolderCases: verified by the lab as a whole (verify.py)
        return read_cases(spec, self.scored_kinds(spec), self.declarations, self.hooks)

    def fixed_plans(self, spec: Spec) -> list[CasePlan]:
        bench = self.bench(spec)
        return [plan for case in self.cases(spec) for plan in case_plans(bench, case)]

    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        bench = self.bench(spec)
        with_choice = self.declarations.choose is not None and spec.policy("choice") is not None
        return [
            random_plan(bench, index + 1, world, call, with_choice)
            for index, (world, call) in enumerate(self.random_cases(spec, seed))
        ]

    def random_cases(self, spec: Spec, seed: int) -> list[tuple[dict | None, dict[str, Any]]]:
        """The hidden cases of a run; the generator's own error is said at the spec's
        `random` (its settings are the likely cause) with the game's file and line."""
        assert spec.random is not None
        settings = self.random_settings(spec)
        try:
            cases = [self.hooks.random_case(rng(seed, index), settings) for index in range(spec.random.count)]
        except LabError as exc:
            raise spec.error(spec.raw, "random", "random", f"bad generator settings: {exc}") from None
        for _, call in cases:
            missing = [p for p in self.declarations.call_params if p not in call]
            if missing:
                raise LabError(self.files.game.shown, None, "random_case", f"its call lacks {missing[0]!r}")
        return cases

    def random_settings(self, spec: Spec) -> dict[str, Any]:
        assert spec.random is not None
        if "random_case" not in self.declarations.hooks:
            raise spec.error(spec.raw, "random", "random", "the game has no random_case(rng, **settings) to make them")
        allowed = self.declarations.random_settings
        for key in spec.random.params:
            if allowed is not None and key not in allowed:
                known = ", ".join(allowed) or "none"
                raise spec.error(
                    spec.raw["random"], key, f"random.{key}", f"unknown setting of random_case; expected: {known}"
                )
        return dict(spec.random.params)

    def check_random(self, spec: Spec) -> None:
        self.random_cases(spec, 0)

    def verify(self, spec: Spec) -> list[str]:
        """Every stored expectation against reference.py; every variant agrees with it on
        the values; every bug replay shows somewhere; the random settings work."""
        from .verify import verify_lab

        return verify_lab(self, spec)

    def advice(self, spec: Spec) -> list[str]:
        """The game's hook `smaller` on the first random cases (verify.py): a broken one only
        leaves cases unshrunk, so it is said by `specs verify` and never stops a grading."""
        from .verify import verify_smaller

        return verify_smaller(self, spec, self.bench(spec)) if spec.random else []

    def picture(self, details: Mapping[str, Any]) -> str:
        return lab_tree_figure(details) if details.get("view") == "lab-tree" else ""


def load_folder(folder: Path) -> FolderLab:
    """The lab in `folder` (the entry point `abgrade.lab_folders`); a LabError names the
    file and line of anything broken."""
    return lab_from_files(read_folder(folder))


def lab_from_files(files: LabFiles) -> FolderLab:
    game = load_module(files.game, "_abgrade_lab_game")
    declarations = read_declarations(game, files.game)
    bug_hints: dict[str, str] = {}
    attributes: dict[str, Any] = {
        "name": files.name,
        "files": files,
        "declarations": declarations,
        "api": {name: signature.shape for name, signature in declarations.api.items()},
        "probe": ProbeSetup("generic", declarations.arities, HERE / "observer.py", _shipped(files, declarations)),
        "spec_file": files.spec_file,
        "solution_file": files.reference_file,
        "student_files": {f"{declarations.module}.py": files.game.text},
        "private_dirs": (files.folder,),
    }
    lab_class = type(f"FolderLab_{files.name.replace('-', '_')}", (FolderLab,), attributes)
    lab: FolderLab = lab_class()
    missing = lab.run(files.reference).missing(list(declarations.api))
    if missing is not None:
        raise missing
    for source in files.bugs:
        bug = lab.run(source, strict=False)
        hint = bug.namespace.get("HINT")
        if not isinstance(hint, str) or not hint.strip() or "\n" in hint.strip() or len(hint) > HINT_CHARS:
            raise LabError(
                source.shown,
                None,
                "HINT",
                f"missing: HINT = '...', one line of at most {HINT_CHARS} characters for the student",
            )
        missing = bug.missing([declarations.search.name])
        if missing is not None:
            raise missing
        name = diagnosis(bug.name)
        if bug_hints.get(name, hint.strip()) != hint.strip():
            raise LabError(source.shown, None, "HINT", f"must be the same in every way of writing bugs/{name}")
        bug_hints[name] = hint.strip()
    lab_class.bug_hints = bug_hints  # type: ignore[attr-defined]  # a class made just above
    return lab


def _shipped(files: LabFiles, declarations: Declarations) -> tuple[tuple[str, str], ...]:
    """What goes into the student's process besides the observer: the watching code, the
    game under the name the student imports it by, and that name."""
    return (
        ("_abgrade_generic_watch", (HERE / "watch.py").read_text()),
        (declarations.module, files.game.text),
        ("_abgrade_generic_lab", f"GAME = {declarations.module!r}\n"),
    )

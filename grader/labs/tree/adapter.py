"""The `tree` lab's declarations: its API, check kinds, observer, classic bugs and picture."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...sandbox.session import ProbeSetup
from ...spec import Spec
from ..kit import CasePlan, Lab
from ..kit.state import with_state_hint
from .cases import CASE_KINDS, TreeCase, read_cases
from .plans import case_plans, random_plan
from .random_cases import random_trees


class _BugHints(Mapping[str, str]):
    """Every classic bug's hint (reference/tree_bugs.py), read on first use: a passing grade
    never needs them, and the module's import is about 2 ms of a grade's start."""

    def _hints(self) -> dict[str, str]:
        from reference.tree_bugs import DIAGNOSIS_HINTS, MIRRORED_HINTS

        return {**DIAGNOSIS_HINTS, **MIRRORED_HINTS}  # a strict course's mirrored bug too

    def __getitem__(self, name: str) -> str:
        return self._hints()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._hints())

    def __len__(self) -> int:
        return len(self._hints())


class TreeLab(Lab):
    name = "tree"
    probe = ProbeSetup("tree", {"alphabeta": 4}, Path(__file__).with_name("observer.py"))
    api = {"alphabeta": "alphabeta(node, alpha, beta, max_player)"}
    kinds = CASE_KINDS
    bug_hints = _BugHints()
    observed_fields = {"reads": "labels"}
    conventions = ("cutoff", "returns")
    reusable_plans = True  # pure judges over frozen cases and trees (judges.py, cases.py)

    def repeat_plan(self, candidates: Sequence[CasePlan]) -> CasePlan | None:
        """The first visible case (the course's example tree: a few reads)."""
        return candidates[0] if candidates else None

    def hints(self, spec: Spec) -> Mapping[str, str]:
        from reference.tree_bugs import hints_for  # when a verdict failed (grading.py)

        return with_state_hint(hints_for(">" if spec.conventions.strict else ">="))

    def cases(self, spec: Spec) -> list[TreeCase]:
        return read_cases(spec)

    def case_plans(self, case: TreeCase) -> list[CasePlan]:
        return case_plans(case)

    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        return [random_plan(index + 1, tree, spec.conventions) for index, tree in enumerate(random_trees(spec, seed))]

    def check_random(self, spec: Spec) -> None:
        random_trees(spec, 0)

    def picture(self, details: Mapping[str, Any]) -> str:
        if details.get("view") != "tree":
            return ""
        from .picture import tree_figure  # drawn only for a report that shows one (its import: about 3 ms)

        return tree_figure(details)

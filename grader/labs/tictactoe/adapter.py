"""The `tictactoe` lab's declarations: its API, check kinds, observer, classic bugs and picture."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import reference.tictactoe as rules
from reference.tictactoe_bugs import BUG_HINTS, MIRRORED_HINTS, hints_for

from ...sandbox.session import ProbeSetup
from ...spec import Spec
from ..kit import CasePlan, Lab
from ..kit.state import with_state_hint
from .cases import GameOverCase, PositionCase, read_cases
from .picture import boards_html
from .plans import game_over_plans, position_plans, random_plan
from .random_cases import random_positions


def _rules_module() -> tuple[tuple[str, str], ...]:
    return (("_abgrade_tictactoe_rules", Path(rules.__file__).read_text()),)


class TicTacToeLab(Lab):
    name = "tictactoe"
    probe = ProbeSetup(
        "tictactoe",
        {"game_over": 1, "maximize": 7, "minimize": 7, "minimax": 2},
        Path(__file__).with_name("observer.py"),
        _rules_module(),
    )
    api = {
        "game_over": "game_over(matrix)",
        "maximize": "maximize(matrix, active_turn, player, depth, alpha, beta, nodes_visited)",
        "minimize": "minimize(matrix, active_turn, player, depth, alpha, beta, nodes_visited)",
        "minimax": "minimax(matrix, player)",
    }

    kinds = ("game_over", "value", "nodes", "pruned", "choice", "bounds")
    observed_fields = {"expanded": "labels"}
    bug_hints = {**BUG_HINTS, **MIRRORED_HINTS}  # a strict course's mirrored bug too
    conventions = ("cutoff", "returns")

    def repeat_plan(self, candidates: Sequence[CasePlan]) -> CasePlan | None:
        """The visible search on the fullest board (the cheapest to search again; game_over
        alone keeps no count): None when no visible case searches."""
        searches = [
            plan for plan in candidates if any(call.get("function") == "minimax" for call in plan.request["calls"])
        ]
        return min(searches, key=lambda plan: plan.request["calls"][0]["board"].count("."), default=None)

    def hints(self, spec: Spec) -> Mapping[str, str]:
        return with_state_hint(hints_for(spec.conventions.strict))

    def cases(self, spec: Spec) -> list[GameOverCase | PositionCase]:
        return read_cases(spec)

    def case_plans(self, case: GameOverCase | PositionCase) -> list[CasePlan]:
        return game_over_plans(case) if isinstance(case, GameOverCase) else position_plans(case)

    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        return [
            random_plan(index + 1, position, finished, spec.conventions)
            for index, (position, finished) in enumerate(random_positions(spec, seed))
        ]

    def check_random(self, spec: Spec) -> None:
        random_positions(spec, 0)

    def picture(self, details: Mapping[str, Any]) -> str:
        return boards_html(details) if details.get("view") == "boards" else ""

"""The `negamax` lab's declarations: its API, check kinds, observer, games, classic bugs and picture."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reference.games import GAMES, load_game

from ...sandbox.session import ProbeSetup
from ...spec import Spec
from ..kit import CasePlan, Lab
from .cases import BoundsCase, PositionCase, read_cases
from .hints import SIGN_HINTS
from .picture import picture
from .plans import bounds_plans, position_plans, random_plan
from .random_cases import random_positions


def _game_modules() -> tuple[tuple[str, str], ...]:
    return tuple((f"_abgrade_game_{name}", load_game(name).source) for name in GAMES)


class NegamaxLab(Lab):
    name = "negamax"
    bug_hints = SIGN_HINTS
    conventions = ("cutoff",)
    kinds = ("value", "nodes", "choice", "bounds")
    probe = ProbeSetup(
        "negamax",
        {"value": 4, "alphaBeta": 4, "best_move": 2},
        Path(__file__).with_name("observer.py"),
        _game_modules(),
    )
    api = {
        "value": "value(State, player, alpha=-1, beta=1)",
        "alphaBeta": "alphaBeta(State, player, alpha, beta)",
        "best_move": "best_move(State, player)",
    }

    def picture(self, details: Mapping[str, Any]) -> str:
        return picture(details)

    def cases(self, spec: Spec) -> list[PositionCase | BoundsCase]:
        return read_cases(spec)

    def case_plans(self, case: PositionCase | BoundsCase) -> list[CasePlan]:
        return bounds_plans(case) if isinstance(case, BoundsCase) else position_plans(case)

    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        return [random_plan(index + 1, position) for index, position in enumerate(random_positions(spec, seed))]

    def check_random(self, spec: Spec) -> None:
        random_positions(spec, 0)

"""The `connect4` lab's declarations: its API, check kinds, observer, classic bugs and picture."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reference.games import connect4

from ...sandbox.session import ProbeSetup
from ...spec import Spec
from ..kit import CasePlan, Lab
from .cases import CASE_KINDS, Connect4Case, read_cases
from .hints import BUG_HINTS
from .picture import picture
from .plans import case_plans, random_plan
from .random_cases import random_positions


class Connect4Lab(Lab):
    name = "connect4"
    kinds = CASE_KINDS
    bug_hints = BUG_HINTS
    probe = ProbeSetup(
        "connect4",
        {
            "store_cache": 5,
            "value_cache": 2,
            "evaluate": 5,
            "maxValue": 4,
            "minValue": 4,
            "pd_evaluate": 3,
            "best_move": 2,
        },
        Path(__file__).with_name("observer.py"),
        (("_abgrade_game_connect4", Path(connect4.__file__).read_text(encoding="utf-8")),),
    )
    api = {
        "store_cache": "store_cache(State, limit, alpha, beta, value)",
        "value_cache": "value_cache(State, limit)",
        "evaluate": "evaluate(State, limit, f, alpha=-1, beta=1)",
        "maxValue": "maxValue(State, limit, alpha=-1, beta=1)",
        "minValue": "minValue(State, limit, alpha=-1, beta=1)",
        "pd_evaluate": "pd_evaluate(State, time_limit, f) -> (value, limit)",
        "best_move": "best_move(State, time_limit) -> (value, state)",
    }

    def picture(self, details: Mapping[str, Any]) -> str:
        return picture(details)

    def cases(self, spec: Spec) -> list[Connect4Case]:
        return read_cases(spec)

    def case_plans(self, case: Connect4Case) -> list[CasePlan]:
        return case_plans(case)

    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        return [random_plan(i + 1, moves, limit) for i, (moves, limit) in enumerate(random_positions(spec, seed))]

    def check_random(self, spec: Spec) -> None:
        random_positions(spec, 0)

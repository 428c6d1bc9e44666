"""The `agents` lab's declarations: its API, check kinds, observer, the environments it
ships, the classic bugs it diagnoses and its picture.

The environments (`reference.envs.bundle_source()`) travel to the student's process as the
extra module `_abgrade_agents_envs`, which also registers the chapter's module names:
`utils.ttt_simple_env` (`ttt`) and `utils.conn_env` (`conn`), so that the chapter's
imports work in a `.py` (the module exists before the import) and in a notebook (it
exists before the first cell). Inside the grader nothing of the reference's agents is
shipped: they are the lab's solution.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reference.agents import hints_for
from reference.envs import bundle_source

from ...sandbox.session import ProbeSetup
from ...spec import Spec
from ..kit import CasePlan, Lab
from ..kit.state import with_state_hint
from .cases import CASE_KINDS, MatchCase, PositionCase, read_cases
from .hints import BUG_HINTS
from .picture import picture
from .plans import case_plans
from .random_cases import check_random, random_plans

ENVS_MODULE = "_abgrade_agents_envs"
CHAPTER_MODULES = {"ttt_simple_env": ("ttt", "TicTacToeEnv"), "conn_env": ("conn", "ConnectFourEnv")}

_ALIASES = f"""

# --- the chapter's module names (grader/labs/agents/adapter.py)
def _abgrade_chapter_modules():
    import sys
    import types

    package = types.ModuleType("utils")
    package.__path__ = []
    shared = {{"StepCounter": StepCounter, "IllegalMoveError": IllegalMoveError}}
    for name, names in {tuple(CHAPTER_MODULES.items())!r}:
        module = types.ModuleType("utils." + name)
        module.__dict__.update(shared)
        module.__dict__.update({{n: globals()[n] for n in names}})
        setattr(package, name, module)
        sys.modules[module.__name__] = module
    sys.modules["utils"] = package


_abgrade_chapter_modules()
del _abgrade_chapter_modules
"""


def envs_source() -> str:
    """The environments' source as shipped: the bundle, then the chapter's module names."""
    return bundle_source() + _ALIASES


class AgentsLab(Lab):
    name = "agents"
    probe = ProbeSetup(
        "agents",
        {"maximized_payoff_ttt": 5, "minimax_ttt": 1, "max_payoff_conn": 6, "minimax_conn": 2},
        Path(__file__).with_name("observer.py"),
        ((ENVS_MODULE, envs_source()),),
    )
    api = {
        "maximized_payoff_ttt": "maximized_payoff_ttt(env, reward, done, alpha, beta)",
        "minimax_ttt": "minimax_ttt(env)",
        "max_payoff_conn": "max_payoff_conn(env, reward, done, depth, alpha, beta)",
        "minimax_conn": "minimax_conn(env, depth=3)",
    }
    kinds = CASE_KINDS
    bug_hints = BUG_HINTS
    conventions = ("cutoff",)

    def hints(self, spec: Spec) -> Mapping[str, str]:
        return with_state_hint(hints_for(spec.conventions.strict))

    def picture(self, details: Mapping[str, Any]) -> str:
        return picture(details)

    def cases(self, spec: Spec) -> list[PositionCase | MatchCase]:
        return read_cases(spec)

    def case_plans(self, case: PositionCase | MatchCase) -> list[CasePlan]:
        return case_plans(case)

    def plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        """As every lab's, except that a speed-up case also asks for the agent's count on a
        hidden position drawn from `seed` (plans.py: a count copied from the spec must not pass)."""
        return self.with_random(spec, seed, [plan for case in self.cases(spec) for plan in case_plans(case, seed)])

    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        return random_plans(spec, seed)

    def check_random(self, spec: Spec) -> None:
        check_random(spec)

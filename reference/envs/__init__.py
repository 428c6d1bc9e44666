"""The agents lab's environments: tic-tac-toe and Connect Four with the book chapter's
gym-like interface, and a step counter shared by every deep copy (see `core`).

`bundle_source()` is the three modules as one self-contained text (numpy and the standard
library only) for the grader to run in a student's process; `load_bundle()` runs that text
in a fresh namespace here, which is how the tests check that the shipped text behaves as
these modules do.
"""

import types
from importlib import resources

from reference.envs.connect4_env import ConnectFourEnv, conn
from reference.envs.core import BoardEnv, IllegalMoveError, StepCounter
from reference.envs.tictactoe_env import TicTacToeEnv, ttt

__all__ = [
    "BoardEnv",
    "ConnectFourEnv",
    "IllegalMoveError",
    "StepCounter",
    "TicTacToeEnv",
    "bundle_source",
    "conn",
    "load_bundle",
    "ttt",
]

_MODULES = ("core", "tictactoe_env", "connect4_env")  # in dependency order


def bundle_source():
    """The source of `core`, `tictactoe_env` and `connect4_env` as one module, without the
    imports between them. Defines `StepCounter`, `IllegalMoveError`, `BoardEnv`,
    `TicTacToeEnv`/`ttt` and `ConnectFourEnv`/`conn`."""
    parts = []
    for name in _MODULES:
        text = resources.files(__name__).joinpath(f"{name}.py").read_text(encoding="utf-8")
        lines = [line for line in text.splitlines() if not line.startswith("from reference.")]
        parts.append(f"# --- reference/envs/{name}.py\n" + "\n".join(lines))
    return "\n\n".join(parts) + "\n"


def load_bundle():
    """`bundle_source()` run in a new module object."""
    module = types.ModuleType("abgrade_agents_envs")
    exec(compile(bundle_source(), "<abgrade agents envs>", "exec"), module.__dict__)
    return module

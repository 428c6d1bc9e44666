"""The agents lab's spec cases, validated as they are read: positions (a game, the moves
that lead there, a depth at Connect Four) and matches (an opponent, a number of games, a
seed), with their stored expectations.

A position case makes up to two calls on the position (each on an environment of its
own): the search (`maximized_payoff_ttt` / `max_payoff_conn`, with the case's `alpha` and
`beta`, -2 by default) when it checks `value`, or only `nodes`; the agent
(`minimax_ttt` / `minimax_conn`) when it checks `choice` or `speedup`. `nodes` judges the
`step` calls of every call the case makes; `bounds` adds calls with narrowed windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reference.agent_tournaments import (
    MatchResult,
    depth_agent,
    perfect_agent,
    play_match,
    random_agent,
    search_agent,
)
from reference.agents import CHAPTER, NO_PRUNING, course_variant, decide, optimal_actions, run_payoff
from reference.envs import BoardEnv, ConnectFourEnv, IllegalMoveError, TicTacToeEnv

from ...checks.show import show
from ...spec import Spec
from ...spec.yaml_lines import LineDict
from ..kit.fields import expected_keys, read_header, require
from ..kit.messages import mismatch

POSITION_KINDS = ("value", "bounds", "nodes", "choice", "speedup")
MATCH_KINDS = ("games",)
CASE_KINDS = (*POSITION_KINDS, *MATCH_KINDS)

GAMES: dict[str, type[BoardEnv]] = {"ttt": TicTacToeEnv, "conn": ConnectFourEnv}
GAME_NAMES = {"ttt": "tic-tac-toe", "conn": "Connect Four"}
SEARCH = {"ttt": "maximized_payoff_ttt", "conn": "max_payoff_conn"}
AGENT = {"ttt": "minimax_ttt", "conn": "minimax_conn"}
OPPONENTS = {"ttt": ("perfect", "random"), "conn": ("depth", "random")}
SENTINEL = -2

EXPECT_KEYS = {
    "value": ("payoff",),
    "bounds": (),
    "nodes": ("steps", "agent_steps"),
    "choice": ("optimal",),
    "speedup": ("agent_steps", "unpruned_steps"),
    "games": ("reference",),
}


@dataclass(frozen=True)
class Position:
    """A position reached by `moves` from the start; `depth` is the search depth at Connect
    Four (None at tic-tac-toe); `strict`: the course cuts off only when alpha > -beta (the
    spec's conventions), which the reference's searches there follow."""

    game: str
    moves: tuple[int, ...]
    depth: int | None = None
    strict: bool = False

    def moved(self, *moves: int, depth: int | None = None) -> Position:
        """The position `moves` later (searched to `depth`, else as deep), in the same course."""
        later = self.depth if depth is None else depth
        return Position(self.game, (*self.moves, *moves), later, self.strict)

    def env(self) -> BoardEnv:
        return GAMES[self.game].from_moves(self.moves)

    @property
    def finished(self) -> bool:
        return self.env().done

    def previous(self) -> tuple[int, bool]:
        """`(reward, done)` of the move that led here (0, False at the start)."""
        env = self.env()
        return env.reward, env.done

    def search_args(self, alpha: Any, beta: Any) -> list:
        """The search's arguments after `env`."""
        reward, done = self.previous()
        return [reward, done, alpha, beta] if self.depth is None else [reward, done, self.depth, alpha, beta]

    def agent_args(self) -> list:
        return [] if self.depth is None else [self.depth]

    def search_call(self, alpha: Any, beta: Any) -> str:
        return f"{SEARCH[self.game]}(env, {', '.join(show(a) for a in self.search_args(alpha, beta))})"

    def agent_call(self) -> str:
        return f"{AGENT[self.game]}(env{''.join(f', {show(a)}' for a in self.agent_args())})"

    def drawing(self) -> str:
        """The position as the chapter prints it, with who is to move."""
        env = self.env()
        board = "\n".join("  " + " ".join(f"{cell:2d}" for cell in row) for row in env.board())
        status = f"game over, reward {env.reward}" if env.done else f"{env.turn} to move"
        return f"{GAME_NAMES[self.game]} after moves {list(self.moves)} ({status}):\n{board}"


def search_run(position: Position, alpha: Any, beta: Any, variant=None):
    """The reference's search on the position (steps counted from 0), or `variant`'s."""
    env = position.env()
    reward, done = position.search_args(alpha, beta)[:2]
    return run_payoff(env, reward, done, alpha, beta, position.depth, variant or course_variant(position.strict))


def agent_run(position: Position, variant=None):
    return decide(position.env(), position.depth, variant or course_variant(position.strict))


class PositionCase:
    """A fixed position with its stored expectations."""

    def __init__(self, spec: Spec, header, raw: LineDict) -> None:
        self.header, self.where, self.expect = header, header.where, header.expect
        kinds = set(header.checks)
        if not kinds <= set(POSITION_KINDS):
            raise spec.error(raw, "checks", f"{self.where}.checks", f"a position checks {', '.join(POSITION_KINDS)}")
        game = require(spec, raw, "game", f"{self.where}.game", str, "the game: ttt or conn")
        if game not in GAMES:
            raise spec.error(raw, "game", f"{self.where}.game", f"must be ttt or conn, not {game!r}")
        moves = require(spec, raw, "moves", f"{self.where}.moves", list, "the moves from the start (a list)")
        if any(type(m) is not int for m in moves):
            raise spec.error(raw, "moves", f"{self.where}.moves", "moves must be whole numbers (cells or columns)")
        depth = None
        if game == "conn":
            depth = require(spec, raw, "depth", f"{self.where}.depth", int, "the search depth (a whole number >= 0)")
            if depth < 0:
                raise spec.error(raw, "depth", f"{self.where}.depth", "must be >= 0")
        elif "depth" in raw:
            raise spec.error(raw, "depth", f"{self.where}.depth", "tic-tac-toe searches have no depth")
        try:
            env = GAMES[game].from_moves(moves)
        except IllegalMoveError as exc:
            raise spec.error(raw, "moves", f"{self.where}.moves", f"not a legal game: {exc}") from None
        self.position = Position(game, tuple(moves), depth, spec.conventions.strict)
        if env.done and kinds & {"choice", "speedup", "bounds"}:
            raise spec.error(raw, "checks", f"{self.where}.checks", "a finished game has no move to choose or bound")
        self.alpha = raw.get("alpha", SENTINEL)
        self.beta = raw.get("beta", SENTINEL)
        for key in ("alpha", "beta"):
            value = raw.get(key, SENTINEL)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise spec.error(raw, key, f"{self.where}.{key}", "must be a number or null")
        self.min_saving = raw.get("min_saving", 0.0)
        if "speedup" in kinds:
            self.min_saving = require(
                spec, raw, "min_saving", f"{self.where}.min_saving", (int, float), "the fraction of steps to save"
            )
            if not 0 < self.min_saving < 1:
                raise spec.error(raw, "min_saving", f"{self.where}.min_saving", "must lie between 0 and 1")
        self.agent = bool(kinds & {"choice", "speedup"})
        self.search = "value" in kinds or ("nodes" in kinds and not self.agent)
        needed = {k for k in expected_keys(spec, header, EXPECT_KEYS)}
        if not self.search:
            needed.discard("steps")
        if not self.agent:
            needed.discard("agent_steps")
        for key in sorted(needed):
            if key not in self.expect:
                raise spec.error(
                    self.expect,
                    None,
                    f"{self.where}.expect.{key}",
                    "missing (run `abgrade specs verify` to compute it)",
                )

    def line_of(self, key: str) -> int | None:
        return self.expect.lines.get(key, self.expect.line)

    def computed(self) -> dict[str, Any]:
        """Every expectation this case stores, recomputed with the reference."""
        out: dict[str, Any] = {}
        position = self.position
        if self.search:
            run = search_run(position, self.alpha, self.beta)
            out["payoff"], out["steps"] = run.result, run.steps
        if self.agent:
            out["agent_steps"] = agent_run(position).steps
            out["optimal"] = sorted(optimal_actions(position.env(), position.depth))
            if "speedup" in self.header.checks:
                out["unpruned_steps"] = agent_run(position, NO_PRUNING).steps
        return {key: value for key, value in out.items() if key in self.expect}

    def verify(self, path: str) -> list[str]:
        problems = []
        for key, value in self.computed().items():
            stored = sorted(self.expect[key]) if key == "optimal" else self.expect[key]
            if stored != value:
                problems.append(mismatch(path, self.line_of(key), f"{self.where}.expect.{key}", stored, value))
        return problems


@dataclass(frozen=True)
class Match:
    """Games against one of the reference's opponents, the student's agent first in the even
    ones (the chapter's loop); `depth` is the Connect Four search depth of both agents."""

    game: str
    opponent: str
    games: int
    seed: str
    depth: int | None = None

    def label(self) -> str:
        who = {"perfect": "the perfect agent", "random": "a random agent"}.get(
            self.opponent, f"the depth-{self.depth} agent"
        )
        return f"{GAME_NAMES[self.game]}, {self.games} games against {who}"


def outcome_counts(result: MatchResult) -> list[int]:
    """[wins, draws, losses] of the agent over the whole match."""
    outcomes = result.outcomes()
    return [outcomes.count(1), outcomes.count(0), outcomes.count(-1)]


class MatchCase:
    def __init__(self, spec: Spec, header, raw: LineDict) -> None:
        self.header, self.where, self.expect = header, header.where, header.expect
        if set(header.checks) != {"games"}:
            raise spec.error(raw, "checks", f"{self.where}.checks", "a match checks games only")
        node = require(spec, raw, "match", f"{self.where}.match", dict, "the match: game, opponent, games, seed")
        game = require(spec, node, "game", f"{self.where}.match.game", str, "the game: ttt or conn")
        if game not in GAMES:
            raise spec.error(node, "game", f"{self.where}.match.game", f"must be ttt or conn, not {game!r}")
        opponent = require(spec, node, "opponent", f"{self.where}.match.opponent", str, "the opponent")
        if opponent not in OPPONENTS[game]:
            raise spec.error(
                node, "opponent", f"{self.where}.match.opponent", f"must be one of {', '.join(OPPONENTS[game])}"
            )
        games = require(spec, node, "games", f"{self.where}.match.games", int, "the number of games")
        if not 1 <= games <= 100:
            raise spec.error(node, "games", f"{self.where}.match.games", "must be within 1..100")
        seed = require(spec, node, "seed", f"{self.where}.match.seed", (str, int), "the seed (text or number)")
        depth = None
        if game == "conn":
            depth = require(spec, node, "depth", f"{self.where}.match.depth", int, "the search depth")
            if not 0 <= depth <= 4:
                raise spec.error(node, "depth", f"{self.where}.match.depth", "must be within 0..4")
        self.match = Match(game, opponent, games, str(seed), depth)
        expected_keys(spec, header, EXPECT_KEYS)
        stored = require(
            spec, self.expect, "reference", f"{self.where}.expect.reference", list, "[wins, draws, losses]"
        )
        if len(stored) != 3 or any(type(n) is not int for n in stored):
            raise spec.error(
                self.expect, "reference", f"{self.where}.expect.reference", "must be [wins, draws, losses]"
            )

    def verify(self, path: str) -> list[str]:
        computed = outcome_counts(reference_match(self.match))
        stored = self.expect["reference"]
        if stored != computed:
            line = self.expect.lines.get("reference", self.expect.line)
            return [mismatch(path, line, f"{self.where}.expect.reference", stored, computed)]
        return []


def opponent_agent(match: Match):
    if match.opponent == "perfect":
        return perfect_agent
    if match.opponent == "random":
        return random_agent
    return depth_agent(match.depth if match.depth is not None else 3)


def opponent_name(match: Match) -> str:
    return {"perfect": "perfect", "random": "random"}.get(match.opponent, f"depth-{match.depth}")


def reference_match(match: Match) -> MatchResult:
    """The chapter's agent (the reference's pruned search) playing the match here."""
    return play_match(
        GAMES[match.game],
        search_agent(CHAPTER, match.depth),
        opponent_agent(match),
        match.games,
        match.seed,
        ("reference", opponent_name(match)),
    )


def read_cases(spec: Spec) -> list[PositionCase | MatchCase]:
    names: set[str] = set()
    cases: list[PositionCase | MatchCase] = []
    for index, raw in enumerate(spec.cases):
        extra = {"match"} if "match" in raw else {"game", "moves", "depth", "alpha", "beta", "min_saving"}
        header = read_header(spec, index, raw, CASE_KINDS, extra, names)
        cases.append(MatchCase(spec, header, raw) if "match" in raw else PositionCase(spec, header, raw))
    return cases

"""Games between agents through the agents lab's environments, deterministic for a seed,
and their win/draw/loss tables: the `games` check's reference side.

An agent here is `agent(env, rng) -> action`: `env` is a deep copy of the game (sharing
its step counter, so the steps each move costs are recorded), `rng` a `random.Random`
seeded from the match seed, the game's number and the agent's side, so that a game
replays identically whatever the other agent draws. `chapter_agent(fn)` adapts a
function written as the chapter writes them, `fn(env)`, calling `random.choice`: it seeds
the `random` module from `rng` for the call and restores its state afterwards.

Matches follow the chapter's test loops: game `i` has the tested agent moving first when
`i` is even, second when odd. An agent that raises or returns a move not in `validinputs`
forfeits: the game ends as its loss, and the record says why.

The reference's opponents: `random_agent`; `perfect_agent`, the chapter's tic-tac-toe
agent, which plays exactly the moves `search_agent()` plays for the same `rng` but finds
them with the memoised solver (about 40 times faster over a match; no steps counted);
`depth_agent(3)`, the chapter's pruned Connect Four search with its default depth;
`search_agent(variant, depth)`, the chapter's search itself (or a classic bug) through the
environment, its step counts recorded.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from reference.agents import CHAPTER, CONN_DEPTH, Variant, decide, immediate_wins, optimal_actions
from reference.envs import BoardEnv

Agent = Callable[[BoardEnv, random.Random], int]


def random_agent(env: BoardEnv, rng: random.Random) -> int:
    """A legal move drawn uniformly."""
    return rng.choice(env.validinputs)


def perfect_agent(env: BoardEnv, rng: random.Random) -> int:
    """The chapter's tic-tac-toe agent, move for move (the same `rng` draws the same move
    as `search_agent()`): the first immediate win, else `rng.choice` of the best group,
    found by the memoised solver instead of a search."""
    wins = immediate_wins(env)
    if wins:
        return wins[0]
    return rng.choice(sorted(optimal_actions(env)))


def depth_agent(depth: int = CONN_DEPTH) -> Agent:
    """The chapter's Connect Four agent with `depth`: its pruned search, played."""
    agent = search_agent(CHAPTER, depth)
    agent.__name__ = f"depth_agent_{depth}"
    return agent


def search_agent(variant: Variant = CHAPTER, depth: int | None = None) -> Agent:
    """`decide(env, depth, variant, rng)`: the chapter's search (or a buggy one), played."""

    def agent(env: BoardEnv, rng: random.Random) -> int:
        return decide(env, depth, variant, rng).action

    agent.__name__ = f"search_agent_{variant.name}"
    return agent


def chapter_agent(function: Callable[[BoardEnv], int]) -> Agent:
    """An agent from `function(env)`, whose random choices come from the `random` module."""

    def agent(env: BoardEnv, rng: random.Random) -> int:
        saved = random.getstate()
        random.seed(rng.getrandbits(64))
        try:
            return function(env)
        finally:
            random.setstate(saved)

    agent.__name__ = getattr(function, "__name__", "chapter_agent")
    return agent


@dataclass(frozen=True)
class GameRecord:
    """One game: the moves in order, the result for the first player (+1 won, 0 tie, -1
    lost), the `step` calls each move's decision made, and the forfeit, if any, as
    `(ply, reason)`."""

    moves: tuple[int, ...]
    result: int
    steps: tuple[int, ...]
    forfeit: tuple[int, str] | None = None


def play_game(env_class: type[BoardEnv], first: Agent, second: Agent, seed: int | str = 0) -> GameRecord:
    """`first` against `second` from the start; agents draw from their own seeded `rng`."""
    env = env_class()
    agents = (first, second)
    rngs = (random.Random(f"{seed}/first"), random.Random(f"{seed}/second"))
    moves: list[int] = []
    steps: list[int] = []
    while not env.done:
        side = 0 if env.turn == env.players[0] else 1
        before = env.counter.count
        try:
            action = agents[side](copy.deepcopy(env), rngs[side])
        except Exception as error:  # noqa: BLE001 - any failure of an agent is its forfeit
            reason = f"{type(error).__name__}: {error}"
            return GameRecord(tuple(moves), 1 if side else -1, tuple(steps), (len(moves), reason))
        steps.append(env.counter.count - before)
        if isinstance(action, bool) or action not in env.validinputs:
            reason = f"illegal move {action!r} (valid: {env.validinputs})"
            return GameRecord(tuple(moves), 1 if side else -1, tuple(steps), (len(moves), reason))
        action = int(action)
        env._play(action)
        moves.append(action)
    return GameRecord(tuple(moves), env.reward, tuple(steps))


def replay(env_class: type[BoardEnv], moves: Sequence[int]) -> list[BoardEnv]:
    """The position before each move of `moves`, then the final one (uncounted)."""
    env = env_class()
    positions = [copy.deepcopy(env)]
    for action in moves:
        env._play(action)
        positions.append(copy.deepcopy(env))
    return positions


def off_reference_moves(
    env_class: type[BoardEnv], record: GameRecord, side: str, depth: int | None = None
) -> list[tuple[int, int, frozenset[int]]]:
    """The moves `side` ("first" or "second") played that the reference would not:
    `(ply, action, the actions the reference allows)`, for the `games` check at Connect
    Four (every move must have the reference's value)."""
    index = _side_index(side)
    positions = replay(env_class, record.moves)
    found = []
    for ply, action in enumerate(record.moves):
        if ply % 2 == index:
            allowed = optimal_actions(positions[ply], depth)
            if action not in allowed:
                found.append((ply, action, allowed))
    return found


@dataclass
class Counts:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0  # losses by forfeit (also counted in `losses`)

    def add(self, outcome: int, forfeit: bool = False) -> None:
        if outcome > 0:
            self.wins += 1
        elif outcome < 0:
            self.losses += 1
            self.forfeits += forfeit
        else:
            self.draws += 1


@dataclass(frozen=True)
class MatchResult:
    """Games of `agent` against `opponent`; `sides[i]` is the agent's side in game `i`."""

    agent: str
    opponent: str
    games: tuple[GameRecord, ...]
    sides: tuple[str, ...]

    def outcomes(self) -> list[int]:
        """Each game's result for the agent (the chapter's `results` list)."""
        return [game.result if side == "first" else -game.result for game, side in zip(self.games, self.sides)]

    def counts(self) -> dict[str, Counts]:
        table = {"first": Counts(), "second": Counts()}
        for outcome, game, side in zip(self.outcomes(), self.games, self.sides):
            forfeited = game.forfeit is not None and outcome < 0
            table[side].add(outcome, forfeited)
        return table


def play_match(
    env_class: type[BoardEnv],
    agent: Agent,
    opponent: Agent,
    games: int = 10,
    seed: int | str = 0,
    names: tuple[str, str] = ("agent", "opponent"),
) -> MatchResult:
    """`games` games, `agent` first in the even ones (the chapter's loop); game `i` is
    seeded `f"{seed}:{i}"`."""
    records, sides = [], []
    for i in range(games):
        if i % 2 == 0:
            records.append(play_game(env_class, agent, opponent, f"{seed}:{i}"))
            sides.append("first")
        else:
            records.append(play_game(env_class, opponent, agent, f"{seed}:{i}"))
            sides.append("second")
    return MatchResult(names[0], names[1], tuple(records), tuple(sides))


@dataclass(frozen=True)
class ResultTable:
    """Win/draw/loss of one agent per opponent and side."""

    agent: str
    matches: tuple[MatchResult, ...] = field(repr=False)

    def rows(self) -> list[tuple[str, str, Counts]]:
        return [(match.opponent, side, counts) for match in self.matches for side, counts in match.counts().items()]

    def losses(self) -> int:
        return sum(counts.losses for _, _, counts in self.rows())

    def format(self) -> str:
        width = max([len("opponent")] + [len(match.opponent) for match in self.matches])
        lines = [f"{self.agent}: {'opponent':<{width}}  side     win  draw  loss"]
        for opponent, side, counts in self.rows():
            forfeits = f"  ({counts.forfeits} by forfeit)" if counts.forfeits else ""
            lines.append(
                f"{' ' * len(self.agent)}  {opponent:<{width}}  {side:<6}  {counts.wins:4d}  "
                f"{counts.draws:4d}  {counts.losses:4d}{forfeits}"
            )
        return "\n".join(lines)


def tournament(
    env_class: type[BoardEnv],
    agent: Agent,
    opponents: dict[str, Agent],
    games: int = 10,
    seed: int | str = 0,
    name: str = "agent",
) -> ResultTable:
    """A match of `games` games against each opponent (seeded `f"{seed}/{opponent name}"`)."""
    matches = tuple(
        play_match(env_class, agent, opponent, games, f"{seed}/{label}", (name, label))
        for label, opponent in opponents.items()
    )
    return ResultTable(name, matches)


def _side_index(side: str) -> int:
    if side not in ("first", "second"):
        raise ValueError(f"side must be 'first' or 'second', not {side!r}")
    return 0 if side == "first" else 1

"""The `games` check: matches the grader plays through the environments between the
student's agent and one of the reference's opponents.

The opponent's moves are computed here, in the grader (the reference's agents are the
lab's solution and never enter the student's process). Each move of the student's agent
is one request: the position as its moves, and a seed for the `random` module, drawn from
the agent's own generator, so a match replays identically for a given seed whatever the
student's agent draws. The chapter's loop: game `i` has the student's agent first when `i`
is even. An agent that raises or answers with a move not in `validinputs` forfeits the
game (its loss); a process that dies or hangs ends the match (the pipeline reports it).
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field

from reference.agent_tournaments import (
    GameRecord,
    MatchResult,
    ResultTable,
    replay,
)
from reference.agents import payoff
from reference.envs import BoardEnv

from ...checks import Verdict
from ...checks.show import describe_error, show
from ...sandbox.channel import WorkerFailure
from ..kit import Ask, Judgement
from .cases import AGENT, GAMES, Match, Position, opponent_agent, opponent_name
from .picture import move_details, position_details

STUDENT = "your agent"


@dataclass
class MatchPlay:
    """A match between the student's agent (through `ask`) and the reference's opponent,
    filled in by `play` for the judge to read."""

    match: Match
    case_id: str
    games: list[GameRecord] = field(default_factory=list)
    sides: list[str] = field(default_factory=list)

    def play(self, ask: Ask) -> list[dict] | WorkerFailure:
        observed: list[dict] = []
        for i in range(self.match.games):
            side = "first" if i % 2 == 0 else "second"
            record = self._game(ask, f"{self.match.seed}:{i}", 0 if side == "first" else 1, observed, i)
            if isinstance(record, WorkerFailure):
                return record
            self.games.append(record)
            self.sides.append(side)
        return observed

    def _game(self, ask: Ask, seed: str, mine: int, observed: list[dict], number: int) -> GameRecord | WorkerFailure:
        """One game, as `reference.agent_tournaments.play_game` plays it, the student's side
        asked through the channel."""
        env_class = GAMES[self.match.game]
        env = env_class()
        rngs = (random.Random(f"{seed}/first"), random.Random(f"{seed}/second"))
        opponent = opponent_agent(self.match)
        moves: list[int] = []
        while not env.done:
            side = 0 if env.turn == env.players[0] else 1
            if side != mine:
                action = opponent(copy.deepcopy(env), rngs[side])
                env._play(action)
                moves.append(action)
                continue
            args = [] if self.match.depth is None else [self.match.depth]
            request = {
                "id": f"{self.case_id}/game {number + 1}/move {len(moves) + 1}",
                "game": self.match.game,
                "moves": list(moves),
                "calls": [{"function": AGENT[self.match.game], "args": args, "seed": rngs[side].getrandbits(32)}],
            }
            reply = ask(request)
            if isinstance(reply, WorkerFailure):
                return reply
            call = reply[0] if reply else {"error": {"type": "NoAnswer", "message": "no answer"}}
            observed.append({**call, "game": number, "ply": len(moves)})
            forfeit = _forfeit(call, env.validinputs)
            if forfeit:
                return GameRecord(tuple(moves), 1 if side else -1, (), (len(moves), forfeit))
            action = int(call["returned"])  # type: ignore[arg-type]  # _forfeit: an int in validinputs
            env._play(action)
            moves.append(action)
        return GameRecord(tuple(moves), env.reward, ())

    def result(self) -> MatchResult:
        return MatchResult(STUDENT, opponent_name(self.match), tuple(self.games), tuple(self.sides))


def _forfeit(call: dict, valid: list[int]) -> str | None:
    if call.get("error"):
        return f"it raised {describe_error(call['error'])}"
    returned = call.get("returned")
    if isinstance(returned, bool) or not isinstance(returned, int) or returned not in valid:
        return f"it returned {show(returned)}, not one of validinputs {valid}"
    return None


def move_payoffs(env: BoardEnv, depth: int | None) -> dict[int, int]:
    """Each legal move's payoff at `depth`, as the chapter's top level rates it, from the
    reference's pruned search with the sentinel bounds (exact there: the window (-2, 2)
    holds every payoff), about twice as fast here as the exhaustive solver."""
    out = {}
    for move in env.validinputs:
        child = copy.deepcopy(env)
        child._play(move)
        out[move] = (1 if child.reward else 0) if child.done else -payoff(child, child.reward, False, -2, -2, depth)
    return out


def off_value_moves(record: GameRecord, side: str, depth: int | None) -> list[tuple[int, int, int, int, list[int]]]:
    """The moves of `side` whose payoff at `depth` is below the best: `(ply, action, its
    payoff, the best, the moves worth the best)`. Any move of the best payoff has the
    reference's value, an immediate win or a later one."""
    index = 0 if side == "first" else 1
    positions = replay(GAMES["conn"], record.moves)
    found = []
    for ply, action in enumerate(record.moves):
        if ply % 2 == index:
            payoffs = move_payoffs(positions[ply], depth)
            best = max(payoffs.values())
            if payoffs[action] != best:
                found.append((ply, action, payoffs[action], best, [m for m, v in payoffs.items() if v == best]))
    return found


def judge_match(observed: list[dict], play: MatchPlay) -> Judgement:
    return Judgement({"games": match_verdict(play)})


def match_verdict(play: MatchPlay) -> Verdict:
    """tic-tac-toe: no game lost; Connect Four: every move of the student's agent has the
    reference's value at the match's depth. Forfeits fail both."""
    match, result = play.match, play.result()
    table = ResultTable(STUDENT, (result,)).format()
    problems: list[str] = []
    pictures: list[dict] = []  # the first problem is drawn in the report
    for number, (record, side) in enumerate(zip(result.games, result.sides), start=1):
        where = f"game {number} (you moved {side})"
        if record.forfeit is not None:
            ply, reason = record.forfeit
            problems.append(f"{where}: your agent forfeited at move {ply + 1} after {list(record.moves)}: {reason}")
            pictures.append(position_details(Position(match.game, tuple(record.moves), match.depth)))
            continue
        outcome = record.result if side == "first" else -record.result
        if match.game == "ttt" and outcome < 0:
            problems.append(f"{where}: lost, moves {list(record.moves)}")
            pictures.append(position_details(Position(match.game, tuple(record.moves))))
        if match.game == "conn":
            for ply, action, worth, best, allowed in off_value_moves(record, side, match.depth):
                problems.append(
                    f"{where}, move {ply + 1}: you played column {action}, worth {worth} at depth {match.depth}, "
                    f"after {list(record.moves[:ply])}; the reference's moves are worth {best}: {allowed}"
                )
                before = Position(match.game, tuple(record.moves[:ply]), match.depth)
                pictures.append(move_details(before, action, allowed, f"{where}, move {ply + 1}."))
                break
    rule = (
        "no game may be lost"
        if match.game == "ttt"
        else f"every move must have the reference's value at depth {match.depth}"
    )
    if not problems:
        return Verdict.ok(f"{match.label()}: {rule}, and none was.\n{table}")
    shown = "\n".join(problems[:3]) + (f"\n... and {len(problems) - 3} more" if len(problems) > 3 else "")
    return Verdict.fail(f"{match.label()}: {rule}.\n{shown}\n{table}").with_details(pictures[0] if pictures else None)

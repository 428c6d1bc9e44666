"""Why a tic-tac-toe search failed: errors explained, the skeleton's placeholders, game_over hints,
and the classic bugs (reference/tictactoe_bugs.py) that reproduce what a search did."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from typing import Any

from reference.tictactoe_bugs import LAB_RULES, STRICT_RULES, Rules, Watch, bug_game_over, bugs_for, watched_replay

from ...checks.show import describe_error, is_number, show
from ..kit.observations import answer_at
from .boards import MARK
from .cases import BoardCall, BoardRequest


@cache
def skeleton_placeholders() -> dict[str, str]:
    """name -> what belongs there, read from the skeleton's `name = None  # complete: ...` lines
    (imported late: the skeleton generator pulls in nbformat, which only errors need)."""
    from ...exercises import exercise_text

    found = re.findall(r"^\s*(\w+) = None\s*# complete: (.+)$", exercise_text("tictactoe"), re.MULTILINE)
    return dict(found)


_NOT_SUPPORTED = re.compile(r"'(\S+)' not supported between instances of '(\w+)' and '(\w+)'")


_OPERAND_TYPES = re.compile(r"unsupported operand type\(s\) for (\S+): '(\w+)' and '(\w+)'")


_NOT_DEFINED = re.compile(r"name '(\w+)' is not defined|local variable '(\w+)'")


MINIMAX_HOW = (
    "initialise infinite_number = 100000, alpha = -infinite_number and beta = infinite_number, "
    "then `choice, score, nodes_visited = maximize(matrix, player, player, 0, alpha, beta, 0)`"
)


def raised(observation: BoardCall, call: str) -> str:
    return f"{call} raised {error_text(observation)}"


def error_text(observation: BoardCall) -> str:
    """The exception, its innermost frames, and (when it is one) the skeleton line to blame."""
    error = observation["error"] if isinstance(observation["error"], dict) else {"message": show(observation["error"])}
    frames = error.get("frames") or []
    text = describe_error({**error, "frames": frames[-3:]})
    if len(frames) > 3:
        text = text.replace("\n", f"\n    ({len(frames) - 3} outer calls left out)\n", 1)
    hint = error_hint(error, observation.get("none_assignments") or [])
    return text + (f"\n{hint}" if hint else "")


def error_hint(error: dict, assignments: list[list]) -> str:
    message = str(error.get("message", ""))
    frames = error.get("frames") or []
    last = frames[-1] if frames else None
    if error.get("type") == "TypeError" and "unpack" in message and "NoneType" in message:
        return (
            "A search returned None instead of three values: every path of maximize and minimize "
            "must end in `return choice, utility, nodes_visited`."
        )
    if error.get("type") == "TypeError" and "NoneType" in message:
        names = _none_operands(message, last[3] if last else "")
        placeholders = skeleton_placeholders()
        blamed = [a for a in assignments if _assigned(a) in names and _assigned(a) in placeholders]
        if blamed:
            return "\n".join(
                f"line {line} of {file}: `{_code(text)}` is the skeleton's placeholder: "
                f"{placeholders[_assigned([file, line, function, text])]}."
                for file, line, function, text in blamed
            )
        where = f" (`{last[3]}`)" if last else ""
        return f"A variable in that line{where} still holds None: give it a number before it is compared or added."
    if error.get("type") in ("NameError", "UnboundLocalError") and last and last[2] == "minimax":
        match = _NOT_DEFINED.search(message)
        name = next((g for g in match.groups() if g), "a name") if match else "a name"
        return (
            f"line {last[1]} of {last[0]}: minimax uses `{name}` before anything assigns it, as the skeleton "
            f"leaves it: {MINIMAX_HOW}."
        )
    return ""


def _none_operands(message: str, line: str) -> set[str]:
    """The names in `line` that were None in the failed operation."""
    match = _NOT_SUPPORTED.search(message) or _OPERAND_TYPES.search(message)
    names = set(re.findall(r"[A-Za-z_]\w*", line))
    if not match:
        return names
    operator, left, right = match.groups()
    operation = re.search(rf"([A-Za-z_]\w*)\s*{re.escape(operator)}\s*([A-Za-z_]\w*)", line)
    if not operation:
        return names
    return {name for name, kind in zip(operation.groups(), (left, right)) if kind == "NoneType"}


def _assigned(assignment: list) -> str:
    return str(assignment[3]).split("=", 1)[0].strip()


def _code(text: str) -> str:
    """A line of code without its comment."""
    return text.split("#", 1)[0].strip()


def game_state(board: str, truth: tuple[bool, int]) -> str:
    finished, status = truth
    if status:
        return f"{MARK[status]} has three in a row"
    if finished:
        return "no cell is empty and nobody has three in a row: a draw"
    return "nobody has three in a row and a cell is still empty: the game goes on"


def game_over_hints(failures: list) -> list[str]:
    hints = []
    missed_wins = any(t[1] != 0 and p is not None and not p[0] for _, t, p, _ in failures)
    missed_draws = any(t == (True, 0) and p is not None and not p[0] for _, t, p, _ in failures)
    early = any(not t[0] and p is not None and p[0] for _, t, p, _ in failures)
    status = any(p is not None and p[1] != t[1] for _, t, p, _ in failures)
    if missed_wins:
        hints.append(
            "When game_status(matrix) is not 0, someone has three in a row: set game_finished = True "
            "(where the skeleton says #Write code here)."
        )
    if missed_draws:
        hints.append(
            "A full board ends the game too, even without three in a row: when no cell is empty "
            "(abs(matrix).sum() == 9), set game_finished = True (where the skeleton says #Write code here)."
        )
    if early:
        hints.append("A game is over only when someone has three in a row or no cell is empty.")
    if status:
        hints.append("status must be game_status(matrix): 1 if 'o' has three in a row, -1 if 'x' has, else 0.")
    if any(p is None and not c.startswith("game_over(board) raised") for _, _, p, c in failures):
        hints.append("game_over must return a pair: (game_finished, status).")
    return hints


# --- classic bugs: replays of the lab's search with one thing done wrong ------------------


def _observed_search(observation: BoardCall) -> tuple[Watch, Any, Any, Any] | None:
    """The boards a search expanded and the (choice, points, nodes) it returned; None when
    the call raised or returned no triple."""
    if observation.get("error") or "points" not in observation:
        return None
    seen = observation.get("expanded")
    seen = [s for s in seen if isinstance(s, str)] if isinstance(seen, list) else []
    total = observation.get("expansions")
    total = total if isinstance(total, int) and not isinstance(total, bool) else len(seen)
    return Watch(seen, total), observation.get("choice"), observation.get("points"), observation.get("nodes")


def replayed_bugs(
    call: BoardRequest, observation: BoardCall, *, by_value: bool = True, strict: bool = False
) -> frozenset[str]:
    """Classic bugs whose `call` (a request's call: function, board, args) expands the boards
    the student's search expanded and counts the same nodes_visited; `by_value`, also returns
    the same choice and utility (asked at minimax's full window only: on a narrowed window a
    fail-hard search, an accepted variant, returns other values than a fail-soft replay).
    Under the course's `>=` a fail-hard search expands the same boards as the fail-soft
    one; under a strict cut-off (`strict`) it expands more (a child's clamped answer equals
    the bound, which `>` does not cut on), so there every bug is replayed in both forms
    (reference/tictactoe_bugs.py, `bugs_for`). A call that raised or returned no triple is
    no replay's: none of them raises."""
    seen = _observed_search(observation)
    if seen is None:
        return frozenset()
    found = set()
    for bug in bugs_for(strict):
        if any(_reproduces(rules, call, seen, by_value) for rules in bug.variants):
            found.add(bug.name)
    return frozenset(found)


def _reproduces(rules: Rules, call: BoardRequest, seen: tuple, by_value: bool) -> bool:
    """Whether the search under `rules` expands what the student's did (and counts the
    same nodes; `by_value`: returns the same choice and utility too)."""
    watch, choice, points, nodes = seen
    replay = watched_replay(rules, call["function"], call["board"], call["args"], watch)
    if replay is None or not _same_number(replay.nodes_visited, nodes):
        return False
    return not by_value or (_same_number(replay.points, points) and replay.choice == choice)


def bugs_behind_calls(
    calls: list[BoardRequest], observed: list[BoardCall], *, by_value: bool = False, strict: bool = False
) -> frozenset[str] | None:
    """Classic bugs that reproduce every call of a request (see replayed_bugs); a call that
    never answered is no replay's. None (these calls say nothing about a bug) when the
    course's own search reproduces them too with `by_value` off: the reads then explain
    nothing (a fail-soft search in a fail-hard course reads as the course's search does,
    and so does a bug that differs only in which tied move it keeps; under a strict cut-off
    the course's fail-hard search reads otherwise than its fail-soft one, and either is the
    course's)."""
    if not by_value and any(_course_reads_alike(calls, observed, course) for course in _courses(strict)):
        return None
    consistent = frozenset(bug.name for bug in bugs_for(strict))
    for index, call in enumerate(calls):
        consistent &= replayed_bugs(call, answer_at(observed, index), by_value=by_value, strict=strict)
        if not consistent:
            break  # nothing left to rule out
    return consistent


def _courses(strict: bool) -> tuple[Rules, ...]:
    """The course's own search in each accepted form whose reads differ: under `>=` the
    fail-hard form expands what the fail-soft one does, under a strict cut-off more."""
    return (STRICT_RULES, replace(STRICT_RULES, fail_hard=True)) if strict else (LAB_RULES,)


def _course_reads_alike(calls: list[BoardRequest], observed: list[BoardCall], course: Rules) -> bool:
    for index, call in enumerate(calls):
        seen = _observed_search(answer_at(observed, index))
        if seen is None or not _reproduces(course, call, seen, by_value=False):
            return False
    return True


def game_over_bugs(boards: list[str], observed: list[BoardCall], pair: Any, strict: bool = False) -> frozenset[str]:
    """Classic bugs whose game_over returns what the student's did on every board; `pair`
    reads (finished, status) from an observation's `returned` (None: not such a pair, which
    no replay returns)."""
    got = []
    for index in range(len(boards)):
        observation = answer_at(observed, index)
        got.append(None if observation.get("error") else pair(observation.get("returned")))
    return frozenset(
        bug.name
        for bug in bugs_for(strict)
        if any(all(bug_game_over(rules, b) == g for b, g in zip(boards, got)) for rules in bug.variants)
    )


def _same_number(mine: int, theirs: Any) -> bool:
    return is_number(theirs) and mine == theirs

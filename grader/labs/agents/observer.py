"""Observer of the `agents` lab: rebuilds each position from its moves with the shipped
environments (`_abgrade_agents_envs`, a fresh copy out of the notebook cells' reach), calls
the student's function on it and reports what came back and how many `step` calls the
environment and its deep copies made. It never judges.

A request: {"id", "game": "ttt" | "conn", "moves": [...], "calls": [{"function", "args",
"seed", "moves"?}]}; each call gets its own freshly built environment as its first argument
(at the call's own `moves` when it names them, else the request's), then `args`. `seed` seeds the `random` module for the call (the chapter's agents choose with
`random.choice`), so a grading replays identically; the module's state is restored after.
"""

import random

import _abgrade_agents_envs as envs
from _abgrade_runtime import call_observed

GAMES = {"ttt": envs.TicTacToeEnv, "conn": envs.ConnectFourEnv}


def _snapshot(env):
    return (env.state.tobytes(), env.turn, list(env.validinputs), env.done, env.reward)


def observe(namespace, game, moves, call):
    function = namespace.get(call["function"])
    counter = envs.StepCounter()
    env = GAMES[game].from_moves(moves, counter=counter)
    before = _snapshot(env)
    saved = random.getstate()
    random.seed(call.get("seed", 0))
    try:
        returned, error, seconds = call_observed(function, (env, *call.get("args", ())))
    finally:
        random.setstate(saved)
    try:
        changed = _snapshot(env) != before
    except BaseException:  # noqa: BLE001 - the student may have broken the environment
        changed = True
    return {"returned": returned, "error": error, "seconds": seconds, "steps": counter.count, "changed": changed}


def handle(namespace, request):
    observations = []
    for call in request["calls"]:
        seen = observe(namespace, request["game"], call.get("moves", request["moves"]), call)
        observations.append(seen)
        error = seen["error"]
        if error and (error["exit"] or error["memory"]):
            break
    return {"op": "case", "id": request["id"], "calls": observations}

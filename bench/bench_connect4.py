"""Grading one `.py` submission of the connect4 lab against specs/connect4.yaml, end to end
(`abgrade grade`, a fresh process each time), against a bare `python -c` that imports the
same submission, gives it the game (reference/games/connect4.py) and makes the same calls
(same positions, limits, windows, time limits, warm and cold caches, the random positions
of the same seed) with nothing watched or judged. Rounds alternate the two, so that load on
the machine hits both alike; min / median / max over the rounds.
Goals: under 20 s, at most 1.3x the bare run.

    python bench/bench_connect4.py [--rounds 5] [SUBMISSION]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from rounds import interleave, ratios, run, spread, timer  # bench/rounds.py, next to this script

from grader.labs import get_lab
from grader.spec import load_spec, spec_path

PROJECT = Path(__file__).resolve().parent.parent
SEED = 1

# The bare run: argv[1] = the calls as JSON, argv[2] = the submission, argv[3] = the game.
BARE = """
import importlib.util, json, sys
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
requests = json.load(open(sys.argv[1]))
student = load("submission", sys.argv[2])
game = load("game", sys.argv[3])
ns = student.__dict__
for request in requests:
    test_state = game.decode(request["test_state"])
    for call in request["calls"]:
        if not call.get("warm"):
            ns["gCache"] = {}
        ns.update(gPlayers=list(game.gPlayers), gStart=game.gStart, next_states=game.next_states,
                  finished=game.finished, utility=game.utility, heuristic=game.heuristic, gTestState=test_state)
        State = game.decode(call["state"])
        name = call["function"]
        if name == "evaluate":
            args = (State, call["limit"], ns[call["f"]], *call.get("window", ()))
        elif name in ("maxValue", "minValue"):
            args = (State, call["limit"], *call.get("window", ()))
        elif name == "pd_evaluate":
            args = (State, call["time_limit"], ns[call["f"]])
        else:
            args = (State, call["time_limit"])
        ns[name](*args)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("submission", nargs="?", default=str(PROJECT / "reference" / "solutions" / "connect4.py"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    plans = get_lab("connect4").plans(load_spec(spec_path("connect4")), SEED)
    requests = [plan.request for plan in plans]
    calls = sum(len(r["calls"]) for r in requests)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(requests, handle)
    game = str(PROJECT / "reference" / "games" / "connect4.py")
    bare_command = [sys.executable, "-B", "-c", BARE, handle.name, args.submission, game]
    grade_command = [sys.executable, "-m", "grader", "grade", args.submission, "--lab", "connect4",
                     "--seed", str(SEED), "--quiet"]  # fmt: skip
    score = run(grade_command)[1]  # and warm-up (file caches)
    times = interleave({"bare": timer(bare_command), "graded": timer(grade_command)}, args.rounds, warm_up=False)
    bare, graded = times["bare"], times["graded"]
    Path(handle.name).unlink()
    per_round = ratios(graded, bare)
    print(f"connect4 lab, {len(requests)} requests, {calls} calls, {args.rounds} interleaved rounds; score {score}")
    print(f"                   {'min':>6} {'median':>6} {'max':>6}")
    print(f"  bare python -c   {spread(bare)}")
    print(f"  abgrade grade    {spread(graded)}   (goal: < 20 s)")
    print(f"  ratio per round  {spread(per_round, 'x')}   (goal: <= 1.3x)")


if __name__ == "__main__":
    main()

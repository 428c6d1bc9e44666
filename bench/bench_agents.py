"""Grading one `.py` submission of the agents lab against specs/agents.yaml, end to end
(`abgrade grade`, a fresh process each time, matches included), against a bare `python -c`
that imports the same submission and makes the same calls and plays the same games (the
same positions, windows, seeds and opponents; the random positions and matches of the
same seed), with nothing sandboxed, sent over a channel or judged. Rounds are interleaved
(bare, graded, bare, graded, ...) so that load on the machine hits both alike; min,
median and max of the wall times are reported. Goals: under 30 s, at most 1.3x.

    python bench/bench_agents.py [--runs 5] [SUBMISSION]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

from rounds import interleave, ratios, run, spread, timer  # bench/rounds.py, next to this script

from grader.labs import get_lab
from grader.spec import load_spec, spec_path

PROJECT = Path(__file__).resolve().parent.parent
SEED = 1

# The bare run: argv[1] = the submission, argv[2] = the requests and matches of the grader's
# plans (fixed and random cases of SEED) as JSON, computed beforehand (the expectations of
# random positions are the grader's work, not the bare run's). Every call on a fresh
# environment built from the moves; matches played by the lab's own game loop (the
# opponent's moves computed in the process, as the grader does) with the student's agent
# called directly instead of asked.
BARE = """
import importlib.util, json, random, sys, types
from reference.envs import conn, ttt
sys.modules["utils"] = types.ModuleType("utils")
for name in ("ttt_simple_env", "conn_env"):
    module = types.ModuleType("utils." + name)
    module.ttt, module.conn = ttt, conn
    sys.modules["utils." + name] = module
spec = importlib.util.spec_from_file_location("submission", sys.argv[1])
student = importlib.util.module_from_spec(spec)
spec.loader.exec_module(student)
from grader.labs.agents.cases import Match
from grader.labs.agents.tournaments import MatchPlay
GAMES = {"ttt": ttt, "conn": conn}

def ask(request):
    out = []
    for call in request["calls"]:
        env = GAMES[request["game"]].from_moves(request["moves"])
        random.seed(call.get("seed", 0))
        out.append({"returned": getattr(student, call["function"])(env, *call["args"]), "steps": env.steps})
    return out

work = json.load(open(sys.argv[2]))
for request in work["requests"]:
    ask(request)
for match in work["matches"]:
    MatchPlay(Match(**match), "bench").play(ask)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("submission", nargs="?", default=str(PROJECT / "reference" / "solutions" / "agents.py"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    plans = get_lab("agents").plans(load_spec(spec_path("agents")), SEED)
    work = {
        "requests": [plan.request for plan in plans if plan.play is None],
        "matches": [dataclasses.asdict(plan.play.__self__.match) for plan in plans if plan.play is not None],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(work, handle)
    bare_command = [sys.executable, "-B", "-c", BARE, args.submission, handle.name]
    graded_command = [
        sys.executable,
        "-m",
        "grader",
        "grade",
        args.submission,
        "--lab",
        "agents",
        "--seed",
        str(SEED),
        "--quiet",
    ]
    score = run(graded_command)[1]
    times = interleave({"bare": timer(bare_command), "graded": timer(graded_command)}, args.runs, warm_up=False)
    bare, graded = times["bare"], times["graded"]
    Path(handle.name).unlink()
    per_round = ratios(graded, bare)
    calls = sum(len(request["calls"]) for request in work["requests"])
    games = sum(match["games"] for match in work["matches"])
    print(
        f"agents lab: {len(work['requests'])} requests ({calls} calls) and {len(work['matches'])} matches "
        f"({games} games), {args.runs} interleaved rounds; score {score}"
    )
    print(f"                        {'min':>7} {'median':>7} {'max':>7}")
    print(f"  bare python -c (s)    {spread(bare)}")
    print(f"  abgrade grade (s)     {spread(graded)}   (goal: < 30 s)")
    print(f"  ratio per round       {spread(per_round)}   (goal: <= 1.3x)")


if __name__ == "__main__":
    main()

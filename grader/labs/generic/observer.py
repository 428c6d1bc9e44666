"""Observer of a lab folder's game (grader/labs/generic), in the student's process.

The game module arrives as an extra module under the name the student imports it by
(`_abgrade_generic_lab.GAME`), the watching code as `_abgrade_generic_watch`. Both are
installed before the submission loads, so the game's watched functions are wrapped before
any `from game import ...` of the student runs. For every call of a request the game is
put back as shipped and set up for the case, handed to the student's module, the state
argument decoded from JSON, the student's function called once, and what it returned sent
back with the labels of the states it read. States cross the pipe only as labels.
"""

import sys

import _abgrade_generic_watch as watching
from _abgrade_generic_lab import GAME
from _abgrade_runtime import _dumps, call_observed, error_record, student_namespaces

WATCH = watching.Watch(sys.modules[GAME], _dumps)
NOTHING_READ = {"reads": [], "counts": {}, "truncated": False}


def observe(namespace, spaces, world, call):
    """One call of the student's function, on a game set up afresh and handed to each of
    the student's namespaces (runtime.student_namespaces)."""
    try:
        WATCH.begin(world)
        for space in spaces:
            WATCH.install(space)
        decode = call.get("decode", [])
        args = tuple(WATCH.decode(arg) if index in decode else arg for index, arg in enumerate(call["args"]))
    except BaseException as exc:  # noqa: BLE001 - the student may have broken what the game uses
        return dict(NOTHING_READ, returned=None, error=error_record(exc), seconds=0.0)
    function = namespace.get(call["function"])
    WATCH.start()
    try:
        returned, error, seconds = call_observed(function, args)
    finally:
        reads = WATCH.stop()
    return dict(reads, returned=returned, error=error, seconds=seconds)


def handle(namespace, request):
    """Run the calls of one case."""
    spaces = student_namespaces(namespace)
    observations = []
    for call in request["calls"]:
        observation = observe(namespace, spaces, request.get("world"), call)
        observations.append(observation)
        error = observation["error"]
        if error and (error["exit"] or error["memory"]):
            break
    return {"op": "case", "id": request["id"], "calls": observations}

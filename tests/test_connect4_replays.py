"""The connect4 lab's classic-bug replays (grader/labs/connect4/hints.py, replay) are
remembered per (variant, calls) in the grader process and are the same as replaying afresh:
every grading of one spec and seed matches its cases against every classic bug."""

from grader.labs.connect4 import hints
from grader.labs.connect4.cases import state_of
from grader.labs.connect4.plans import evaluate_call, warm_calls
from reference.connect4_search import BUGS, Variant

STATE = state_of("4433")


def test_a_remembered_replay_is_the_fresh_one_and_is_reused():
    calls = [evaluate_call(STATE, 3), *warm_calls(STATE, 3)]
    before = hints._replay.cache_info()
    first = hints.replay(Variant(), calls)
    again = hints.replay(Variant(), [dict(call) for call in calls])  # equal calls, other objects
    after = hints._replay.cache_info()
    assert again == first and after.hits == before.hits + 1
    hints._replay.cache_clear()
    assert hints.replay(Variant(), calls) == first  # worked out afresh: the same values and counts
    assert [count for _, count in first][0] > 0
    assert hints.replay(BUGS["no_ordering"][0], calls) != first  # the variant is part of the key
    assert hints.replay(Variant(), calls[:1]) == first[:1]  # and so are the calls

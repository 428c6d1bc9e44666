"""A feedback page's pictures are drawn once per lab and details (report/drawings.py)."""

from grader.report.drawings import Drawings


def counting_picture(drawn: list[dict]):
    def picture(details):
        drawn.append(dict(details))
        return f"<svg>{len(drawn)}</svg>"

    return picture


def test_the_same_details_are_drawn_once_and_others_apart():
    drawn: list[dict] = []
    picture, memo = counting_picture(drawn), Drawings(kept=2)
    first = memo.draw("tree", picture, {"view": "tree", "reads": ["a", "b"]})
    again = memo.draw("tree", picture, {"reads": ["a", "b"], "view": "tree"})  # key order does not matter
    other = memo.draw("tree", picture, {"view": "tree", "reads": ["a"]})
    other_lab = memo.draw("tictactoe", picture, {"view": "tree", "reads": ["a"]})
    assert first == again != other != other_lab
    assert len(drawn) == 3


def test_it_keeps_a_bounded_number_and_draws_what_it_cannot_key_every_time():
    drawn: list[dict] = []
    picture, memo = counting_picture(drawn), Drawings(kept=2)
    for value in range(5):
        memo.draw("tree", picture, {"value": value})
    assert len(memo) == 2
    memo.draw("tree", picture, {"value": 0})  # dropped: drawn again
    assert len(drawn) == 6
    odd = {"value": {1, 2}}  # a set: no canonical JSON
    memo.draw("tree", picture, odd)
    memo.draw("tree", picture, odd)
    assert len(drawn) == 8
    mixed = {1: "a", "b": 2}  # keys that can't be sorted
    memo.draw("tree", picture, mixed)
    assert len(drawn) == 9

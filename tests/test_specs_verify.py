"""`abgrade specs verify` on everything installed: every reference on every case. A file of
its own (it was test_cli.py's): the suite's longest single command, a few minutes on a busy
machine, so with whole files per worker it runs beside the rest of test_cli.py, not after it."""

from __future__ import annotations

import pytest

from .test_cli import abgrade


@pytest.mark.slow
def test_specs_verify_exits_0():
    """A plain `abgrade specs verify` verifies every installed lab's spec and the shipped
    examples, the course conventions' strict ones too (tests/test_conventions.py's; run
    once, here), and so is the one test that the agents and connect4 labs' stored
    expectations are their references'. It runs every reference on every case: 423 s at a
    load average of 20 to 30 on 2 cores (its old limit, 600 s, held by little), so a wide
    margin."""
    run = abgrade("specs", "verify", timeout=1200)
    assert run.returncode == 0, run.stdout + run.stderr
    for lab in ("tree", "tictactoe", "negamax", "connect4", "agents"):
        assert f"specs/{lab}.yaml: ok" in run.stdout
    assert "specs/examples/tree-strict.yaml: ok (5 fixed cases)" in run.stdout
    for lab in ("tictactoe", "agents", "negamax"):
        assert f"specs/examples/{lab}-strict.yaml: ok" in run.stdout

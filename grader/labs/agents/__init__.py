"""The `agents` lab (seed 003, the book chapter): alpha-beta agents on gym-like
tic-tac-toe and Connect Four environments, `maximized_payoff_ttt` / `minimax_ttt` and
`max_payoff_conn` / `minimax_conn` (DESIGN.md). The grader injects the environments into
the student's process under the chapter's module names, counts `step` calls on every deep
copy, and judges payoffs, counts, bounds, choices, tournaments and the speed-up of pruning
against the reference (`reference.agents`, `reference.agent_tournaments`)."""

from .adapter import AgentsLab

__all__ = ["AgentsLab"]

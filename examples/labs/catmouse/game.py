"""Cat and mouse: a mouse (agent 0, MAX) and two cats (agents 1 and 2, MIN) on a small
maze. In each ply the mouse moves, then cat 1, then cat 2. The mouse eats the cheese it
steps on (+10) and pays 1 for every turn; it wins when the cheese is gone (+100) and loses
when a cat reaches it (-100).

The student's code works on `Board` objects: `board.legal_moves(agent)` (in the order
N, E, S, W, and "stay" for the mouse), `board.after(agent, move)` (the board after that
agent's move: a *generated* state), `board.is_over()` and `board.evaluate()` (the score,
and how close the nearest cheese and cat are). The grader watches `after` (the boards it
returns) and `evaluate` (the boards valued); every call counts.
"""

STUDENT_API = {
    "value": "value(board, agent, depth, alpha, beta)",
    "choose_move": "choose_move(board, depth)",
}
SEARCH = "value"
CHOOSE = "choose_move"
STATE = "board"
WATCH = {"Board.after": "result", "Board.evaluate": "state"}
REPEATS = True
MODULE = "catmouse"

AGENTS = 3  # the mouse, cat 1, cat 2
MOVES = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1), "stay": (0, 0)}
CHEESE, TURN, WIN, CAUGHT = 10, -1, 100, -100

maze = ("#####", "#...#", "#####")  # the walls ('#'), set per case by setup()


def setup(maze):
    """A case's maze: rows of '#' (wall) and '.' (floor)."""
    if not isinstance(maze, list) or not maze or any(not isinstance(row, str) or set(row) - {"#", "."} for row in maze):
        raise ValueError("a maze is a list of rows of '#' and '.'")
    globals()["maze"] = tuple(maze)


def is_floor(cell):
    row, column = cell
    return 0 <= row < len(maze) and 0 <= column < len(maze[row]) and maze[row][column] == "."


def distance(a, b):
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


class Board:
    """A position: where the mouse and the cats are, the cheese left, the score, and how
    the game ended ("" while it goes on, "won" or "caught")."""

    __slots__ = ("mouse", "cats", "cheese", "score", "outcome")

    def __init__(self, mouse, cats, cheese, score=0, outcome=""):
        self.mouse, self.cats, self.cheese = tuple(mouse), tuple(tuple(cat) for cat in cats), frozenset(cheese)
        self.score, self.outcome = score, outcome

    def position(self, agent):
        return self.mouse if agent == 0 else self.cats[agent - 1]

    def legal_moves(self, agent):
        """The agent's moves, N, E, S, W (onto floor), and "stay" for the mouse; a cat
        with nowhere to go stays. None once the game is over."""
        if self.outcome:
            return []
        row, column = self.position(agent)
        found = [move for move, (dr, dc) in MOVES.items() if move != "stay" and is_floor((row + dr, column + dc))]
        return found + ["stay"] if agent == 0 or not found else found

    def after(self, agent, move):
        """The board after `agent` plays `move` (a move of legal_moves)."""
        if move not in self.legal_moves(agent):
            raise ValueError(f"{move!r} is not a legal move of agent {agent} here")
        dr, dc = MOVES[move]
        row, column = self.position(agent)
        cell = (row + dr, column + dc)
        if agent == 0:
            mouse, cats, cheese, score = cell, self.cats, self.cheese - {cell}, self.score + TURN
            score += CHEESE if cell in self.cheese else 0
        else:
            mouse, cheese, score = self.mouse, self.cheese, self.score
            cats = tuple(cell if index == agent - 1 else cat for index, cat in enumerate(self.cats))
        if mouse in cats:
            return Board(mouse, cats, cheese, score + CAUGHT, "caught")
        if not cheese:
            return Board(mouse, cats, cheese, score + WIN, "won")
        return Board(mouse, cats, cheese, score)

    def is_over(self):
        return bool(self.outcome)

    def evaluate(self):
        """The mouse's prospects: the score, less the way to the nearest cheese, plus the
        way to the nearest cat (up to 3); a finished game is worth its score."""
        if self.outcome:
            return self.score
        food = min(distance(self.mouse, piece) for piece in self.cheese)
        danger = min(distance(self.mouse, cat) for cat in self.cats)
        return self.score - food + min(danger, 3)

    def __eq__(self, other):
        return isinstance(other, Board) and encode(self) == encode(other)

    def __hash__(self):
        return hash(encode(self))

    def __repr__(self):
        return f"Board({encode(self)!r})"


# --- the grader's side: boards as text, the move check, the probes, hidden cases --------


def encode(board):
    """A board as one line: "mouse 1,1; cats 3,1 3,5; cheese 1,4 2,3; score 0" (and
    "; won" or "; caught" at the end of a game)."""
    cells = lambda cells: " ".join(f"{row},{column}" for row, column in cells)  # noqa: E731
    text = f"mouse {cells([board.mouse])}; cats {cells(board.cats)}; cheese {cells(sorted(board.cheese))}; score {board.score}"
    return text + (f"; {board.outcome}" if board.outcome else "")


def decode(text):
    parts = dict(part.strip().split(" ", 1) if " " in part.strip() else (part.strip(), "") for part in text.split(";"))
    cell = lambda text: tuple(int(number) for number in text.split(","))  # noqa: E731
    outcome = next((word for word in ("won", "caught") if word in parts), "")
    board = Board(
        cell(parts["mouse"]),
        [cell(cat) for cat in parts["cats"].split()],
        [cell(piece) for piece in parts["cheese"].split()],
        int(parts["score"]),
        outcome,
    )
    if len(board.cats) != 2 or not all(is_floor(cell) for cell in (board.mouse, *board.cats, *board.cheese)):
        raise ValueError(f"{text!r}: two cats, and everything on the maze's floor")
    return board


def after(call, move):
    """choose_move's answer: the search call after the mouse's `move`, cat 1 to move."""
    board = call["board"]
    if move not in board.legal_moves(0):
        return None
    return {"board": board.after(0, move), "agent": 1, "depth": call["depth"]}


def probes(call):
    """The bound specification is tried at the case's board and after each mouse move
    (a cat to move: MIN)."""
    board = call["board"]
    return [call] + [
        {"board": board.after(0, move), "agent": 1, "depth": call["depth"]} for move in board.legal_moves(0)
    ]


MAZES = (
    ("#######", "#.....#", "#.#.#.#", "#.....#", "#######"),
    ("######", "#....#", "#.##.#", "#....#", "######"),
)


def random_case(rng, cheese=(1, 2), depth=(1, 2)):
    """A hidden case on one of the MAZES: the mouse, two cats and `cheese` pieces on
    distinct floor cells, searched `depth` plies deep, the mouse to move."""
    rows = list(rng.choice(MAZES))
    floor = [(r, c) for r, row in enumerate(rows) for c, char in enumerate(row) if char == "."]
    cells = rng.sample(floor, 3 + rng.randint(*cheese))
    board = Board(cells[0], cells[1:3], cells[3:])
    return {"world": {"maze": rows}, "call": {"board": board, "agent": 0, "depth": rng.randint(*depth)}}


def smaller(case):
    """Cases smaller than a failed hidden one: a ply less, then a piece of cheese gone
    (while one is left). The grader sends the first that still fails to the student's code,
    goes on from it, and shows the smallest it finds."""
    call = case["call"]
    board = call["board"]
    if call["depth"] > 1:
        yield {"world": case["world"], "call": {**call, "depth": call["depth"] - 1}}
    for piece in sorted(board.cheese) if len(board.cheese) > 1 else ():
        fewer = Board(board.mouse, board.cats, board.cheese - {piece}, board.score, board.outcome)
        yield {"world": case["world"], "call": {**call, "board": fewer}}

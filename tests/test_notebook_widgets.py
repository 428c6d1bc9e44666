"""Widgets in a graded notebook (round s35: the agents lab's notebook with every student
habit scored 0/104 once under load). The grader is a front end with no comm targets: it
answers no widget and sends the kernel nothing while a cell runs, so an `@interact` cell
ends at once with what it prints, and a cell that waits for a front end's answer waits
until its own limit. Real ZeroMQ sockets and kernels."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import zmq
import zmq.asyncio
from jupyter_client import channels
from jupyter_client.session import Session

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.sandbox.kernel_clients import kernel_classes
from grader.spec import load_spec

from .notebook_builder import MESSY_AFTER, notebook_from_py

TESTS = Path(__file__).resolve().parent
SOLUTION = TESTS.parent / "reference" / "solutions" / "tree.py"
SPEC = """lab: tree
limits: {case_seconds: 2, cell_seconds: 1, load_seconds: 4, submission_seconds: 30}
checks:
  load: {points: 1}
  value: {points: 1}
  limits: {points: 1}
cases:
  - name: tiny
    checks: [value]
    graph: {a0: [b0, b1]}
    terminal_nodes: {b0: 1, b1: 2}
    expect: {value: 2, nodes: 3, pruned: []}
"""
INTERACT = next(cell for cell in MESSY_AFTER if "@interact" in cell)  # prints n * 2 = 6
# a student's cell that opens a comm and waits for the front end's answer, which never comes
WAITS_FOR_A_FRONT_END = (
    "import time\nfrom comm import create_comm\nanswers = []\n"
    "channel = create_comm(target_name='my.dashboard', data={})\nchannel.on_msg(answers.append)\n"
    "while not answers:\n    time.sleep(0.05)"
)


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    path = tmp_path_factory.mktemp("spec") / "tree.yaml"
    path.write_text(SPEC)
    return load_spec(path)


def test_a_reply_that_comes_while_its_socket_sends_is_still_received():
    """The cause of the 0: jupyter_client sends on a blocking shadow of the asyncio socket,
    which clears ZeroMQ's edge-triggered wake-up; a reply that came just before such a send
    woke nobody, and a wait without a timeout never ended. The grader's channels look at
    the socket on their own (the guard below only turns a hang into a failure)."""
    _, client_class = kernel_classes()
    looking = client_class().shell_channel_class

    async def reply_during_a_send() -> dict:
        context = zmq.asyncio.Context()
        ours, kernel = context.socket(zmq.DEALER), context.socket(zmq.ROUTER)
        try:
            kernel.bind("inproc://abgrade-lost-wake")
            ours.connect("inproc://abgrade-lost-wake")
            session = Session(key=b"test")
            session.send(ours, "execute_request", {"code": "1"})
            sender = (await kernel.recv_multipart())[0]
            waiting = asyncio.ensure_future(looking(ours, session).get_msg(timeout=None))
            await asyncio.sleep(0.05)  # the wait is the event loop's
            session.send(kernel, "execute_reply", {"status": "ok"}, ident=[sender])
            time.sleep(0.1)  # the reply lands, and the loop does not run
            session.send(ours, "comm_msg", {"comm_id": "x", "data": {}})  # as nbclient's widget mimic did
            return await asyncio.wait_for(waiting, 60)
        finally:
            ours.close(linger=0)
            kernel.close(linger=0)
            context.term()

    assert asyncio.run(reply_during_a_send())["msg_type"] == "execute_reply"


@pytest.mark.slow
def test_interact_cells_end_at_once_with_what_they_print_and_the_grader_sends_no_comm(tmp_path, spec, monkeypatch):
    """Five `@interact` cells after the solution: full marks, no cell incident, each cell's
    print among what the code printed (no Output widget caught it: nobody shows one), and
    the grader sent the kernel only its requests (no widget state, no comm answer)."""
    sent: list[str] = []
    send = channels.ZMQSocketChannel.send

    def recording(self, msg):
        sent.append(msg["msg_type"])
        return send(self, msg)

    monkeypatch.setattr(channels.ZMQSocketChannel, "send", recording)
    notebook = notebook_from_py(SOLUTION, tmp_path / "lab.ipynb", after=[INTERACT] * 5)
    report = grade_submission(notebook, get_lab("tree"), spec, seed=1)
    load = report.tests[0].output
    assert report.score == report.max_score, load
    assert "cell In [" not in load, load
    assert report.student_output.count("6\n") == 5, report.student_output
    assert set(sent) <= {"kernel_info_request", "execute_request"}, sent


@pytest.mark.slow
@pytest.mark.timing
def test_a_cell_that_waits_for_a_front_end_forever_ends_at_its_backstop_and_the_rest_is_graded(tmp_path, spec):
    """A hostile (or hopeful) cell waits for a comm answer: it ends at the cell's wall-clock
    backstop, interrupted, with a message that says it was not computing, and the cells
    after it run."""
    notebook = notebook_from_py(SOLUTION, tmp_path / "lab.ipynb", before=[WAITS_FOR_A_FRONT_END])
    report = grade_submission(notebook, get_lab("tree"), spec, seed=1)
    load = report.tests[0].output
    assert report.score == report.max_score, load
    said = "cell In [1] ran past the wall-clock backstop of 15 s per notebook cell (its limit is 1 s of CPU time"
    assert said in load and "waiting for something that never came" in load and "interrupted" in load, load

"""The private channel is bounded (issue 13): a peer that stops reading, sends endless
bytes, nests JSON without end or sends garbage ends that worker with a timeout or
protocol failure, and never hangs or crashes the grader. Peers are real processes; the
last tests grade hostile fixture submissions end to end.

No test here times anything (issue 22, point 7: a busy machine may run it ten times
slower). A deadline test's peer sleeps for a minute and then exits, so a deadline that
didn't work shows as a `died` failure, never as a `timeout`; a waiting test gives the
peer a generous minute to start and answer. How fast the depth of a 64 MiB line is
measured is a figure of bench/bench_channel.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.results import GradeReport
from grader.sandbox.channel import (
    MAX_JSON_DEPTH,
    MAX_LINE_BYTES,
    FramedChannel,
    WorkerFailure,
    json_depth_exceeds,
    parse_json_line,
)
from grader.spec import load_spec

TESTS = Path(__file__).resolve().parent
HOSTILE = TESTS / "fixtures" / "hostile"
TIGHT = TESTS / "fixtures" / "specs" / "tree_tight_limits.yaml"
STARTED = 60  # seconds a peer may take to start and answer on a busy machine (setup, not judged)


class Peer:
    """A real process at the other end: reads our requests on its stdin, writes replies on
    its stdout, and runs `code` (Python)."""

    def __init__(self, code: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.kills = 0
        self.channel = FramedChannel(
            self.process.stdout.fileno(),
            self.process.stdin.fileno(),
            self.kill,
            lambda when: WorkerFailure("died", f"peer died {when}"),
        )

    def kill(self) -> None:
        self.kills += 1
        self.process.kill()

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def peer():
    made = []

    def make(code: str) -> Peer:
        made.append(Peer(code))
        return made[-1]

    yield make
    for p in made:
        p.close()


@pytest.mark.timing
def test_a_peer_that_stops_reading_is_a_timeout_not_a_hang(peer):
    code = (
        "import fcntl, os, time\nfcntl.fcntl(0, fcntl.F_SETPIPE_SZ, 4096)\n"
        "os.write(1, b'{\"shrunk\": 1}\\n')\ntime.sleep(60)"
    )
    p = peer(code)
    assert p.channel.receive(timeout=STARTED) == {"shrunk": 1}  # its pipe is small before we write
    reply = p.channel.request({"op": "case", "data": "x" * 1_000_000}, timeout=1.0)
    assert isinstance(reply, WorkerFailure) and reply.kind == "timeout"  # not `died`, a minute later
    assert "stopped reading its input" in reply.message and p.kills == 1


@pytest.mark.timing
def test_send_alone_has_a_deadline_too(peer):
    p = peer("import time\ntime.sleep(60)")
    failure = p.channel.send({"data": "x" * 2_000_000}, timeout=0.5)
    assert failure is not None and failure.kind == "timeout"  # not `died`, a minute later


def test_endless_bytes_without_newline_stop_at_the_line_cap(peer):
    p = peer("import os\nchunk = b'x' * 65536\nwhile True:\n    os.write(1, chunk)")
    reply = p.channel.receive(timeout=STARTED * 2)
    assert isinstance(reply, WorkerFailure) and reply.kind == "protocol"  # the cap, not the timeout
    assert f"longer than {MAX_LINE_BYTES // 2**20} MiB" in reply.message and p.kills == 1


def test_deeply_nested_json_is_a_protocol_failure(peer):
    p = peer("import os\nos.write(1, b'[' * 200000 + b']' * 200000 + b'\\n')\nimport time\ntime.sleep(60)")
    reply = p.channel.receive(timeout=STARTED)
    assert isinstance(reply, WorkerFailure) and reply.kind == "protocol"
    assert f"nests deeper than {MAX_JSON_DEPTH} levels" in reply.message and p.kills == 1


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"not json", "was not JSON"),
        (b"[1, 2]", "was not a JSON object"),
        (b"\xff\xfe{}", "was not JSON"),
    ],
)
def test_garbage_is_a_protocol_failure(peer, line, why):
    p = peer(f"import os, time\nos.write(1, {line!r} + b'\\n')\ntime.sleep(60)")
    reply = p.channel.receive(timeout=STARTED)
    assert isinstance(reply, WorkerFailure) and reply.kind == "protocol" and why in reply.message


@pytest.mark.timing
def test_messages_split_and_joined_arrive_one_by_one(peer):
    code = (
        "import os, time\nos.write(1, b'{\"a\": 1}\\n{\"b\"')\ntime.sleep(0.3)\nos.write(1, b': 2}\\n')\ntime.sleep(60)"
    )
    p = peer(code)
    assert p.channel.receive(timeout=STARTED) == {"a": 1}
    assert p.channel.receive(timeout=STARTED) == {"b": 2}
    reply = p.channel.receive(timeout=0.3)
    assert isinstance(reply, WorkerFailure) and reply.kind == "timeout"


def test_an_echo_peer_answers_requests(peer):
    p = peer("import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()")
    for n in range(3):
        message = {"id": n, "text": 'é"[{' * 50_000}
        assert p.channel.request(message, timeout=STARTED) == message


def test_requests_sent_ahead_reach_the_peer_before_they_are_asked(peer):
    """A peer that answers a request only once it has read the next one: without the next
    one sent ahead it would wait forever (its minute), with it every reply comes, in order,
    each read on its own."""
    code = (
        "import sys\nlines = iter(sys.stdin)\nheld = next(lines)\nfor line in lines:\n"
        "    sys.stdout.write(held)\n    sys.stdout.flush()\n    held = line\n"
        "sys.stdout.write(held)\nsys.stdout.flush()"
    )
    p = peer(code)
    requests = [{"id": n, "text": "x" * n} for n in range(4)]
    for n, message in enumerate(requests[:3]):
        assert p.channel.request(message, timeout=STARTED, ahead=requests[n + 1 :]) == message
    p.process.stdin.close()  # the last one is held until its input ends
    assert p.channel.receive(timeout=STARTED) == requests[3]


def test_requests_ahead_beyond_the_pipe_never_block_either_side(peer):
    """Requests ahead far larger than both pipes, each answered with as much: the grader
    writes ahead only what the pipe takes while it reads, so neither side waits for the
    other (without that, both would block on a full pipe until the peer's minute ran out)."""
    p = peer("import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()")
    requests = [{"id": n, "text": f"{n}" * 300_000} for n in range(6)]
    for n, message in enumerate(requests):
        assert p.channel.request(message, timeout=STARTED, ahead=requests[n + 1 :]) == message
    assert p.kills == 0


def test_a_request_asked_out_of_the_order_sent_ahead_is_refused(peer):
    p = peer("import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()")
    first, second, third = ({"id": n} for n in range(3))
    assert p.channel.request(first, timeout=STARTED, ahead=[second, third]) == first
    with pytest.raises(ValueError, match="next one asked"):
        p.channel.request(third, timeout=STARTED)
    with pytest.raises(ValueError, match="go on from those queued"):
        p.channel.request(second, timeout=STARTED, ahead=[first])
    with pytest.raises(ValueError, match="next one asked"):
        p.channel.send(third)
    assert p.channel.request(second, timeout=STARTED, ahead=[third]) == second  # nothing sent twice
    assert p.channel.request(third, timeout=STARTED) == third


def test_the_depth_check_ignores_brackets_in_strings_and_measures_exactly():
    assert not json_depth_exceeds(b'{"a": "[[[[[[[[[[[[\\"[[["}', 2)
    assert not json_depth_exceeds(b"[" * 3 + b"]" * 3, 3)
    assert json_depth_exceeds(b"[{[{}]}]", 3) and not json_depth_exceeds(b"[{[{}]}]", 4)
    big = b"[" + b'"[[[[",' * 300_000 + b"[[[1]]]]"  # long enough for the numpy path
    assert json_depth_exceeds(big, 3) and not json_depth_exceeds(big, 4)
    assert parse_json_line(b"[" * 100_000 + b"]" * 100_000)[1] is not None


def test_a_64_mib_line_of_brackets_is_measured_exactly():
    """The numpy path on the longest line the channel takes (its speed: bench/bench_channel.py)."""
    assert json_depth_exceeds((b"[" * 65 + b"]" * 65) * (MAX_LINE_BYTES // 130))
    assert not json_depth_exceeds((b"[" * 64 + b"]" * 64) * (MAX_LINE_BYTES // 128))
    assert not json_depth_exceeds(b"[" + b'"a",' * (MAX_LINE_BYTES // 4 - 1) + b"1]")


def _grade(name: str, tmp_path: Path, cases: int | None = None) -> GradeReport:
    """Grade a hostile fixture on the tight spec, or on its first `cases` cases only (a spec
    written beside the submission's folder, not in it)."""
    path = tmp_path / "submission" / name
    path.parent.mkdir()
    path.write_text((HOSTILE / name).read_text())
    spec = TIGHT
    if cases is not None:
        raw = yaml.safe_load(TIGHT.read_text())
        raw["cases"] = raw["cases"][:cases]
        spec = tmp_path / "tight_first_cases.yaml"
        spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    return grade_submission(path, get_lab("tree"), load_spec(spec), seed=1)


def _failed_outputs(report) -> str:
    return "\n".join(t.output for t in report.tests if not t.passed)


@pytest.mark.slow
@pytest.mark.timing
def test_a_submission_that_stops_reading_costs_its_time_limit_only(tmp_path):
    """Where the student runs as the grader's own user it can fill its request pipe and
    the grader's write deadline ends it; where it runs as its own uid (a root grader) it
    can't even get a write end to that pipe. Either way it sleeps, using no CPU time, so
    the wall-clock backstop of the case limit stops it, and the message says so. One case:
    it sleeps in every case, and each would cost one more backstop of the test's time."""
    from grader.sandbox.identity import grader_is_root

    report = _grade("stops_reading.py", tmp_path, cases=1)
    assert report.tests[0].passed  # it loads
    assert {t.case for t in report.tests if t.case} == {"seed"}
    if grader_is_root():
        assert "REFUSED reopening the request pipe" in report.student_output
    else:
        assert "stopped reading its input" in _failed_outputs(report)
    assert "the wall-clock backstop of 15 s per case (its limit is 1 s of CPU time" in _failed_outputs(report)
    assert report.score < report.max_score


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("deep_json_reply.py", f"nests deeper than {MAX_JSON_DEPTH} levels"),
        ("endless_reply.py", f"longer than {MAX_LINE_BYTES // 2**20} MiB"),
    ],
)
def test_garbage_on_the_channel_fails_the_submissions_own_tests(tmp_path, name, message):
    report = _grade(name, tmp_path)
    assert report.tests[0].passed
    failed = [t for t in report.tests if not t.passed]
    assert failed and all(t.kind != "load" for t in failed)
    assert message in _failed_outputs(report)

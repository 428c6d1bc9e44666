"""What a student's process printed, as the grader holds it: everything written before the
grader asks, whatever its draining thread had got to (a hidden case's cut is taken then:
on a busy machine, a print at load time was once missing from a Gradescope output)."""

from __future__ import annotations

import os

from grader.sandbox.output import CappedOutput


def test_text_holds_every_byte_written_before_it_is_asked():
    for round_ in range(200):
        read, write = os.pipe()
        output = CappedOutput(read, cap=1 << 20)
        try:
            line = f"loading {round_}\n".encode()
            os.write(write, line)
            assert output.text == line.decode()  # at once: no wait for the thread
            os.write(write, b"more\n")
            assert output.text == line.decode() + "more\n"
        finally:
            os.close(write)
            output.finish()


def test_the_cap_and_the_end_of_the_pipe():
    read, write = os.pipe()
    output = CappedOutput(read, cap=10)
    os.write(write, b"0123456789abcdef")
    os.close(write)
    output.finish(timeout=5)
    assert output.text == "0123456789\n[output truncated: 6 more bytes not kept]"
    assert output.total == 16 and output.kept == 10

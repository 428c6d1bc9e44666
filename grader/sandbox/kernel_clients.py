"""The Jupyter clients a grader talks to a kernel with, bounded in what a kernel can make
the grader hold: ZeroMQ drops a message over MAX_KERNEL_MESSAGE_BYTES and queues few, and
cell outputs are kept only within the kernel's OutputBudget (one budget per kernel, for
cell outputs and what the code prints during the cases). Made on first use: `.py`
grading never imports Jupyter."""

from __future__ import annotations

import functools
import time
from typing import Any

MAX_KERNEL_MESSAGE_BYTES = 16 * 2**20  # a bigger message from the kernel is dropped by ZeroMQ
KERNEL_QUEUE_MESSAGES = 8  # messages ZeroMQ may hold for us per channel before the kernel drops
# A wait for a kernel's message looks at its socket at least this often (wall seconds): the
# event loop's wake-up for a message can be lost (BoundedKernelClient), and then the look
# finds it instead of the wait's own timeout (345 s for a cell's reply).
LOOK_SECONDS = 0.5
# How long a cell's outputs may come after its reply (nbclient's iopub_timeout, 4 s by
# default: on a loaded machine the kernel's IOPub thread may publish them later, and a cell
# whose outputs came later lost them, its error among them). The cell's own limits still end
# a kernel that never says it is idle.
IOPUB_AFTER_REPLY_SECONDS = 30


class OutputBudget:
    """What one kernel may make the grader hold: `cap` characters of output in all, the
    rest counted and dropped before it is stored."""

    def __init__(self, cap: int) -> None:
        self.cap, self.kept, self.dropped = cap, 0, 0

    def take(self, text: str) -> str:
        room = max(0, self.cap - self.kept)
        kept = text[:room]
        self.kept += len(kept)
        self.dropped += len(text) - len(kept)
        return kept

    def note(self) -> str | None:
        if not self.dropped:
            return None
        return f"output limit: {self.kept:,} bytes shown, {self.dropped:,} more dropped"


def message_size(content: Any) -> int:
    """Characters of text in a message's content (iteratively: contents may nest)."""
    total, stack = 0, [content]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            total += 8
    return total


@functools.cache
def kernel_classes() -> tuple[type, type]:
    """(notebook client, kernel client) that bound what a kernel makes the grader hold:
    ZeroMQ drops messages over MAX_KERNEL_MESSAGE_BYTES and queues few, and cell outputs
    are kept only within the worker's OutputBudget. Made on first use: `.py` grading
    never imports Jupyter."""
    from queue import Empty

    import nbclient
    import zmq
    import zmq.asyncio
    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.channels import AsyncZMQSocketChannel
    from traitlets import Integer, Type

    class LookingChannel(AsyncZMQSocketChannel):
        """A channel whose wait for a message looks at the socket every LOOK_SECONDS.
        The event loop learns of a message from ZeroMQ's edge-triggered descriptor, and
        anything that works the socket outside the loop's bookkeeping clears that edge
        (jupyter_client's Session.send sends on a blocking shadow of the socket): a reply
        that came during such a send woke nobody, and the cell waited for its whole
        timeout with the reply in the socket. Each look ends in a real zmq_poll."""

        async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:  # type: ignore[override]
            assert self.socket is not None
            end = None if timeout is None else time.monotonic() + timeout
            while True:
                left = LOOK_SECONDS if end is None else min(LOOK_SECONDS, end - time.monotonic())
                if await self.socket.poll(max(0, int(left * 1000))):
                    return await self._recv()
                if end is not None and time.monotonic() >= end:
                    raise Empty

    class BoundedKernelClient(AsyncKernelClient):
        shell_channel_class = Type(LookingChannel)
        iopub_channel_class = Type(LookingChannel)

        def _context_default(self) -> zmq.asyncio.Context:
            self._created_context = True
            context = zmq.asyncio.Context()
            context.setsockopt(zmq.MAXMSGSIZE, MAX_KERNEL_MESSAGE_BYTES)
            context.setsockopt(zmq.RCVHWM, KERNEL_QUEUE_MESSAGES)
            return context

        async def wait_for_ready(self, timeout: float | None = None) -> None:
            """jupyter_client's wait for the kernel's `kernel_info` reply (IOPub connected),
            without its last step, reading IOPub until it stays quiet for 0.2 s: 200 ms of
            every kernel start spent idle. What is queued is still taken, without waiting;
            messages that come later are told apart by their parent (cells, the
            observer's bootstrap), as they always were."""
            from queue import Empty

            deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
            while True:
                self.kernel_info()
                try:
                    msg = await self.shell_channel.get_msg(timeout=1)
                except Empty:
                    pass
                else:
                    if msg["msg_type"] == "kernel_info_reply":
                        try:
                            await self.iopub_channel.get_msg(timeout=0.2)  # IOPub is connected
                        except Empty:
                            pass
                        else:
                            self._handle_kernel_info_reply(msg)
                            break
                if not await self._async_is_alive():
                    raise RuntimeError("Kernel died before replying to kernel_info")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")
            while True:
                try:
                    await self.iopub_channel.get_msg(timeout=0)
                except Empty:
                    return

    class BoundedNotebookClient(nbclient.NotebookClient):
        budget: OutputBudget
        iopub_timeout = Integer(IOPUB_AFTER_REPLY_SECONDS)

        def handle_comm_msg(self, outs: list, msg: dict, cell_index: int) -> None:
            """Ignore it: the grader is a front end with no comm targets (a headless run).
            nbclient's own handling played Jupyter's Output widget: each output a widget
            caught (an `@interact` cell's print) was sent back to the kernel on the shell
            socket while the cell's reply was awaited there, and a reply that came during
            that send was never seen (LookingChannel): under load about one `@interact`
            cell in ten waited until its cell's wall-clock backstop and failed loading (a
            0). It also kept every widget's state from the kernel, outside the output
            budget. The outputs now stay the cell's, as a `.py` prints them."""

        def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> Any:
            content = msg.get("content")
            if not isinstance(content, dict):
                return None
            if msg.get("msg_type") == "error":  # kept small, always: the load notes name it
                msg["content"] = {
                    "ename": str(content.get("ename", ""))[:200],
                    "evalue": str(content.get("evalue", ""))[:500],
                    "traceback": [],
                }
                return super().output(outs, msg, display_id, cell_index)
            if msg.get("msg_type") == "stream":
                text = self.budget.take(str(content.get("text", "")))
                if not text:
                    return None
                msg["content"] = {**content, "text": text}
            else:  # display data and results: whole or not at all
                size = message_size(content)
                if size > self.budget.cap - self.budget.kept:
                    self.budget.dropped += size
                    return None
                self.budget.kept += size
            return super().output(outs, msg, display_id, cell_index)

    return BoundedNotebookClient, BoundedKernelClient

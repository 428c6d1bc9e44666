"""Run inside the notebook's kernel after its cells: connect to the grader's private
Unix socket, prove who it is with the per-worker secret, turn the shipped probe sources
into modules, and serve case requests on the kernel's user namespace. The grader puts
probe_install.py's source in front and appends `_abgrade_boot(SOCKET_PATH, SECRET,
SETUP)`, the setup as a Python literal (so nothing here depends on `json`, which a cell
may have replaced), then deletes both names from the namespace. A failure here ends the
execute request with an error, which the grader reports as the load failure."""


def _abgrade_boot(socket_path, secret, setup):
    import socket

    runtime, handler = _abgrade_install_probe(setup)  # type: ignore[name-defined]  # noqa: F821 - defined by probe_install.py
    namespace = get_ipython().user_ns  # type: ignore[name-defined]  # noqa: F821 - defined inside IPython
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(socket_path)
        connection.sendall(secret.encode("ascii") + b"\n")
        try:
            from jupyter_client.session import Session

            output = dict(Session._abgrade_output)  # type: ignore[attr-defined]  # set by _abgrade_cap_output
        except Exception:  # noqa: BLE001 - undone by a cell: the grader's caps still hold
            output = None
        runtime.serve(
            runtime.Channel(connection.makefile("rb"), connection.fileno()),
            setup,
            handler,
            namespace,
            extra={"output": output},
        )
    finally:
        connection.close()


def _abgrade_cap_output(cap):
    """Run in the kernel before any cell (IPKernelApp.exec_lines): every output message
    the kernel sends goes through jupyter_client's Session.send, so the cap is applied
    there, at the source: stream text past `cap` characters in all is dropped, a display
    that doesn't fit is replaced by a one-line placeholder, error texts are trimmed.
    Counts go to the grader with the observer's first message (Session._abgrade_output).
    A student can undo this; the grader's own caps still hold then."""
    from jupyter_client.session import Session

    state = Session._abgrade_output = {"kept": 0, "dropped": 0}  # type: ignore[attr-defined]  # our own counter
    send = Session.send

    def size(value):
        total, stack = 0, [value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                total += len(item)
            elif isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, (list, tuple)):
                stack.extend(item)
        return total

    def trimmed(kind, content):
        """`content` within what is left of the cap, or None to send nothing."""
        room = max(0, cap - state["kept"])
        if kind == "stream" and isinstance(content.get("text"), str):
            text = content["text"]
            state["dropped"] += max(0, len(text) - room)
            if not room:
                return None
            content = dict(content, text=text[:room])
            state["kept"] += len(content["text"])
        elif kind in ("display_data", "update_display_data", "execute_result"):
            n = size(content.get("data"))
            if n > room:
                state["dropped"] += n
                content = dict(content, data={"text/plain": f"[output limit: a display of {n} bytes dropped]"})
            else:
                state["kept"] += n
        elif kind in ("error", "execute_reply") and "evalue" in content:
            trace = content.get("traceback")
            content = dict(
                content,
                evalue=str(content.get("evalue"))[:2000],
                traceback=[str(t)[:2000] for t in trace[-40:]] if isinstance(trace, list) else [],
            )
        return content

    def capped(self, stream, msg_or_type, content=None, *args, **kwargs):
        if isinstance(msg_or_type, dict):  # a message built with Session.msg
            header = msg_or_type.get("header")
            kind = header.get("msg_type") if isinstance(header, dict) else None
            if isinstance(msg_or_type.get("content"), dict):
                new = trimmed(kind, msg_or_type["content"])
                if new is None:
                    return None
                msg_or_type = dict(msg_or_type, content=new)
        elif isinstance(content, dict):
            content = trimmed(msg_or_type, content)
            if content is None:
                return None
        return send(self, stream, msg_or_type, content, *args, **kwargs)

    Session.send = capped  # type: ignore[method-assign]  # the cap is applied by patching jupyter_client


def _abgrade_exit_raises():
    """Run in the kernel before any cell: `exit()` / `quit()` in a cell make ipykernel stop
    its event loop 0.1 s later, so the kernel hung on the next cell (or not, by the
    machine's timing, if that cell was the last). They raise SystemExit instead, as
    `sys.exit()` does in IPython: the cell is reported and the cells after it run."""
    message = "exit() or quit() stops the kernel in Jupyter; the grader ran the cells after it"

    def ask_exit():
        raise SystemExit(message)

    get_ipython().ask_exit = ask_exit  # type: ignore[name-defined]  # noqa: F821 - defined inside IPython


def _abgrade_ignore_breakpoints():
    """Run in the kernel before any cell: a `breakpoint()` left in a function stops nothing
    while grading (as PYTHONBREAKPOINT=0 makes it; nobody can type at the debugger, which
    quit with BdbQuit in every case). Same as the `.py` worker (bootstrap.py)."""
    import sys

    sys.breakpointhook = lambda *args, **kwargs: None

"""Run inside the notebook's kernel after its cells: connect to the grader's private
Unix socket, prove who it is with the per-worker secret, turn the shipped probe sources
into modules, and serve case requests on the kernel's user namespace. The grader puts
probe_install.py's source in front and appends `_abgrade_boot(SOCKET_PATH, SECRET,
SETUP)`, the setup as a Python literal (so nothing here depends on `json`, which a cell
may have replaced), then deletes both names from the namespace. A failure here ends the
execute request with an error, which the grader reports as the load failure."""


def _abgrade_boot(socket_path, secret, setup):
    import socket

    runtime, handler = _abgrade_install_probe(setup)  # noqa: F821 - defined by probe_install.py
    namespace = get_ipython().user_ns  # noqa: F821 - defined inside IPython
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(socket_path)
        connection.sendall(secret.encode("ascii") + b"\n")
        runtime.serve(runtime.Channel(connection.makefile("rb"), connection.fileno()), setup, handler, namespace)
    finally:
        connection.close()

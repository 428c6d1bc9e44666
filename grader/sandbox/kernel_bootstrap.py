"""Run inside the notebook's kernel after its cells: connect to the grader's private
Unix socket, turn the shipped probe sources into modules, and serve case requests on the
kernel's user namespace. The grader appends `_abgrade_boot(SOCKET_PATH)`."""


def _abgrade_boot(socket_path):
    import json
    import socket
    import sys
    import types

    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(socket_path)
    reader = connection.makefile("rb")
    setup = json.loads(reader.readline())
    for name, source in setup["modules"]:
        module = types.ModuleType(name)
        module.__file__ = "<abgrade %s>" % name
        sys.modules[name] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
    runtime = sys.modules["_abgrade_runtime"]
    handler = sys.modules[setup["handler"]].handle
    namespace = get_ipython().user_ns  # noqa: F821 - defined inside IPython
    try:
        runtime.serve(runtime.Channel(reader, connection.fileno()), setup, handler, namespace)
    finally:
        connection.close()

"""The first code the student process runs (passed with `python -I -c`).

It reads the setup message from the private channel, turns the shipped probe sources
into modules, and hands over to the lab's observer. Kept tiny and stdlib-only.
"""
import json
import os
import sys
import types


def main():
    read_fd, write_fd = int(sys.argv[1]), int(sys.argv[2])
    reader = os.fdopen(read_fd, "rb")
    setup = json.loads(reader.readline())
    for name, source in setup["modules"]:
        module = types.ModuleType(name)
        module.__file__ = "<abgrade %s>" % name
        sys.modules[name] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
    runtime = sys.modules["_abgrade_runtime"]
    handler = sys.modules[setup["handler"]].handle
    channel = runtime.Channel(reader, write_fd)
    runtime.serve(channel, setup, handler)


main()

"""Shared by both bootstraps (its source is put in front of theirs): turn the probe
modules shipped in the setup message into modules. Stdlib only."""


def _abgrade_install_probe(setup):
    """Create the shipped modules; return (the runtime module, the lab's handler). Each
    comes as [name, source], or (a `.py` worker's) [name, "", code]: the code the grader
    compiled from that source, marshalled, in hex (the same interpreter, so the same
    format; compiling here was on the critical path of a grade)."""
    import sys
    import types

    for entry in setup["modules"]:
        name = entry[0]
        module = types.ModuleType(name)
        module.__file__ = "<abgrade %s>" % name
        sys.modules[name] = module
        if len(entry) > 2:  # only in a fresh `.py` worker: a kernel's modules are sources
            import marshal

            code = marshal.loads(bytes.fromhex(entry[2]))
        else:
            code = compile(entry[1], module.__file__, "exec")
        exec(code, module.__dict__)
    return sys.modules["_abgrade_runtime"], sys.modules[setup["handler"]].handle

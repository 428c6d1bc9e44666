"""Shared by both bootstraps (its source is put in front of theirs): turn the probe
sources shipped in the setup message into modules. Stdlib only."""


def _abgrade_install_probe(setup):
    """Create the shipped modules; return (the runtime module, the lab's handler)."""
    import sys
    import types

    for name, source in setup["modules"]:
        module = types.ModuleType(name)
        module.__file__ = "<abgrade %s>" % name
        sys.modules[name] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
    return sys.modules["_abgrade_runtime"], sys.modules[setup["handler"]].handle

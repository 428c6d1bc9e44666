"""Shared by both bootstraps (its source is put in front of theirs): turn the probe
modules shipped in the setup message into modules. Stdlib only."""


def _abgrade_install_probe(setup):
    """Create the shipped modules; return (the runtime module, the lab's handler). Each
    comes as [name, source], or (what a grader sends, to a `.py` worker and to a notebook's
    kernel alike) [name, "", code]: the code the grader compiled from that source,
    marshalled, in hex (the same interpreter, so the same format; compiling here was on the
    critical path of a grade: in a kernel, about 4 ms of its CPU per notebook for the tree
    lab, 12 for connect4's, less 1 to 2 ms for the longer literal and the unmarshal)."""
    import sys
    import types

    # in a kernel the notebook's cells ran first, and one may have replaced `marshal` in
    # sys.modules (as tests/test_notebook_hostile.py's cells replace json): the standard one
    # (and puts back whatever was there: the student's modules stay as they left them)
    absent = object()
    replaced: object = sys.modules.pop("marshal", absent)
    try:
        import marshal
    finally:
        if replaced is not absent:
            sys.modules["marshal"] = replaced  # type: ignore[assignment]  # None or the cell's own
    for entry in setup["modules"]:
        name = entry[0]
        module = types.ModuleType(name)
        module.__file__ = "<abgrade %s>" % name
        sys.modules[name] = module
        if len(entry) > 2:
            code = marshal.loads(bytes.fromhex(entry[2]))
        else:
            code = compile(entry[1], module.__file__, "exec")
        exec(code, module.__dict__)
    return sys.modules["_abgrade_runtime"], sys.modules[setup["handler"]].handle

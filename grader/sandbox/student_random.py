"""Run in the student's process before any of its code (its source is put in front of the
`.py` worker's bootstrap and into a kernel's exec_lines): seed `random`, and numpy's global
generator, with the value the grader derived from the assignment's seed (seeding.py), so
that a submission's own random draws don't move its grade. Stdlib only.

Neither module is imported for this: numpy's import costs tens of milliseconds and most
submissions of the tree lab never import it; `random`'s about a millisecond on every
grading that doesn't use it. A module loaded already (the worker zygote imports both, an
observer or IPython may) is seeded at once; else a one-shot import hook seeds it right
after its first import, before the importing line goes on.

`value` None (a caller that gives no seed): seeded from the system's entropy, as a fresh
interpreter is, and as a fork must be (it would otherwise share its zygote's state)."""


def _abgrade_seed_random(value):
    import sys

    waiting = set()
    for name in ("random", "numpy.random"):
        loaded = sys.modules.get(name)
        if loaded is not None:
            loaded.seed(value)
        elif value is not None:  # a first import seeds itself from the system's entropy anyway
            waiting.add(name)
    if not waiting:
        return

    def seeded_after(run):
        def exec_module(module):
            run(module)
            module.seed(value)

        return exec_module

    class SeededAfterImport:
        """For a loader that is a class (frozen, built-in), whose exec_module is shared
        by every module it loads: a loader that runs it, then seeds the module it made."""

        def __init__(self, loader):
            self.loader = loader

        def create_module(self, spec):
            return self.loader.create_module(spec)

        def exec_module(self, module):
            seeded_after(self.loader.exec_module)(module)

        def __getattr__(self, name):  # get_source, get_resource_reader, ...: the real loader's
            return getattr(self.loader, name)

    class SeedOnImport:
        """A meta path finder that finds nothing itself: the first import of a waiting
        module gets the spec the other finders find, with its loader wrapped."""

        def find_spec(self, name, path=None, target=None):
            if name not in waiting:
                return None
            waiting.discard(name)  # one shot each
            if not waiting and self in sys.meta_path:
                sys.meta_path.remove(self)
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                spec = find(name, path, target) if finder is not self and find is not None else None
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            if isinstance(loader, type):
                spec.loader = SeededAfterImport(loader)
            elif loader is not None and hasattr(loader, "exec_module"):  # this module's own loader
                loader.exec_module = seeded_after(loader.exec_module)
            return spec

    sys.meta_path.insert(0, SeedOnImport())

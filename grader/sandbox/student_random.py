"""Run in the student's process before any of its code (its source is put in front of the
`.py` worker's bootstrap and into a kernel's exec_lines): seed `random`, and numpy's global
generator, with the value the grader derived from the assignment's seed (seeding.py), so
that a submission's own random draws don't move its grade. Stdlib only.

numpy is not imported for this: most submissions of the tree lab never do, and its import
costs tens of milliseconds. If it is loaded already (the worker zygote imports it, an
observer may) it is seeded at once; else a one-shot import hook seeds `numpy.random` right
after the submission first imports it, before the submission's next line runs.

`value` None (a caller that gives no seed): seeded from the system's entropy, as a fresh
interpreter is, and as a fork must be (it would otherwise share its zygote's state)."""


def _abgrade_seed_random(value):
    import random
    import sys

    random.seed(value)
    loaded = sys.modules.get("numpy.random")
    if loaded is not None:
        loaded.seed(value)
        return
    if value is None:
        return  # a later import of numpy seeds itself from the system's entropy

    class SeedNumpyRandom:
        """A meta path finder that finds nothing itself: it wraps the loader of
        `numpy.random`, which the other finders find, to seed it once it has run."""

        def find_spec(self, name, path=None, target=None):
            if name != "numpy.random":
                return None
            if self in sys.meta_path:
                sys.meta_path.remove(self)  # one shot
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                spec = find(name, path, target) if find is not None else None
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            run = getattr(loader, "exec_module", None)
            if run is None:
                return spec

            def exec_module(module):
                run(module)
                module.seed(value)

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, SeedNumpyRandom())

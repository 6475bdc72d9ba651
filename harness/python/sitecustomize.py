"""forkcheck's entry into every Python process of the program it runs.

forkcheck puts this directory first on PYTHONPATH, so site.py imports this module at the
start-up of every Python process of the tree, spawned and forkserver workers included. It
starts forkcheck's bootstrap (forkcheck_boot) when forkcheck gave a channel, then runs the
sitecustomize this one shadows, as site.py would have run it without us.
"""

import os
import sys


def _start_forkcheck():
    if "FORKCHECK_PY_CHANNEL" not in os.environ:
        return
    try:
        import forkcheck_boot
        forkcheck_boot.start()
    except Exception:
        pass  # a broken bootstrap must never break the program


def _shadowed_spec():
    """The spec of the next sitecustomize on sys.path after this directory, or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    entries = [os.path.abspath(entry) for entry in sys.path]
    if here not in entries:
        return None
    later = sys.path[entries.index(here) + 1:]
    # The import system's own finders, given the later entries as the path to search.
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec(__name__, later) if find_spec else None
        if spec is not None:
            return spec
    return None


def _run_shadowed_sitecustomize():
    try:
        spec = _shadowed_spec()
        if spec is None:
            return
        # What importlib.util.module_from_spec does (importing importlib.util costs 2 to 10 ms).
        module = spec.loader.create_module(spec) or type(sys)(spec.name)
        module.__spec__, module.__loader__, module.__package__ = spec, spec.loader, spec.parent
        if spec.submodule_search_locations is not None:
            module.__path__ = spec.submodule_search_locations
        if spec.has_location:
            module.__file__, module.__cached__ = spec.origin, spec.cached
    except Exception:
        return
    # It replaces us in sys.modules, as the program's "import sitecustomize" would find it, and
    # its errors reach site.py as they would have without us.
    sys.modules[__name__] = module
    spec.loader.exec_module(module)


_start_forkcheck()
_run_shadowed_sitecustomize()

"""forkcheck's entry into every Python process of the program it runs.

forkcheck puts this directory first on PYTHONPATH, so site.py imports this module at the
start-up of every Python process of the tree, spawned and forkserver workers included. It
starts forkcheck's bootstrap (forkcheck_boot) when forkcheck gave a channel, or when a job asked
to be readable by forkcheck attach, then runs the sitecustomize this one shadows, as site.py
would have run it without us.
"""

import os
import sys


def _start_forkcheck():
    """exec, watch and matrix give a channel; a job started with the lines of `forkcheck attach
    --env` asks for its Python frames to be readable by forkcheck attach, nothing more."""
    if "FORKCHECK_PY_CHANNEL" in os.environ:
        how = "start"
    elif "FORKCHECK_PY_ATTACHABLE" in os.environ:
        how = "start_attachable"
    else:
        return
    try:
        getattr(_load_forkcheck_boot(), how)()
    except Exception:
        pass  # a broken bootstrap must never break the program


def _load_forkcheck_boot():
    """forkcheck_boot, from the bytecode forkcheck keeps for it (FORKCHECK_PY_BYTECODE: a folder
    of forkcheck's own), compiled and kept there on first use. Compiling its source costs each
    Python process of the program about 20 ms, and Python's own __pycache__ is often not written
    (an installed, read-only folder; PYTHONDONTWRITEBYTECODE): the program's own setting is left
    as it is, for the program's own modules."""
    import marshal

    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.join(here, "forkcheck_boot.py")
    cached = None
    folder = os.environ.get("FORKCHECK_PY_BYTECODE", "")
    tag = getattr(sys.implementation, "cache_tag", None)
    if folder and tag:
        import _frozen_importlib_external  # loaded already: the import system's own
        from binascii import crc32  # a small C module

        # Its interpreter's bytecode, of this very file (a build's copy and an install's apart).
        st = os.stat(source)
        cached = os.path.join(folder, "forkcheck_boot.%s.%s.%08x.%d.%d.bin" % (
            tag, _frozen_importlib_external.MAGIC_NUMBER.hex(), crc32(source.encode()),
            st.st_mtime_ns, st.st_size))
    code = None
    if cached:
        try:
            with open(cached, "rb") as f:
                code = marshal.load(f)
        except Exception:
            code = None
        if type(code) is not type(_load_forkcheck_boot.__code__):  # marshal's None, a number...
            code = None
    if code is None:
        with open(source, "rb") as f:
            code = compile(f.read(), source, "exec", dont_inherit=True)
        if cached:
            try:  # whole or not at all: another process may be reading it
                # Made where missing: a job started with `forkcheck attach --env`'s lines may run
                # on a machine where forkcheck never ran.
                os.makedirs(folder, 0o700, exist_ok=True)
                partial = "%s.%d.tmp" % (cached, os.getpid())
                with open(partial, "wb") as f:
                    marshal.dump(code, f)
                os.replace(partial, cached)
            except Exception:
                pass
    module = type(sys)("forkcheck_boot")
    module.__file__ = source
    sys.modules["forkcheck_boot"] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        del sys.modules["forkcheck_boot"]
        raise
    return module


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

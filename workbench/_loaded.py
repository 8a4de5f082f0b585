"""The stat of each module's source file as this process loaded it, so that an edit made between loading a module and
first digesting it is seen (:func:`workbench._deps.module_digest`).

The code keys of the caches (:func:`workbench._deps.code_fingerprint`) digest a module *as loaded*. A module that was
imported, then edited on disk, then digested for the first time would otherwise be digested from the edited file: the
results of the old code that still runs would be stored under the key of the new code, and a fresh process with the
edited file would read them back. A finder first on :data:`sys.meta_path` notes the source file's ``(size,
mtime_ns, inode)`` whenever one of the workbench's modules, or a module outside the Python installation (a user's
package), is looked up to be loaded (the standard library and installed packages enter the keys by their versions),
and finds nothing itself, so the usual finders load the module. A reload looks it up again and notes the file anew.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder

#: module name -> ``(size, mtime_ns, inode)`` of its source file when this process last looked it up to load it
STAMPS: dict[str, tuple[int, int, int]] = {}

#: Prefixes of installed code: modules found under them are not noted.
_INSTALLED = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


def _note(name: str, origin: str | None) -> None:
    if origin is None or not origin.endswith(".py"):
        return
    if not name.startswith("workbench.") and os.path.realpath(origin).startswith(_INSTALLED):
        return
    try:
        st = os.stat(origin)
    except OSError:
        return
    STAMPS[name] = (st.st_size, st.st_mtime_ns, st.st_ino)


class _Stamper:
    """A :data:`sys.meta_path` finder that notes a module's source file and finds nothing."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if path is None:
            if fullname.partition(".")[0] in sys.stdlib_module_names:
                return None
        elif not fullname.startswith("workbench.") and all(os.path.realpath(p).startswith(_INSTALLED) for p in path):
            return None  # a submodule of an installed package (the workbench's own are noted wherever they are)
        try:
            spec = PathFinder.find_spec(fullname, path, target)
        except Exception:  # a finder must not fail an import it does not serve
            return None
        if spec is not None:
            _note(fullname, spec.origin)
        return None

    @staticmethod
    def invalidate_caches():
        pass


def install() -> None:
    """Put the finder first on :data:`sys.meta_path` (once), and note the modules of the workbench loaded before it."""
    if not any(isinstance(f, _Stamper) for f in sys.meta_path):
        sys.meta_path.insert(0, _Stamper())
    for name in ("workbench", __name__):
        if name not in STAMPS:
            _note(name, getattr(sys.modules.get(name), "__file__", None))

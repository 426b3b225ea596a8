"""The one registry of schemes: scheme name -> handler class.

Built-in handlers are named by import path and imported on first use, so a
scheme's dependencies load only when a URL of it is fetched. Third-party
handlers register through the ``anyurl.handlers`` entry point group
(``name = "package.module:HandlerClass"``) or :func:`register`.

The entry points are read (``importlib.metadata``, ~30 ms) only when a scheme
that is not built in is asked for, or by :func:`supported_schemes`; so they
add schemes. To replace the handler of a built-in scheme, call
:func:`register` (``anyurl.registry.register("http", "mypkg.web:MyHTTP")``),
which always wins.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .errors import UnsupportedScheme
from .schemes import SCHEMES

if TYPE_CHECKING:
    from .handlers.base import Handler

__all__ = ["BUILTIN", "handler_class", "register", "resolved_classes", "supported_schemes"]

BUILTIN: dict[str, str] = {name: s.handler for name, s in SCHEMES.items()}  # scheme -> "module:Class"

_registered: dict[str, type[Handler] | str] = {}
_loaded_entry_points = False


resolved_classes: dict[str, type[Handler]] = {}


def register(scheme: str, handler: type[Handler] | str) -> None:
    """Register *handler* (a class or "module:Class") for *scheme*."""
    _registered[scheme.lower()] = handler
    resolved_classes.pop(scheme.lower(), None)


def _load_entry_points() -> None:
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    from importlib.metadata import entry_points  # here: it costs ~30 ms of start-up

    for ep in entry_points(group="anyurl.handlers"):
        name = ep.name.lower()
        if name not in BUILTIN:  # whenever they are read, entry points only add schemes
            _registered.setdefault(name, ep.value)


def _available(target: str) -> bool:
    import importlib.util  # here: handler_class imports the module instead (a path search fewer)

    module = target.partition(":")[0]
    return importlib.util.find_spec(module) is not None


def _import_handler(target: str) -> type[Handler] | None:
    """The class *target* ("module:Class") names; None when the module itself is not installed."""
    module, _, name = target.partition(":")
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        # the handler's module (or a package above it) is missing: no handler; a dependency
        # it imports being missing is that dependency's error, as it was with find_spec
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            return None
        raise
    cls: type[Handler] = getattr(loaded, name)
    return cls


def supported_schemes() -> list[str]:
    """The schemes that have a handler installed, sorted."""
    _load_entry_points()
    names = {s for s, t in BUILTIN.items() if _available(t)} | set(_registered)
    return sorted(names)


def handler_class(scheme: str, url: object = None) -> type[Handler]:
    """The handler class for *scheme*; UnsupportedScheme (naming the supported ones) if none."""
    cached = resolved_classes.get(scheme)
    if cached is not None:  # find_spec/import_module cost more than the lookup on every request
        return cached
    target = _registered.get(scheme)
    if target is None and scheme not in BUILTIN:
        _load_entry_points()
        target = _registered.get(scheme)
    if target is None:
        target = BUILTIN.get(scheme)
    cls = _import_handler(target) if isinstance(target, str) else target
    if cls is None:
        from .urls import scheme_hint  # (only on this error)

        raise UnsupportedScheme(
            f"no handler for scheme {scheme!r}; supported: {', '.join(supported_schemes())}"
            + ("" if url is None else scheme_hint(str(url))), url=url
        )
    resolved_classes[scheme] = cls
    return cls

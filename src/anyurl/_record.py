"""Value classes that act as dataclasses without the ``dataclasses`` module at start-up.

Making a dataclass runs ``exec`` for each generated method: the eight of
settings.py and response.py cost ~7 ms of every command that transfers (and
``import dataclasses`` ~1 ms more). A :class:`Record` subclass writes its
``__init__`` by hand; its fields are that ``__init__``'s parameters, in order.
The base gives what ``@dataclass`` gave: ``__eq__`` and ``__hash__`` over the
compared fields (same class only), ``__repr__``, ``__match_args__``,
``__replace__``, pickling, immutability (``dataclasses.FrozenInstanceError``)
unless the class says ``frozen=False``, and a ``__dataclass_fields__`` made
on first use, so ``dataclasses.fields()``, ``replace()``, ``asdict()`` and
``is_dataclass()`` keep working on these classes.
"""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    from collections.abc import Callable
    from dataclasses import Field
    from typing import Any, ClassVar, Self

__all__ = ["DataclassFields", "Record"]

_VARARGS = 0x04 | 0x08  # CO_VARARGS | CO_VARKEYWORDS: an __init__ that only passes its arguments on


def frozen_error(message: str) -> AttributeError:
    """``dataclasses.FrozenInstanceError(message)``, importing dataclasses only on this error."""
    import dataclasses

    return dataclasses.FrozenInstanceError(message)


class DataclassFields:
    """``__dataclass_fields__`` of a Record or URL class, made on first use from its ``__init__``
    (``_fields_init``), ``_not_compared``, ``_factories`` and ``_frozen``."""

    def __get__(self, instance: object, owner: type[Any]) -> dict[str, Field[Any]]:
        made: dict[str, Field[Any]] | None = owner.__dict__.get("_dataclass_fields")
        if made is None:
            import dataclasses

            names = owner._field_names
            defaults = owner._fields_init.__defaults__ or ()
            required = len(names) - len(defaults)
            types: dict[str, Any] = {}
            for klass in reversed(owner.__mro__):
                types.update(klass.__dict__.get("__annotations__", {}))
            spec = []
            for i, name in enumerate(names):
                kwargs: dict[str, Any] = {"compare": name not in owner._not_compared}
                if name in owner._factories:
                    kwargs["default_factory"] = owner._factories[name]
                elif i >= required:
                    kwargs["default"] = defaults[i - required]
                spec.append((name, types.get(name, "object"), dataclasses.field(**kwargs)))
            shadow = dataclasses.make_dataclass(owner.__name__, spec, frozen=owner._frozen)
            made = {f.name: f for f in dataclasses.fields(shadow)}
            type.__setattr__(owner, "_dataclass_fields", made)
        return made


class Record:
    """Base of the value classes (see the module's docstring).

    A subclass sets its fields in ``__init__`` (frozen ones through
    ``object.__setattr__`` or ``__dict__``). ``_not_compared`` names fields
    left out of ``==`` and ``hash``; ``_secret`` names fields ``repr`` masks; ``_factories`` maps a field whose
    ``__init__`` default stands for a fresh value to the callable making it
    (what ``dataclasses.field(default_factory=...)`` said).
    """

    __slots__ = ()

    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    else:
        __dataclass_fields__ = DataclassFields()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _field_names: ClassVar[tuple[str, ...]] = ()
    _fields_init: ClassVar[Callable[..., None]]
    _not_compared: ClassVar[frozenset[str]] = frozenset()
    _secret: ClassVar[frozenset[str]] = frozenset()
    _factories: ClassVar[dict[str, Callable[[], object]]] = {}
    _frozen: ClassVar[bool] = True
    _key: ClassVar[Callable[[Any], tuple[object, ...]]]

    def __init_subclass__(cls, *, frozen: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not init.__code__.co_flags & _VARARGS:
            code = init.__code__
            names: tuple[str, ...] = code.co_varnames[1:code.co_argcount]
            cls._field_names = names
            cls._fields_init = init
            cls.__match_args__ = names  # type: ignore[misc]  # as a dataclass has
            compared = [n for n in names if n not in cls._not_compared]
            # attrgetter of one name gives the value, not a 1-tuple: compare tuples either way
            getter = attrgetter(*compared) if compared else (lambda _: ())
            cls._key = getter if len(compared) != 1 else (lambda self: (getter(self),))
        if not frozen:
            cls._frozen = False
            cls.__setattr__ = object.__setattr__  # type: ignore[method-assign]
            cls.__delattr__ = object.__delattr__  # type: ignore[method-assign]
            cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared: unhashable, as a dataclass

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            key = type(self)._key  # from the class: a lambda here must not bind
            return key(self) == key(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(type(self)._key(self))

    if not TYPE_CHECKING:  # hidden from mypy, which would then allow assigning any attribute
        def __setattr__(self, name: str, value: object) -> None:
            raise frozen_error(f"cannot assign to field {name!r}")

        def __delattr__(self, name: str) -> None:
            raise frozen_error(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        shown = []
        for name in self._field_names:
            value = getattr(self, name)
            if name in self._secret and value is not None:
                value = "****"  # reprs end up in logs and tracebacks: show only that it is set
            shown.append(f"{name}={value!r}")
        fields = ", ".join(shown)
        return f"{type(self).__qualname__}({fields})"

    def __replace__(self, **changes: Any) -> Self:
        """``copy.replace(value, field=new)`` (Python 3.13): a new value with *changes*."""
        return type(self)(**{**{n: getattr(self, n) for n in self._field_names}, **changes})

    def __reduce__(self) -> tuple[type[Self], tuple[object, ...]]:
        # rebuilt through __init__: the default way sets slots one by one, which frozen refuses
        return type(self), tuple(getattr(self, n) for n in self._field_names)

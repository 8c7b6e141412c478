"""``NamedTuple`` at a fraction of the start-up cost (for mypy it is ``typing.NamedTuple``).

Every PlanGate command is a new process, and a hook runs one per tool call: what a
module costs to import is paid on every call. ``typing.NamedTuple`` compiles source
text twice per class (one ``compile`` per string annotation for its forward
references, one ``eval`` for ``__new__``): about 0.15-0.4 ms a class, a sizeable part
of a hook's start-up with forty of them. This module builds the same classes without
compiling anything per class: ``__new__`` is made from one code object per number of
fields, renamed for the class's fields, and the other methods are shared.

The classes behave as ``typing.NamedTuple`` classes do: tuple subclasses with
``__slots__ = ()``, fields by position and by name, defaults (a field without one may
not follow a field with one), ``_fields``, ``_field_defaults``, ``_make``,
``_replace``, ``_asdict``, ``__match_args__``, the same ``repr``, pickling, methods,
properties and class attributes from the class body, and the ``__annotations__`` of
the body (as written, not evaluated). Only the class form is provided; generic named
tuples and the functional form are not (nothing here uses them).
"""

from __future__ import annotations

import sys
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    try:
        from _collections import _tuplegetter
    except ImportError:  # another implementation: a property does the same, slower
        from operator import itemgetter

        def _tuplegetter(index: int, doc: str) -> property:
            return property(itemgetter(index), doc=doc)

    _PROHIBITED = frozenset(
        {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
         "_make", "_replace", "_asdict", "_source"}
    )
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
    _TEMPLATES: dict[int, CodeType] = {}

    def _new_code(count: int) -> CodeType:
        """``lambda _cls, _0, ..., _n: tuple.__new__(_cls, (_0, ..., _n))``, compiled once
        per number of fields; the argument names are replaced per class."""
        code = _TEMPLATES.get(count)
        if code is None:
            names = ", ".join(f"_{i}" for i in range(count))
            items = names + ("," if count == 1 else "")
            code = eval(f"lambda _cls, {names}: _tuple_new(_cls, ({items}))").__code__  # noqa: S307
            _TEMPLATES[count] = code
        return code

    _NEW_GLOBALS = {"_tuple_new": tuple.__new__, "__builtins__": {}}

    def _make(cls: type, iterable: Any) -> Any:
        result = tuple.__new__(cls, iterable)
        if len(result) != len(cls._fields):  # type: ignore[attr-defined]
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")  # type: ignore[attr-defined]
        return result

    def _replace(self: Any, /, **kwds: Any) -> Any:
        result = self._make(map(kwds.pop, self._fields, self))
        if kwds:
            raise ValueError(f"Got unexpected field names: {list(kwds)!r}")
        return result

    def _repr(self: Any) -> str:
        pairs = zip(self._fields, self, strict=True)
        shown = ", ".join(f"{name}={value!r}" for name, value in pairs)
        return f"{self.__class__.__name__}({shown})"

    def _asdict(self: Any) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))

    def _getnewargs(self: Any) -> tuple[Any, ...]:
        return tuple(self)

    def _build(typename: str, ns: dict[str, Any]) -> type:
        annotations = ns.get("__annotations__", {})
        fields = tuple(annotations)
        defaults: list[Any] = []
        default_names: list[str] = []
        for name in fields:
            if name.startswith("_"):
                raise ValueError(f"Field names cannot start with an underscore: {name!r}")
            if name in ns:
                defaults.append(ns[name])
                default_names.append(name)
            elif defaults:
                raise TypeError(
                    f"Non-default namedtuple field {name} cannot follow default field"
                    f"{'s' if len(default_names) > 1 else ''} {', '.join(default_names)}"
                )
        arg_list = ", ".join(fields)
        template = _new_code(len(fields))
        code = template.replace(
            co_varnames=("_cls", *fields), co_name="__new__", co_qualname=f"{typename}.__new__"
        )
        new = FunctionType(code, _NEW_GLOBALS, "__new__", tuple(defaults) or None)
        new.__qualname__ = f"{typename}.__new__"
        new.__doc__ = f"Create new instance of {typename}({arg_list})"
        new.__annotations__ = dict(annotations)
        class_ns: dict[str, Any] = {
            "__doc__": f"{typename}({arg_list})",
            "__slots__": (),
            "_fields": fields,
            "_field_defaults": dict(zip(default_names, defaults, strict=True)),
            "__new__": new,
            "_make": classmethod(_make),
            "_replace": _replace,
            "__repr__": _repr,
            "_asdict": _asdict,
            "__getnewargs__": _getnewargs,
            "__match_args__": fields,
            "__annotations__": dict(annotations),
        }
        for index, name in enumerate(fields):
            class_ns[name] = _tuplegetter(index, sys.intern(f"Alias for field number {index}"))
        result = type(typename, (tuple,), class_ns)
        result.__module__ = ns["__module__"]
        for key, value in ns.items():
            if key in _PROHIBITED:
                raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
            if key not in _SPECIAL and key not in fields:
                setattr(result, key, value)
        return result

    class _NamedTupleMeta(type):
        def __new__(cls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:
            if bases != (_NamedTupleBase,):
                raise TypeError("can only inherit from NamedTuple alone")
            return _build(typename, ns)

    _NamedTupleBase = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})

    def NamedTuple(*_args: object, **_kwargs: object) -> type:  # noqa: N802
        """Only the class form is supported: ``class Name(NamedTuple): ...``."""
        raise TypeError("use the class form: class Name(NamedTuple): ...")

    def _mro_entries(_bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (_NamedTupleBase,)

    NamedTuple.__mro_entries__ = _mro_entries

__all__ = ["NamedTuple"]

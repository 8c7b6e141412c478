"""plangate.records.NamedTuple behaves as typing.NamedTuple does, built without compiling.

Each test defines the same class twice, once on each base, and compares what a caller
can observe: construction, fields, defaults, methods, repr, equality, hashing, pickling,
pattern matching and the errors.
"""

from __future__ import annotations

import copy
import pickle
import typing
from typing import Any

import pytest

from plangate.records import NamedTuple


class Fast(NamedTuple):
    """A reason, the fast way."""

    code: str
    message: str
    hint: str = ""
    extra: tuple[str, ...] = ()

    LIMIT = 5

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "hint": self.hint}

    @property
    def loud(self) -> str:
        return self.code.upper()


class Slow(typing.NamedTuple):
    """A reason, the fast way."""

    code: str
    message: str
    hint: str = ""
    extra: tuple[str, ...] = ()

    LIMIT = 5

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "hint": self.hint}

    @property
    def loud(self) -> str:
        return self.code.upper()


class Single(NamedTuple):
    only: int


def _outcome(call: typing.Callable[[], object]) -> object:
    try:
        return ("ok", call())
    except Exception as exc:  # noqa: BLE001 -- the kind and text are what is compared
        return (type(exc).__name__, str(exc).replace("Slow", "Fast"))


CALLS: list[typing.Callable[[type], object]] = [
    lambda c: c("A", "b"),
    lambda c: c("A", "b", "h", ("x",)),
    lambda c: c(code="A", message="b"),
    lambda c: c("A", message="b", extra=("y",)),
    lambda c: c("A"),
    lambda c: c(),
    lambda c: c("A", "b", "h", (), "too many"),
    lambda c: c("A", "b", nope=1),
    lambda c: c("A", "b", code="twice"),
    lambda c: c._make(["a", "b", "c", ()]),
    lambda c: c._make(["a"]),
    lambda c: c("A", "b")._replace(hint="h"),
    lambda c: c("A", "b")._replace(nope=1),
    lambda c: c("A", "b")._asdict(),
    lambda c: repr(c("A", "b", "it's")),
    lambda c: c("A", "b").to_json(),
    lambda c: c("A", "b").loud,
    lambda c: c.LIMIT,
    lambda c: c("A", "b") == ("A", "b", "", ()),
    lambda c: hash(c("A", "b")) == hash(("A", "b", "", ())),
    lambda c: tuple(c("A", "b")),
    lambda c: c("A", "b")[1],
    lambda c: c("A", "b")[1:],
    lambda c: c("A", "b").index("b"),
    lambda c: len(c("A", "b")),
    lambda c: c._fields,
    lambda c: c._field_defaults,
    lambda c: c.__match_args__,
    lambda c: c.__doc__,
    lambda c: c.__new__.__doc__,
    lambda c: c.__slots__,
    lambda c: isinstance(c("A", "b"), tuple),
    lambda c: c.__mro__[1:],
    lambda c: c.code.__doc__,
    lambda c: c("A", "b").__getnewargs__(),
    lambda c: sorted([c("b", "x"), c("a", "y")])[0].code,
    lambda c: c("A", "b") + ("more",),  # noqa: RUF005 -- tuple concatenation is the behaviour
]


@pytest.mark.parametrize("index", range(len(CALLS)))
def test_the_same_behaviour_as_typing_namedtuple(index: int) -> None:
    call = CALLS[index]
    fast = _outcome(lambda: call(Fast))
    slow = _outcome(lambda: call(Slow))
    if isinstance(fast, tuple) and fast[0] == "ok":
        fast = ("ok", repr(fast[1]).replace("Fast", "X"))
        slow = ("ok", repr(slow[1]).replace("Slow", "X"))  # type: ignore[index]
    assert fast == slow


def test_an_instance_is_picklable_and_copyable() -> None:
    value = Fast("A", "b", "h", ("x",))
    assert pickle.loads(pickle.dumps(value)) == value  # noqa: S301 -- our own bytes
    assert type(pickle.loads(pickle.dumps(value))) is Fast  # noqa: S301 -- our own bytes
    assert copy.copy(value) == value
    assert copy.deepcopy(value) == value
    assert Fast.__module__ == __name__
    assert Fast.__qualname__ == "Fast"


def test_pattern_matching_reads_the_fields_in_order() -> None:
    match Fast("A", "b"):
        case Fast(code, message, hint):
            assert (code, message, hint) == ("A", "b", "")
        case _:
            pytest.fail("no match")


def test_a_single_field_class_is_a_one_tuple() -> None:
    assert Single(3) == (3,)
    assert repr(Single(only=4)) == "Single(only=4)"
    assert Single._make([5]).only == 5


def test_the_field_names_are_the_constructor_keywords() -> None:
    import inspect

    assert list(inspect.signature(Fast).parameters) == ["code", "message", "hint", "extra"]
    assert Fast.__new__.__defaults__ == ("", ())


def test_a_field_without_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError, match="Non-default namedtuple field b cannot follow default"):

        class Bad(NamedTuple):
            a: int = 1
            b: int


def test_overwriting_a_namedtuple_attribute_is_refused() -> None:
    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):

        class Bad(NamedTuple):
            a: int

            def _replace(self) -> None:  # type: ignore[override]
                pass


def test_a_field_name_with_an_underscore_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot start with an underscore"):

        class Bad(NamedTuple):
            _a: int


def test_only_the_class_form_exists() -> None:
    with pytest.raises(TypeError, match="class form"):
        NamedTuple("X", [("a", int)])  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="only inherit from NamedTuple"):

        class Mixed(NamedTuple, dict):  # type: ignore[misc]
            a: int


def test_defining_a_class_compiles_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from plangate import records

    records._new_code(7)  # the one template for seven fields, built before counting
    calls: list[object] = []
    for name in ("compile", "eval", "exec"):
        real = getattr(builtins, name)

        def counting(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            calls.append(args[0])
            return _real(*args, **kwargs)

        monkeypatch.setattr(builtins, name, counting)

    class Seven(NamedTuple):
        a: int
        b: int
        c: int
        d: int
        e: int
        f: int
        g: int = 0

    monkeypatch.undo()
    assert Seven(1, 2, 3, 4, 5, 6).g == 0
    assert calls == []

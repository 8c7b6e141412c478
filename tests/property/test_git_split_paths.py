"""git's NUL-separated path lists, decoded at once, against decoding each path alone."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.git import _split_z_paths
from support.branches import Branches

# Bytes that make invalid and truncated UTF-8 likely, next to valid multi-byte characters.
_PIECES = st.sampled_from([b"a", b"/", b"\xc3\xa9", b"\xe2\x82", b"\xf0\x9f", b"\xff",
                           b"\x80", b"\xe2\x82\xac", b"b"])
_PATH = st.lists(_PIECES, min_size=1, max_size=4).map(b"".join)
# Output as git prints it (each path followed by a NUL), or cut short; paths repeat.
_OUTPUT = st.builds(
    lambda paths, ending: b"".join(p + b"\x00" for p in paths)[: len(b"".join(paths)) + ending],
    st.lists(st.one_of(_PATH, st.sampled_from([b"a", b"\xe2\x82", b"a/\xff"])), max_size=8),
    st.integers(min_value=0, max_value=8),
)


def _each_alone(raw: bytes) -> list[str]:
    """The reference: each path decoded on its own, then unique and sorted."""
    return sorted({p.decode("utf-8", "surrogateescape") for p in raw.split(b"\x00") if p})


def test_a_path_list_decodes_as_each_path_alone() -> None:
    seen = Branches()

    @settings(max_examples=500)
    @given(_OUTPUT)
    def check(raw: bytes) -> None:
        seen.example()
        expected = _each_alone(raw)
        assert _split_z_paths(raw) == expected
        seen.reached("invalid UTF-8 in a path", any("\udc80" <= ch <= "\udcff"
                                                     for p in expected for ch in p))
        seen.reached("a path twice", len(expected) < len([p for p in raw.split(b"\x00") if p]))

    check()
    seen.assert_share("invalid UTF-8 in a path")
    seen.assert_share("a path twice")

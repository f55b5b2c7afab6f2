"""The key encodings are an on-disk format: golden values and order properties.

A failure of a golden test means existing databases would no longer read back
correctly. Do not update the expected bytes; version the format instead.
"""

from __future__ import annotations

import base64
import hashlib
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from partita.engine.model.keys import (
    encode_partition,
    encode_sort,
    encode_tuple,
    partition_hash,
    prefix_successor,
    tuple_hash,
)

# --- golden values ----------------------------------------------------------------------

SORT_GOLDEN = [
    ("N", "0", "02"),
    ("N", "1", "03810200"),
    ("N", "100", "03820200"),
    ("N", "0.5", "03803300"),
    ("N", "123", "0382021800"),
    ("N", "-1", "017efdff"),
    ("N", "-123", "017dfde7ff"),
    ("N", "-0.05", "017ff9ff"),
    ("N", "1E-130", "03400200"),
    ("N", "9.9999999999999999999999999999999999999E+125", "03bf" + "64" * 19 + "00"),
    ("S", "a", "61"),
    ("S", "é", "c3a9"),
    ("S", "", ""),
    ("B", "AAH/", "0001ff"),
]


@pytest.mark.parametrize(("type_", "value", "hex_"), SORT_GOLDEN)
def test_encode_sort_golden(type_: str, value: str, hex_: str) -> None:
    assert encode_sort(type_, value).hex() == hex_


PARTITION_GOLDEN = [
    ("S", "a", "610001"),
    ("S", "a\x00b", "6100ff620001"),
    ("B", "AAH/", "00ff01ff0001"),
    ("N", "1", "03810200"),
    ("N", "-123", "017dfde7ff"),
]


@pytest.mark.parametrize(("type_", "value", "hex_"), PARTITION_GOLDEN)
def test_encode_partition_golden(type_: str, value: str, hex_: str) -> None:
    assert encode_partition(type_, value).hex() == hex_


HASH_GOLDEN = [
    ("S", "a", "f6558e516275dee2"),
    ("B", "YQ==", "f6558e516275dee2"),  # the same bytes as S "a"
    ("N", "1", "c3a0310aed78739b"),
    ("N", "0", hashlib.md5(b"Outliers\x80").hexdigest()[:16]),
    ("N", "-123", hashlib.md5(b"Outliers\x3d\x64\x4e\x66").hexdigest()[:16]),
    ("N", "0.5", hashlib.md5(b"Outliers\xc0\x33").hexdigest()[:16]),
    ("N", "100", hashlib.md5(b"Outliers\xc2\x02").hexdigest()[:16]),
]


@pytest.mark.parametrize(("type_", "value", "hex_"), HASH_GOLDEN)
def test_partition_hash_golden(type_: str, value: str, hex_: str) -> None:
    assert partition_hash(type_, value).hex() == hex_


def test_partition_hash_is_md5_of_the_salted_key_bytes() -> None:
    assert partition_hash("S", "user#1") == hashlib.md5(b"Outliers" + b"user#1").digest()[:8]
    # Numbers hash in their normalized value, whatever the wire spelling.
    assert partition_hash("N", "1E2") == partition_hash("N", "100")
    assert partition_hash("N", "-0") == partition_hash("N", "0")


# Multi-attribute GSI keys: each component in its partition encoding, concatenated;
# the hash of several HASH attributes is MD5("Outliers" + that concatenation).
TUPLE_GOLDEN = [
    ((("S", "a"), ("N", "1")), "61000103810200", "95d719e5b71d7da9"),
    ((("S", "ab"), ("S", "c")), "61620001630001", "05d1a965e32f8cae"),
    ((("S", "a"), ("S", "bc")), "61000162630001", "820cd02ed0cca955"),
    ((("B", "AAH/"), ("N", "-123"), ("S", "x")), "00ff01ff0001017dfde7ff780001", "2a0b3f9527013b9e"),
]


@pytest.mark.parametrize(("parts", "hex_", "hash_hex"), TUPLE_GOLDEN)
def test_tuple_encoding_and_hash_golden(parts: tuple[tuple[str, str], ...], hex_: str, hash_hex: str) -> None:
    assert encode_tuple(parts).hex() == hex_
    assert tuple_hash(parts).hex() == hash_hex
    assert tuple_hash(parts) == hashlib.md5(b"Outliers" + bytes.fromhex(hex_)).digest()[:8]


def test_one_component_tuple_is_the_single_attribute_format() -> None:
    """An index with one HASH and one RANGE attribute keeps the single-attribute bytes."""
    for type_, value, hex_ in PARTITION_GOLDEN:
        assert encode_tuple(((type_, value),)).hex() == hex_
    for type_, value, hex_ in HASH_GOLDEN:
        assert tuple_hash(((type_, value),)).hex() == hex_


def test_prefix_successor() -> None:
    assert prefix_successor(b"ab") == b"ac"
    assert prefix_successor(b"a\xff\xff") == b"b"
    assert prefix_successor(b"\x00") == b"\x01"
    assert prefix_successor(b"\xff\xff") is None
    assert prefix_successor(b"") is None


# --- order properties ----------------------------------------------------------------------

# Numbers DynamoDB can store: up to 38 significant digits, 1E-130 <= |n| < 1E126.
significands = st.integers(min_value=1, max_value=10**38 - 1)


@st.composite
def dynamo_numbers(draw: st.DrawFn) -> Decimal:
    if draw(st.integers(min_value=0, max_value=20)) == 0:
        return Decimal(0)
    digits = draw(significands)
    length = len(str(digits))
    # choose the exponent so the adjusted exponent stays in [-130, 125]
    exponent = draw(st.integers(min_value=-130 - (length - 1), max_value=125 - (length - 1)))
    value = Decimal(f"{digits}E{exponent}")  # exact; scaleb would round to 28 digits
    # copy_negate is exact; unary minus rounds to the context's 28 digits (9.99...E125 -> -1E126)
    return value.copy_negate() if draw(st.booleans()) else value


def as_text(value: Decimal) -> str:
    return str(value)  # may use an exponent; the encoder normalizes


@given(dynamo_numbers(), dynamo_numbers())
def test_number_sort_order_is_numeric_order(a: Decimal, b: Decimal) -> None:
    ea, eb = encode_sort("N", as_text(a)), encode_sort("N", as_text(b))
    assert (ea < eb) == (a < b)
    assert (ea == eb) == (a == b)
    pa, pb = encode_partition("N", as_text(a)), encode_partition("N", as_text(b))
    assert (pa < pb) == (a < b)


@given(st.lists(dynamo_numbers(), min_size=2, max_size=2, unique=True))
def test_number_encoding_is_prefix_free(pair: list[Decimal]) -> None:
    a, b = (encode_partition("N", as_text(x)) for x in pair)
    assert not a.startswith(b) and not b.startswith(a)


@given(dynamo_numbers())
def test_number_spellings_encode_alike(value: Decimal) -> None:
    plain = format(value, "f")
    assert encode_sort("N", plain) == encode_sort("N", as_text(value))
    assert encode_sort("N", plain + ("0" if "." in plain else ".0")) == encode_sort("N", plain)


def test_number_boundaries_order() -> None:
    ordered = [
        "-9.9999999999999999999999999999999999999E+125",
        "-1E+125",
        "-100",
        "-99",
        "-1.01",
        "-1",
        "-0.99",
        "-1E-130",
        "0",
        "1E-130",
        "0.99",
        "1",
        "1.01",
        "99",
        "100",
        "1E+125",
        "9.9999999999999999999999999999999999999E+125",
    ]
    encoded = [encode_sort("N", n) for n in ordered]
    assert encoded == sorted(encoded)
    assert len(set(encoded)) == len(encoded)


@given(st.text(), st.text())
def test_string_sort_and_partition_order_is_utf8_order(a: str, b: str) -> None:
    ua, ub = a.encode("utf-8"), b.encode("utf-8")
    assert (encode_sort("S", a) < encode_sort("S", b)) == (ua < ub)
    pa, pb = encode_partition("S", a), encode_partition("S", b)
    assert (pa < pb) == (ua < ub)
    if a != b:
        assert not pa.startswith(pb) and not pb.startswith(pa)


@given(st.binary(), st.binary())
def test_binary_sort_and_partition_order_is_byte_order(a: bytes, b: bytes) -> None:
    ta, tb = base64.b64encode(a).decode(), base64.b64encode(b).decode()
    assert (encode_sort("B", ta) < encode_sort("B", tb)) == (a < b)
    pa, pb = encode_partition("B", ta), encode_partition("B", tb)
    assert (pa < pb) == (a < b)
    if a != b:
        assert not pa.startswith(pb) and not pb.startswith(pa)


@given(st.binary(min_size=1), st.binary())
def test_prefix_successor_bounds_the_prefix_range(prefix: bytes, tail: bytes) -> None:
    end = prefix_successor(prefix)
    key = prefix + tail
    assert key >= prefix
    if end is not None:
        assert key < end
        assert end > prefix


# --- multi-attribute keys: tuple order ------------------------------------------------------


def _component(kind: str) -> st.SearchStrategy[tuple[str, str, object]]:
    """(type, wire value, Python value whose order is DynamoDB's order for that type)."""
    if kind == "S":
        return st.text(max_size=6).map(lambda t: ("S", t, t.encode("utf-8")))
    if kind == "B":
        return st.binary(max_size=6).map(lambda b: ("B", base64.b64encode(b).decode(), b))
    return dynamo_numbers().map(lambda n: ("N", as_text(n), n))


@st.composite
def key_tuples(draw: st.DrawFn) -> tuple[list[tuple[str, str, object]], list[tuple[str, str, object]]]:
    """Two tuples of one schema (1 to 4 components, each of its own type)."""
    kinds = draw(st.lists(st.sampled_from("SNB"), min_size=1, max_size=4))
    first = [draw(_component(k)) for k in kinds]
    # Share a random-length prefix so ties in leading components are common.
    shared = draw(st.integers(min_value=0, max_value=len(kinds)))
    second = first[:shared] + [draw(_component(k)) for k in kinds[shared:]]
    return first, second


@given(key_tuples())
def test_tuple_encoding_sorts_like_python_tuples(pair: tuple[list[tuple[str, str, object]], ...]) -> None:
    a, b = pair
    ea = encode_tuple(tuple((t, v) for t, v, _ in a))
    eb = encode_tuple(tuple((t, v) for t, v, _ in b))
    ka, kb = tuple(x for _, _, x in a), tuple(x for _, _, x in b)
    assert (ea < eb) == (ka < kb)
    assert (ea == eb) == (ka == kb)
    if ka != kb:  # self-delimiting: the table key can follow without disturbing the order
        assert not ea.startswith(eb) and not eb.startswith(ea)

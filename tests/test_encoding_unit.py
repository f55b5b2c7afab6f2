"""Content codings as pure functions: Accept-Encoding's walk and the deflate reader.

The HTTP-level tests (test_http_compression.py) pin every header value
recorded against DynamoDB through both servers; these properties check the
shape of the walk around those points (what it ignores, what it never
does) and that the deflate reader takes any zlib stream and nothing else.
"""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from partita.protocol.encoding import (
    _COMMON,
    BadEncoding,
    TooLarge,
    _negotiate,
    accepted_coding,
    decode_body,
)

LIMIT = 1 << 20

# Elements the walk skips whatever their position: unknown names and identity at any q.
_ignored = st.sampled_from(["br", "zstd", "x-gzip", "compress", "", " ", '"gzip"', "gzip br", "gzip:q=1",
                            "identity", "identity;q=0", "identity;q=0.5", "br;q=1", "dog"])
_quality = st.sampled_from(["", ";q=0", ";q=1", ";q=0.5", ";q=0.2", ";q=0.", ";q=31", ";q=-1", ";q=0.x",
                            "; q=0.5", ";q =0", ";nq=0", ";q=0;q=1", ";level=1"])
_element = st.builds(lambda name, quality: name + quality,
                     st.sampled_from(["gzip", "deflate", "*", "GZIP", "Deflate"]), _quality)
_elements = st.lists(st.one_of(_element, _ignored), max_size=6)


def _header(elements: list[str]) -> bytes:
    return ",".join(elements).encode()


def test_the_values_answered_without_parsing_agree_with_the_walk() -> None:
    for value, chosen in _COMMON.items():
        assert _negotiate(value) == chosen, value


@given(_elements, st.data())
def test_ignored_elements_change_nothing(elements: list[str], data: st.DataObject) -> None:
    extra = data.draw(st.lists(_ignored, min_size=1, max_size=3))
    mixed = list(elements)
    for element in extra:
        mixed.insert(data.draw(st.integers(0, len(mixed))), element)
    assert _negotiate(_header(mixed)) == _negotiate(_header(elements))


@given(_elements, st.sampled_from([" ", "  ", "\t"]))
def test_names_are_trimmed_and_case_insensitive(elements: list[str], space: str) -> None:
    spaced = [space + e.partition(";")[0].upper() + space + ";" + e.partition(";")[2] if ";" in e
              else space + e.upper() + space for e in elements]
    assert _negotiate(_header(spaced)) == _negotiate(_header(elements))


@given(st.sampled_from(["gzip", "deflate"]), st.lists(_ignored, max_size=3))
def test_one_coding_named_alone_is_chosen_unless_refused(coding: str, ignored: list[str]) -> None:
    assert _negotiate(_header([*ignored, coding])) == coding.encode()
    assert _negotiate(_header([*ignored, coding + ";q=0.001"])) == coding.encode()
    assert _negotiate(_header([*ignored, coding + ";q=0"])) is None
    assert _negotiate(_header([*ignored, coding + ";q=-3"])) is None


@given(st.binary(max_size=300))
def test_any_value_gets_an_answer(value: bytes) -> None:
    assert accepted_coding(value) in (None, b"gzip", b"deflate")
    assert accepted_coding(value) == _negotiate(value)  # remembered as computed


@given(st.binary(max_size=3000), st.integers(-1, 9), st.binary(max_size=40))
def test_any_zlib_stream_inflates_and_what_follows_is_not_read(payload: bytes, level: int, tail: bytes) -> None:
    packed = zlib.compress(payload, level)
    assert decode_body(packed, b"deflate", LIMIT) == payload
    assert decode_body(packed + tail, b"deflate", LIMIT) == payload


@given(st.binary(max_size=200))
def test_other_bytes_are_undecodable_or_a_stream(body: bytes) -> None:
    try:
        inflated = decode_body(body, b"deflate", LIMIT)
    except BadEncoding:
        return
    # Accepted only when a zlib stream begins the body.
    stream = zlib.decompressobj()
    assert stream.decompress(body) == inflated and stream.eof


def test_deflate_output_is_capped_at_the_limit() -> None:
    packed = zlib.compress(b"x" * (LIMIT + 1))
    with pytest.raises(TooLarge):
        decode_body(packed, b"deflate", LIMIT)
    assert decode_body(zlib.compress(b"x" * LIMIT), b"deflate", LIMIT) == b"x" * LIMIT

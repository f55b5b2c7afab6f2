"""SigV4's hashing (partita/protocol/auth/digest.py): the C accelerator and its Python fallback agree.

In-process, no server: both are held to the textbook HMAC-SHA256 of the
string to sign over the canonical request, as botocore computes it (the
server tests verify real SDK signatures through whichever is installed).
"""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from partita.protocol.auth import digest

ACCELERATED = pytest.mark.skipif(not digest.ACCELERATED, reason="the C accelerator is not built")
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))


def expected_signature(key: bytes, head: bytes, to_sign: bytes, body: bytes) -> bytes:
    canonical = head + hashlib.sha256(body).hexdigest().encode()
    string = to_sign + hashlib.sha256(canonical).hexdigest().encode()
    return hmac.new(key, string, hashlib.sha256).hexdigest().encode()


def states(implementation: tuple, key: bytes, head: bytes, to_sign: bytes) -> object:  # type: ignore[type-arg]
    """The joined states of a signature's fixed parts, as sigv4.Plan and Form make them."""
    state, join, _ = implementation
    padded = key.ljust(64, b"\0")
    inner = state(to_sign, state(padded.translate(_IPAD)))
    return join(state(head), inner, state(padded.translate(_OPAD)))


IMPLEMENTATIONS = [
    pytest.param((digest.py_state, digest.py_join, digest.py_check), id="python"),
    pytest.param((digest.state, digest.join, digest.check), id="accelerated", marks=ACCELERATED),
]


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@settings(max_examples=300, deadline=None)
@given(
    key=st.binary(min_size=32, max_size=32),  # a SigV4 signing key is one SHA-256 digest
    head=st.binary(max_size=300),
    to_sign=st.binary(max_size=200),
    body=st.binary(max_size=2000),
    flip=st.integers(min_value=0, max_value=63),
)
def test_a_signature_verifies_exactly_when_it_is_the_hmac(
    implementation: tuple, key: bytes, head: bytes, to_sign: bytes, body: bytes, flip: int  # type: ignore[type-arg]
) -> None:
    check = implementation[2]
    joined = states(implementation, key, head, to_sign)
    good = expected_signature(key, head, to_sign, body)
    assert check(joined, body, good) is True
    wrong = good[:flip] + (b"0" if good[flip:flip + 1] != b"0" else b"1") + good[flip + 1:]
    assert check(joined, body, wrong) is False
    assert check(joined, body, good.upper()) is (good.upper() == good)  # hex is lower-case
    assert check(joined, body, good[:-1]) is False
    assert check(joined, body, good + b"0") is False
    assert check(joined, body + b" ", good) is False
    # the states are not consumed: the same ones verify again
    assert check(joined, body, good) is True


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_large_bodies_and_states_continued_in_steps(implementation: tuple) -> None:  # type: ignore[type-arg]
    """Past 64 KiB the C module hashes without the GIL; a state continued in steps is the state of the whole."""
    state, join, check = implementation
    key = hashlib.sha256(b"k").digest()
    head = b"POST\n/\n\nhost:x\n\nhost\n" * 7
    to_sign = b"AWS4-HMAC-SHA256\n20261202T000000Z\n"
    body = bytes(range(256)) * 1024 + b"tail"
    good = expected_signature(key, head, to_sign, body)
    joined = states(implementation, key, head, to_sign)
    assert check(joined, body, good)
    _, inner, outer = states((state, lambda *three: three, None), key, head, to_sign)
    assert check(join(state(head[50:], state(head[:50])), inner, outer), body, good)
    assert check(joined, memoryview(body), good)


@ACCELERATED
def test_the_accelerator_refuses_what_is_not_its_state() -> None:
    good = digest.state(b"x")
    joined = digest.join(good, good, good)
    for bad in (b"", good[:-1], good + b"\0", "text", None, hashlib.sha256(b"x")):
        with pytest.raises(TypeError):
            digest.join(bad, good, good)
        with pytest.raises(TypeError):
            digest.check(bad, b"", b"0" * 64)
        if bad is not None:  # None: a new state
            with pytest.raises(TypeError):
                digest.state(b"y", bad)
    for bad in (joined[:-1], joined + b"\0", good):
        with pytest.raises(TypeError):
            digest.check(bad, b"", b"0" * 64)
    with pytest.raises(TypeError):
        digest.check(joined, "a str body", b"0" * 64)
    with pytest.raises(TypeError):
        digest.check(joined, b"")


def test_the_install_built_the_accelerator() -> None:
    """`pip install` (./dev) compiles _digest.c; without it `--auth` costs about twice as much.

    It fails where gcc or OpenSSL's headers (Debian's libssl-dev) are missing:
    the server still works then, on digest.py's Python.
    """
    assert digest.ACCELERATED

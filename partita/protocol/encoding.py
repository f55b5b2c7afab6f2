"""Content codings: compressed request bodies and compressed answers, as DynamoDB does them.

The facts (from test suites run against the real service, mostly ScyllaDB
Alternator's `test_compressed_request.py` / `test_compressed_response.py`
/ `test_crc.py`, and the AWS SDKs' notes on CRC32):

- Requests: `Content-Encoding: gzip` and `deflate` are understood; any
  other coding, or a body that is not in its coding (an empty one
  included), a truncated stream or a stream without its trailer gets
  HTTP 500. gzip: concatenated members are one body, and bytes after a
  complete member that do not start another member are ignored (the
  service reads with a lenient gzip reader; Alternator reports it as a
  DynamoDB bug, and Partita does what the service does). deflate: one
  zlib stream (RFC 1950: header, deflate data, Adler-32 trailer, as RFC
  9110 defines the coding); a second stream joined to it is not read, so
  what follows the first stream is ignored as after a gzip member.
  Since 2026 the service also refuses a body that inflates past its
  request limit (the "decompression bomb" fix); Partita answers that with
  413, as for a plain body over 16 MB.
- Answers: compressed when the client accepts gzip or deflate and the body
  is at least 4 KB; the coding is chosen from `Accept-Encoding` by the
  walk `accepted_coding` describes, only the first `Accept-Encoding`
  header counts (the protocol layer keeps the first value of a repeated
  header), and `x-amz-crc32` is computed over the bytes on the wire
  (compressed). No chunked transfer: every answer has a Content-Length,
  as DynamoDB's do.
"""

from __future__ import annotations

import re
import zlib

COMPRESSION_THRESHOLD = 4096
"""Answers of at least this many bytes are compressed when the client asks.

DynamoDB's threshold is 4 KB; whether exactly 4096 bytes is compressed is
not on record (Partita compresses it, as Alternator does)."""

COMPRESSION_LEVEL = 1
"""zlib's fastest level: Partita mostly serves clients on the same machine,
where CPU matters more than bytes; the service's level is not known."""

_CODINGS = (b"gzip", b"deflate")  # the service's preference when a wildcard allows both
_WILDCARD = b"*"
_NAMES = frozenset((*_CODINGS, _WILDCARD))  # the names Accept-Encoding is read for
_GZIP_MEMBER = b"\x1f\x8b\x08"
_GZIP_HEADER_BYTES = 10
_GZIP_WBITS = 31  # zlib's window bits for a gzip member (RFC 1952)
_ZLIB_WBITS = 15  # and for a zlib stream (RFC 1950), what HTTP calls deflate
_WINDOW = 64 * 1024
_MAX_MEMBERS = 64
_QUALITY = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_COMMON: dict[bytes, bytes | None] = {
    b"identity": None,  # botocore, and so boto3 and the AWS CLI
    b"gzip": b"gzip",
    b"deflate": b"deflate",
    b"gzip, deflate": b"gzip",  # Python's requests, curl --compressed without brotli
    b"gzip,deflate": b"gzip",
    b"gzip, deflate, br": b"gzip",  # browsers (the console's fetches are small: rarely asked)
    b"gzip, deflate, br, zstd": b"gzip",
    b"br, gzip, deflate": b"gzip",
    b"*": b"gzip",
}
"""Accept-Encoding values clients send, answered without parsing (a test checks them against the walk)."""
_NEGOTIATED: dict[bytes, bytes | None] = dict(_COMMON)
_NEGOTIATED_MAX = 512  # distinct Accept-Encoding values remembered (clients send one)
_NEGOTIATED_LENGTH = 256


class BadEncoding(Exception):
    """The body cannot be decoded: DynamoDB answers 500."""


class TooLarge(Exception):
    """The decoded body is over the request limit: answered as a body over the limit."""


def decode_body(body: bytes, coding: bytes, limit: int) -> bytes:
    """The request body once its Content-Encoding is undone (at most `limit` bytes)."""
    coding = coding.strip().lower()
    if coding == b"gzip":
        return gunzip(body, limit)
    if coding == b"deflate":
        return inflate(body, limit)
    if coding in (b"", b"identity"):
        return body
    raise BadEncoding


def gunzip(body: bytes, limit: int) -> bytes:
    """Inflate one or more gzip members, checking each trailer's CRC32 and length.

    Members are capped, so a body of a million empty members (20 bytes
    each) costs no more than a few (the service's behaviour past a handful
    of members is not on record; over the cap is undecodable).
    """
    view = memoryview(body)
    parts: list[bytes] = []
    size = 0
    offset = 0
    for _ in range(_MAX_MEMBERS):
        offset, size = _inflate_stream(view, offset, _GZIP_WBITS, limit, parts, size)
        if len(body) - offset < _GZIP_HEADER_BYTES or body[offset : offset + 3] != _GZIP_MEMBER:
            # End of input, or trailing bytes that are not a member: ignored.
            return parts[0] if len(parts) == 1 else b"".join(parts)
    raise BadEncoding


def inflate(body: bytes, limit: int) -> bytes:
    """Inflate the zlib stream (RFC 1950) that `Content-Encoding: deflate` names, checking its Adler-32.

    One stream: zlib has no members, and the service does not read a second
    stream joined to the first (Alternator's suite, run against it). What
    follows the first stream is ignored, as the service ignores what follows
    a gzip member: a reader that stops at the end of its stream, which is
    what both observations show (what it answers to a joined body is then
    whatever the first stream holds; that answer itself is not on record).
    """
    parts: list[bytes] = []
    _inflate_stream(memoryview(body), 0, _ZLIB_WBITS, limit, parts, 0)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _inflate_stream(
    body: memoryview, offset: int, wbits: int, limit: int, parts: list[bytes], size: int
) -> tuple[int, int]:
    """Inflate the one stream that starts at `offset` into `parts`: (offset after it, bytes so far).

    Inflates at most limit + 1 bytes in all, so a small body that would
    inflate to gigabytes costs no more than the limit. Input is fed in
    windows, so that zlib's copy of the bytes left after a stream is one
    window, not the rest of the body. A stream that ends before its
    trailer, or does not decode, is BadEncoding (an empty body included).
    """
    inflater = zlib.decompressobj(wbits=wbits)
    end = len(body)
    while not inflater.eof:
        if offset >= end:  # truncated, or the trailer is missing
            raise BadEncoding
        window = body[offset : offset + _WINDOW]
        offset += len(window)
        try:
            part = inflater.decompress(window, limit + 1 - size)
        except zlib.error:
            raise BadEncoding from None
        size += len(part)
        if size > limit:  # also the only way output stops before the input
            raise TooLarge
        parts.append(part)
    return offset - len(inflater.unused_data), size


def accepted_coding(accept_encoding: bytes) -> bytes | None:
    """The coding (b"gzip" / b"deflate") to answer with, or None for none.

    DynamoDB's reading of the header, as a walk that reproduces every
    header/answer pair recorded against the service (40, in Alternator's
    `test_compressed_response.py`; `test_http_compression.py` holds them
    all). It is not RFC 9110's: a `q=` found anywhere in a parameter counts
    (`nq=0` is q=0, `q =0` is no quality at all), a quality that does not
    parse is skipped rather than refused, and ties keep the earlier coding.

    1. Elements are split on "," and parameters on ";"; the name, trimmed
       and case-insensitive, must be gzip, deflate or `*`: anything else
       (br, x-gzip, `"gzip"`, `gzip br`, identity at any q) is ignored.
    2. An element's q is the first parameter holding `q=` whose rest,
       trimmed, is a decimal number, clamped to [0, 1]; else 1.
    3. A coding met again counts only if its earlier element had q = 0.
    4. Walking in order from "no compression" (weight 0), an element with
       a greater q takes the choice; a coding named after a chosen `*`
       takes it with an equal q too.
    5. A chosen `*` is gzip if gzip was never named, else deflate if it
       was never named, else the first of the two whose q is above 0.

    The answers for the values clients send are written out (botocore
    sends `identity`); others are computed once and remembered.
    """
    try:
        return _NEGOTIATED[accept_encoding]
    except KeyError:
        pass
    chosen = _negotiate(accept_encoding)
    if len(accept_encoding) <= _NEGOTIATED_LENGTH:  # what a client really sends, not a 16 KB oddity
        if len(_NEGOTIATED) >= _NEGOTIATED_MAX:
            _NEGOTIATED.clear()
            _NEGOTIATED.update(_COMMON)
        _NEGOTIATED[accept_encoding] = chosen
    return chosen


def _negotiate(accept_encoding: bytes) -> bytes | None:
    qualities: dict[bytes, float] = {}  # name -> the q of its element that counts
    choice: bytes | None = None
    weight = 0.0  # no compression: the fallback, below every q above 0
    for element in accept_encoding.split(b","):
        name, *params = element.split(b";")
        name = name.strip().lower()
        if name not in _NAMES:
            continue
        earlier = qualities.get(name)
        if earlier is not None and earlier != 0.0:
            continue
        quality = qualities[name] = _quality(params)
        if quality > weight or (choice == _WILDCARD and name != _WILDCARD and quality >= weight):
            choice, weight = name, quality
    if choice != _WILDCARD:
        return choice
    for coding in _CODINGS:
        if coding not in qualities:
            return coding
    for coding in _CODINGS:
        if qualities[coding] > 0.0:
            return coding
    return None


def _quality(params: list[bytes]) -> float:
    for param in params:
        at = param.find(b"q=")
        if at < 0:
            continue
        text = param[at + 2 :].strip()
        if _QUALITY.fullmatch(text):
            return min(max(float(text), 0.0), 1.0)
    return 1.0


def compress(payload: bytes, coding: bytes) -> bytes:
    """`payload` in `coding`: gzip (RFC 1952) or deflate (zlib format, RFC 1950)."""
    return zlib.compress(payload, COMPRESSION_LEVEL, _GZIP_WBITS if coding == b"gzip" else _ZLIB_WBITS)

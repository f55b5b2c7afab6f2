"""Content codings: compressed request bodies and compressed answers, as DynamoDB does them.

The facts (from test suites run against the real service, mostly ScyllaDB
Alternator's `test_compressed_request.py` / `test_compressed_response.py`
/ `test_crc.py`, and the AWS SDKs' notes on CRC32):

- Requests: only `Content-Encoding: gzip` is understood. Any other coding,
  a body that is not gzip (an empty one included), a truncated stream or a
  stream without its trailer gets HTTP 500. Concatenated gzip members are
  one body. Bytes after a complete member that do not start another member
  are ignored (the service reads with a lenient gzip reader; Alternator
  reports it as a DynamoDB bug, and Partita does what the service does).
  Since 2026 the service also refuses a body that inflates past its
  request limit (the "decompression bomb" fix); Partita answers that with
  413, as for a plain body over 16 MB.
- Answers: compressed when the client accepts gzip or deflate and the body
  is at least 4 KB; the coding is chosen from `Accept-Encoding` by quality
  then order (rules below), only the last `Accept-Encoding` header counts,
  and `x-amz-crc32` is computed over the bytes on the wire (compressed).
  No chunked transfer: every answer has a Content-Length, as DynamoDB's do.
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
_GZIP_MEMBER = b"\x1f\x8b\x08"
_GZIP_HEADER_BYTES = 10
_WINDOW = 64 * 1024
_MAX_MEMBERS = 64
_QUALITY = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NEGOTIATED: dict[bytes, bytes | None] = {}
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
    if coding in (b"", b"identity"):
        return body
    raise BadEncoding


def gunzip(body: bytes, limit: int) -> bytes:
    """Inflate one or more gzip members, checking each trailer's CRC32 and length.

    Inflates at most limit + 1 bytes, so a small body that would inflate to
    gigabytes costs no more than the limit. Input is fed in windows, so that
    zlib's copy of the bytes left after a member is one window, not the
    rest of the body; and members are capped, so a body of a million empty
    members (20 bytes each) costs no more than a few (the service's
    behaviour past a handful of members is not on record; over the cap is
    undecodable).
    """
    if not body:
        raise BadEncoding
    view = memoryview(body)
    end = len(body)
    parts = []
    size = 0
    offset = 0
    for _ in range(_MAX_MEMBERS):
        inflater = zlib.decompressobj(wbits=31)
        while not inflater.eof:
            if offset >= end:  # truncated, or the trailer is missing
                raise BadEncoding
            window = view[offset : offset + _WINDOW]
            offset += len(window)
            try:
                part = inflater.decompress(window, limit + 1 - size)
            except zlib.error:
                raise BadEncoding from None
            size += len(part)
            if size > limit:  # also the only way output stops before the input
                raise TooLarge
            parts.append(part)
        offset -= len(inflater.unused_data)
        if end - offset < _GZIP_HEADER_BYTES or body[offset : offset + 3] != _GZIP_MEMBER:
            # End of input, or trailing bytes that are not a member: ignored.
            return parts[0] if len(parts) == 1 else b"".join(parts)
    raise BadEncoding


def accepted_coding(accept_encoding: bytes) -> bytes | None:
    """The coding (b"gzip" / b"deflate") to answer with, or None for none.

    The rules DynamoDB applies, as recorded against it: names are
    case-insensitive and unknown names (br, x-gzip, "gzip", ...) are ignored;
    `q` defaults to 1, the first `q` of an entry counts, a `q` that does not
    parse is 1, above 1 is 1, and 0 or less refuses the coding; a coding
    listed several times takes its highest `q`; `*` stands for every coding
    not listed; `identity` is never preferred over compressing. The highest
    quality wins; on a tie a listed coding beats one allowed by `*`, then the
    first listed wins (gzip before deflate under `*`).
    """
    try:
        return _NEGOTIATED[accept_encoding]
    except KeyError:
        pass
    chosen = _negotiate(accept_encoding)
    if len(accept_encoding) <= _NEGOTIATED_LENGTH:  # what a client really sends, not a 16 KB oddity
        if len(_NEGOTIATED) >= _NEGOTIATED_MAX:
            _NEGOTIATED.clear()
        _NEGOTIATED[accept_encoding] = chosen
    return chosen


def _negotiate(accept_encoding: bytes) -> bytes | None:
    listed: dict[bytes, tuple[float, int]] = {}  # coding -> (highest q, first position)
    for position, entry in enumerate(accept_encoding.split(b",")):
        name, *params = entry.split(b";")
        name = name.strip().lower()
        if name not in _CODINGS and name != b"*":
            continue
        quality = 1.0
        for param in params:
            key, equals, value = param.partition(b"=")
            if equals and key.strip().lower() == b"q":
                quality = _quality(value.strip())
                break
        best, first = listed.get(name, (quality, position))
        listed[name] = (max(best, quality), first)
    wildcard = listed.get(b"*")
    ranked = []
    for preference, coding in enumerate(_CODINGS):
        if coding in listed:
            quality, position = listed[coding]
            ranked.append((-quality, 0, position, coding))
        elif wildcard is not None:
            ranked.append((-wildcard[0], 1, preference, coding))
    ranked = [rank for rank in ranked if rank[0] < 0]
    return min(ranked)[3] if ranked else None


def _quality(text: bytes) -> float:
    if not _QUALITY.fullmatch(text):
        return 1.0
    return min(float(text), 1.0)


def compress(payload: bytes, coding: bytes) -> bytes:
    """`payload` in `coding`: gzip (RFC 1952) or deflate (zlib format, RFC 1950)."""
    return zlib.compress(payload, COMPRESSION_LEVEL, 31 if coding == b"gzip" else 15)

"""Java look-alikes for the shape validator's messages: hash orders and bounded ``toString``.

The service is a Java program: it visits members in ``HashMap`` order and
renders values with ``toString``. These functions imitate both, and bound
the rendering so that describing a huge or deeply nested value costs no more
than the few kilobytes a message may echo.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import orjson

from partita.errors import ELLIPSIS, MAX_ECHO_CHARS

_JAVA_PKG = "com.amazonaws.dynamodb.v20120810."

def java_hash(text: str) -> int:
    """Java ``String.hashCode`` (over UTF-16 code units) spread like ``HashMap.hash``."""
    h = 0
    if text.isascii():
        for ch in text:
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
    else:
        raw = text.encode("utf-16-be")
        for i in range(0, len(raw), 2):
            h = (31 * h + (raw[i] << 8 | raw[i + 1])) & 0xFFFFFFFF
    return h ^ (h >> 16)


def java_hashmap_order(keys: list[str]) -> list[str]:
    """Iteration order of a default ``java.util.HashMap`` filled with ``keys`` in order.

    Why: the service visits structure members in this order (see module doc).
    Capacity starts at 16 and doubles past a 0.75 load factor; within a bucket
    insertion order holds (no treeified bins at these sizes).
    """
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    position = {k: i for i, k in enumerate(keys)}
    return sorted(keys, key=lambda k: (java_hash(k) & (capacity - 1), position[k]))


def order_clauses(clauses: list[str]) -> list[str]:
    """Order several clauses about one member like a small Java ``HashSet`` would."""
    return sorted(clauses, key=lambda c: java_hash(c) & 15)


#: Longest rendering of a value that a message echoes. The service's own cut-off
#: is unknown; an attacker's 15 MB table name or million-element list must not
#: come back whole (see docs/decisions.md, "Robustness"). 8 KiB still shows a
#: list one past its limit whole (101 transaction items, 26 write requests).
MAX_SHOWN_CHARS = MAX_ECHO_CHARS
_ELLIPSIS = ELLIPSIS


def java_str(value: Any, shape_of: Callable[[Any], str | None]) -> str:
    """Render ``value`` the way Java's ``toString`` renders the deserialized object.

    Lists render ``[a, b]``, maps ``{k=v}``, structures as an object reference
    ``com.amazonaws.dynamodb.v20120810.Shape@hash``. The real hash is an
    identity hash we cannot know; a stable CRC of the content stands in.
    The rendering stops after MAX_SHOWN_CHARS characters, so its cost is
    bounded whatever the size or depth of the value.
    """
    out: list[str] = []
    budget = [MAX_SHOWN_CHARS]
    _render(value, shape_of, out, budget, 0)
    return _finish(out, budget)


def json_text(value: Any) -> str:
    """The compact JSON a 2026 message echoes a request map as (BatchGetItem's RequestItems).

    orjson refuses to write more than 254 levels of nesting, which a request
    may hold (its reader accepts 1024): deeper parts are then shown as "..."
    (the service's rendering of such a value is not on record).
    """
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return orjson.dumps(_shallow(value, 64)).decode()


def _shallow(value: Any, depth: int) -> Any:
    if isinstance(value, dict):
        return {k: _shallow(v, depth - 1) for k, v in value.items()} if depth else _ELLIPSIS
    if isinstance(value, list):
        return [_shallow(v, depth - 1) for v in value] if depth else _ELLIPSIS
    return value


def java_map_str(value: dict[str, Any], value_namer: Callable[[Any], str | None]) -> str:
    """:func:`_java_str` of a map whose values are structures named by ``value_namer``."""
    out: list[str] = []
    budget = [MAX_SHOWN_CHARS]
    _emit("{", out, budget)
    for i, (key, element) in enumerate(value.items()):
        if (i and not _emit(", ", out, budget)) or not _emit(f"{key}=", out, budget):
            break
        if not _render(element, value_namer, out, budget, 1):
            break
    else:
        _emit("}", out, budget)
    return _finish(out, budget)


def _finish(out: list[str], budget: list[int]) -> str:
    text = "".join(out)
    if budget[0] < 0:
        return text[:MAX_SHOWN_CHARS] + _ELLIPSIS
    return text


def _emit(text: str, out: list[str], budget: list[int]) -> bool:
    """Append ``text``; False once the budget is spent (callers stop rendering)."""
    out.append(text if len(text) <= budget[0] + 1 else text[: budget[0] + 1])
    budget[0] -= len(text)
    return budget[0] >= 0


def _render(
    value: Any, shape_of: Callable[[Any], str | None], out: list[str], budget: list[int], depth: int
) -> bool:
    if value is None:
        return _emit("null", out, budget)
    if value is True:
        return _emit("true", out, budget)
    if value is False:
        return _emit("false", out, budget)
    if isinstance(value, str):
        return _emit(value, out, budget)
    if isinstance(value, int):
        return _emit(str(value), out, budget)
    if isinstance(value, float):
        return _emit(repr(value), out, budget)
    if depth > 64:
        return _emit(_ELLIPSIS, out, budget) and False
    if isinstance(value, list):
        inner = shape_of(value)
        if not _emit("[", out, budget):
            return False
        for i, element in enumerate(value):
            if i and not _emit(", ", out, budget):
                return False
            if not _render(element, lambda _v: inner, out, budget, depth + 1):
                return False
        return _emit("]", out, budget)
    if isinstance(value, dict):
        shape = shape_of(value)
        if shape == "WriteRequest" and value.get("PutRequest") is not None and value.get("DeleteRequest") is None:
            return _render_put_request(value["PutRequest"], out, budget)
        if shape is not None:
            return _emit(f"{_JAVA_PKG}{shape}@{_digest(value):x}", out, budget)
        if not _emit("{", out, budget):
            return False
        for i, (key, element) in enumerate(value.items()):
            if (i and not _emit(", ", out, budget)) or not _emit(f"{key}=", out, budget):
                return False
            if not _render(element, lambda _v: None, out, budget, depth + 1):
                return False
        return _emit("}", out, budget)
    return _emit(str(value), out, budget)


def _render_put_request(put: Any, out: list[str], budget: list[int]) -> bool:
    """A WriteRequest holding a PutRequest, as the service's 2026 echoes of RequestItems show it.

    Recorded (us-east-1 and eu-west-2, June to October 2026):
    ``WriteRequest(putRequest=PutRequest(item={pk=<value>}, workloadProfileName=null),
    deleteRequest=null)``, each value an object reference in eu-west-2 (the
    region followed here; us-east-1 lists the AttributeValue's fields). A
    DeleteRequest's rendering is on no record, so it keeps the object reference.
    """
    if not _emit("WriteRequest(putRequest=PutRequest(item=", out, budget):
        return False
    item = put.get("Item") if isinstance(put, dict) else None
    if not isinstance(item, dict):
        if not _emit("null", out, budget):
            return False
    else:
        if not _emit("{", out, budget):
            return False
        for i, (name, value) in enumerate(item.items()):
            if (i and not _emit(", ", out, budget)) or not _emit(f"{name}=", out, budget):
                return False
            shown = f"{_JAVA_PKG}AttributeValue@{_digest(value):x}" if isinstance(value, dict) else "null"
            if not _emit(shown, out, budget):
                return False
        if not _emit("}", out, budget):
            return False
    return _emit(", workloadProfileName=null), deleteRequest=null)", out, budget)


def _digest(value: dict[str, Any]) -> int:
    """A stable stand-in for Java's identity hash of a structure, bounded in cost."""
    try:
        raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        raw = repr(sorted(value))[:4096].encode()
    return zlib.crc32(raw[:65536])



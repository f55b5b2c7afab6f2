"""DynamoDB's size of an attribute value and an item, the figure behind the 400 KB limit and capacity.

Split from values.py: sizes are taken of values already in canonical form
(numbers normalized), so this module only measures, never validates.
"""

from __future__ import annotations

from .values import AttributeValue, Item


def _number_size(text: str) -> int:
    """Bytes of a canonical number: 1 exponent byte, base-100 digit pairs, 1 more if negative.

    Digit pairs are aligned on the decimal point (so 1.5 needs "01|50", two
    pairs, but 15 one), which is what makes a number cost about one byte per two
    significant digits plus one. Zero costs 1.
    """
    if text == "0":
        return 1
    negative = text[0] == "-"
    body = text[1:] if negative else text
    point = body.find(".")
    if point < 0:  # integer: trailing zeros are not significant
        digits = len(body.rstrip("0"))
        adjusted = len(body) - 1
    elif body[0] == "0":  # 0.000ddd
        significant = len(body) - 2 - len(body[2:].lstrip("0"))
        digits = len(body) - 2 - significant
        adjusted = -significant - 1
    else:  # canonical fractions end in a non-zero digit
        digits = len(body) - 1
        adjusted = point - 1
    return 1 + (digits + 2 - (adjusted & 1)) // 2 + negative


def _binary_size(text: str) -> int:
    if not text:
        return 0
    return len(text) // 4 * 3 - (text[-1] == "=") - (text[-2] == "=")


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def value_size(av: AttributeValue) -> int:
    """DynamoDB's size of a canonical value, without its attribute name.

    The rule (AWS "Item sizes and formats", made exact as dynalite measured it
    against the service): S is its UTF-8 length; B its raw length; N as in
    :func:`_number_size`; BOOL and NULL 1; a set the sum of its members; L and M
    3 bytes plus, per element, 1 byte plus the element (a map element's name
    counts too).
    """
    ((type_name, value),) = av.items()
    if type_name == "S":
        return len(value) if value.isascii() else len(value.encode("utf-8"))
    if type_name == "N":
        return _number_size(value)
    if type_name == "M":
        size = 3
        for name, element in value.items():
            size += 1 + _utf8_len(name) + value_size(element)
        return size
    if type_name == "L":
        size = 3
        for element in value:
            size += 1 + value_size(element)
        return size
    if type_name == "B":
        return _binary_size(value)
    if type_name in ("BOOL", "NULL"):
        return 1
    if type_name == "SS":
        return sum(map(_utf8_len, value))
    if type_name == "NS":
        return sum(map(_number_size, value))
    if type_name == "BS":
        return sum(map(_binary_size, value))
    raise ValueError(f"not an attribute value type: {type_name}")


def item_size(item: Item) -> int:
    """DynamoDB's item size: every attribute's UTF-8 name length plus its value's size."""
    size = 0
    for name, av in item.items():
        size += (len(name) if name.isascii() else len(name.encode("utf-8"))) + value_size(av)
    return size

"""Tokens of DynamoDB's expression language.

The lexer never fails: a character it does not know becomes a one-character
ERROR token, so that the parser reports it the way DynamoDB does
(`Syntax error; token: "!", near: "!!"`), with the neighbouring tokens as
context.

A bare name (an attribute or a function name) starts with a letter; after
the first letter come letters, digits and "_". So "_abc" is not a name: its
"_" is an ERROR token, and DynamoDB answers `SET _123 = :v` with
`Syntax error; token: "_", near: "SET _123"` (Alternator's AWS-checked
suite, test_update_expression.py). After "#" or ":" any letters, digits or
"_" may follow ("#123", ":_").
"""

from __future__ import annotations

from typing import NamedTuple

NAME = "name"  # identifier: a letter, then letters, digits, _
ATTR_NAME = "#"  # #placeholder
VALUE = ":"  # :placeholder
NUMBER = "number"  # digits, only valid as a list index
OP = "op"  # = <> < <= > >= ( ) [ ] , . + -
ERROR = "error"
EOF = "eof"


class Token(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_SPACE = frozenset(" \t\r\n")
_SINGLE = frozenset("=()[],.+-")


def tokenize(text: str) -> list[Token]:
    """All tokens of `text`, ending with one EOF token."""
    out: list[Token] = []
    append = out.append
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in _SPACE:
            i += 1
            continue
        start = i
        if c in _WORD_START:
            i += 1
            while i < n and text[i] in _WORD_CHARS:
                i += 1
            append(Token(NAME, text[start:i], start, i))
        elif c in _DIGITS:
            i += 1
            while i < n and text[i] in _DIGITS:
                i += 1
            append(Token(NUMBER, text[start:i], start, i))
        elif c == "#" or c == ":":
            i += 1
            while i < n and text[i] in _WORD_CHARS:
                i += 1
            kind = (ATTR_NAME if c == "#" else VALUE) if i > start + 1 else ERROR
            append(Token(kind, text[start:i], start, i))
        elif c == "<":
            if i + 1 < n and text[i + 1] in "=>":
                i += 2
            else:
                i += 1
            append(Token(OP, text[start:i], start, i))
        elif c == ">":
            i += 2 if i + 1 < n and text[i + 1] == "=" else 1
            append(Token(OP, text[start:i], start, i))
        elif c in _SINGLE:
            i += 1
            append(Token(OP, c, start, i))
        else:
            i += 1
            append(Token(ERROR, c, start, i))
    out.append(Token(EOF, "<EOF>", n, n))
    return out

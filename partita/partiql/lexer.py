"""Tokens of PartiQL's DynamoDB dialect.

Keywords are case-insensitive words; a double-quoted name is always an
identifier (so a reserved word can be a name that way); single quotes make a
string. Comments (`--` to the end of the line, `/* */`) are skipped; an
unterminated comment or string, or a character the language does not know,
is the service's bare "wasn't well formed" error with nothing after the colon.
"""

from __future__ import annotations

from typing import NamedTuple

from .errors import malformed

WORD = "word"  # bare identifier or keyword
QUOTED = "quoted"  # "identifier"
STRING = "string"  # 'text'
NUMBER = "number"
OP = "op"
PARAM = "?"
EOF = "eof"


class Token(NamedTuple):
    kind: str
    text: str  # a word as written; the unquoted content of a string or quoted name
    start: int

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == WORD else ""


_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_WORD_CHARS = _WORD_START | frozenset("0123456789$")
_DIGITS = frozenset("0123456789")
_SPACE = frozenset(" \t\r\n\f")
_TWO = ("<<", ">>", "<=", ">=", "<>", "!=", "||")
_ONE = frozenset("=<>()[]{},.*:+-/%;")


def _quoted(text: str, i: int, quote: str) -> tuple[str, int]:
    """The content of a quoted run starting at `i` (a doubled quote is one quote), and its end."""
    parts = []
    j = i + 1
    n = len(text)
    while True:
        k = text.find(quote, j)
        if k < 0:
            raise malformed()
        parts.append(text[j:k])
        if k + 1 < n and text[k + 1] == quote:
            parts.append(quote)
            j = k + 2
            continue
        return "".join(parts), k + 1


def _number_end(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _DIGITS:
        i += 1
    if i < n and text[i] == "." and (i + 1 >= n or text[i + 1] != "."):
        i += 1
        while i < n and text[i] in _DIGITS:
            i += 1
    if i < n and text[i] in "eE":
        j = i + 1
        if j < n and text[j] in "+-":
            j += 1
        if j < n and text[j] in _DIGITS:
            while j < n and text[j] in _DIGITS:
                j += 1
            i = j
    return i


def tokenize(text: str) -> list[Token]:
    """All tokens of `text`, ending with one EOF token."""
    out: list[Token] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in _SPACE:
            i += 1
            continue
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise malformed()
            i = end + 2
            continue
        start = i
        if c in _WORD_START:
            i += 1
            while i < n and text[i] in _WORD_CHARS:
                i += 1
            out.append(Token(WORD, text[start:i], start))
        elif c in _DIGITS or (c == "." and i + 1 < n and text[i + 1] in _DIGITS):
            i = _number_end(text, i)
            out.append(Token(NUMBER, text[start:i], start))
        elif c == "'":
            content, i = _quoted(text, i, "'")
            out.append(Token(STRING, content, start))
        elif c == '"':
            content, i = _quoted(text, i, '"')
            out.append(Token(QUOTED, content, start))
        elif c == "?":
            i += 1
            out.append(Token(PARAM, "?", start))
        elif text[i : i + 2] in _TWO:
            i += 2
            out.append(Token(OP, text[start:i], start))
        elif c in _ONE:
            i += 1
            out.append(Token(OP, c, start))
        else:
            raise malformed()
    out.append(Token(EOF, "", n))
    return out

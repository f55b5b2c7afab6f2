"""Recursive-descent parser for PartiQL's DynamoDB dialect (the house style, as for expressions).

Precedence, loosest first: OR, AND, NOT, predicates (comparisons, IS,
BETWEEN, IN), + and -, then terms. The error details are the service's
recorded ones: a term missing at the end is "Unexpected term" (or, after an
infix operator, "Missing right-hand side ..."), a keyword or operator where
a term should start says so, and anything left after a complete statement is
"Unexpected token after expression".
"""

from __future__ import annotations

from functools import lru_cache

from ..engine.model.values import java_unparsable
from ..errors import ValidationException
from . import ast
from .errors import (
    ALIASING,
    EXPECTED_DML,
    EXPECTED_SIMPLE_PATH,
    INSERT_RETURNING,
    INVALID_DOT,
    LEFTOVER,
    MISSING_RHS,
    NOT_WELL_FORMED,
    RETURNING_WILDCARD,
    TOO_DEEP,
    UNEXPECTED_KEYWORD,
    UNEXPECTED_OPERATOR,
    UNEXPECTED_TERM,
    malformed,
)
from .lexer import EOF, NUMBER, OP, PARAM, QUOTED, STRING, WORD, Token, tokenize

# Words that cannot be a bare name (a double-quoted name may be anything).
# PartiQL reserves the SQL-92 words; this is the part of that list a
# DynamoDB statement is likely to meet, not the whole list.
KEYWORDS = frozenset(
    """ALL AND ANY AS ASC AT BETWEEN BY CASE CAST CREATE DELETE DESC DISTINCT DROP ELSE END EXCEPT
    EXISTS FALSE FROM FULL GROUP HAVING IN INNER INSERT INTERSECT INTO IS JOIN LEFT LIKE LIMIT
    MISSING NOT NULL OFFSET ON OR ORDER OUTER PAD PIVOT REMOVE RETURNING RIGHT SELECT SET THEN
    TRUE UNION UNPIVOT UPDATE UPSERT REPLACE VALUE VALUES WHEN WHERE WITH""".split()
)
OPERATOR_WORDS = frozenset({"AND", "OR", "IS", "LIKE", "BETWEEN", "IN"})
_COMPARISONS = {"=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
# The type names IS can test, and the DynamoDB type each stands for (MISSING is absence).
# AWS filtered with IS BOOL and IS STRING in 2026 (paritysuite tier2 whereFunctions);
# BOOLEAN is PartiQL's other spelling of BOOL. The rest of PartiQL's type names are
# still refused: which DynamoDB types they would test is not on record.
IS_TYPES = {"MISSING": "MISSING", "NULL": "NULL", "BOOL": "BOOL", "BOOLEAN": "BOOL", "STRING": "S"}
# How deeply parentheses, NOTs and function calls may nest: Partita's own bound,
# so that Python's stack never runs out (a parenthesis costs about eight frames
# of this descent). DynamoDB's limit is not on record.
MAX_NESTING = 64
# Collection literals nested deeper than this are skipped, not parsed (an
# attribute value may have 32 levels, so binding refuses such a literal anyway).
LITERAL_CAP = 40
_CLOSERS = {"[": "]", "{": "}", "<<": ">>"}
_OTHER_TYPE_NAMES = frozenset(
    """SMALLINT INT INT2 INT4 INT8 INTEGER BIGINT FLOAT REAL DOUBLE DECIMAL NUMERIC
    SYMBOL VARCHAR CHAR CHARACTER BLOB CLOB STRUCT TUPLE LIST SEXP BAG DATE TIME TIMESTAMP
    ANY""".split()
)



def _number(text: str) -> ast.Lit:
    """A number literal; one Java cannot parse (an exponent or scale past 32 bits) is the bare
    "wasn't well formed" (a 2026 conformance suite's partiqlGrammar tests)."""
    if java_unparsable(text):
        raise ValidationException(NOT_WELL_FORMED)
    return ast.Lit("N", text)

class _Parser:
    __slots__ = ("text", "tokens", "pos", "params", "depth", "literals")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0
        self.params = 0
        self.depth = 0  # open parentheses, NOTs and calls
        self.literals = 0  # open collection literals

    # -- tokens -----------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
        token = self.tokens[self.pos]
        if token.kind != EOF:
            self.pos += 1
        return token

    def at_word(self, *words: str) -> bool:
        return self.peek().upper in words

    def take_word(self, word: str) -> bool:
        if self.peek().upper == word:
            self.pos += 1
            return True
        return False

    def at_op(self, *ops: str) -> bool:
        token = self.peek()
        return token.kind == OP and token.text in ops

    def take_op(self, op: str) -> bool:
        if self.at_op(op):
            self.pos += 1
            return True
        return False

    def at_call_paren(self) -> bool:
        after = self.peek(1)
        return after.kind == OP and after.text == "("

    def at_end(self) -> bool:
        return self.peek().kind == EOF or self.at_op(";")

    def expect_word(self, word: str) -> None:
        if not self.take_word(word):
            raise self.unexpected()

    def expect_op(self, op: str) -> None:
        if not self.take_op(op):
            raise self.unexpected()

    def span(self, start: int, end: int) -> str:
        """`line:column:length` of text[start:end] (from 1), the service's way to point at a token."""
        line = self.text.count("\n", 0, start) + 1
        column = start - (self.text.rfind("\n", 0, start) + 1) + 1
        return f"{line}:{column}:{end - start}"

    def span_since(self, first: int) -> str:
        """The span from token `first` to the last token taken (trailing blanks not counted)."""
        start = self.tokens[first].start
        end = start + len(self.text[start : self.peek().start].rstrip())
        return self.span(start, end)

    def deeper(self) -> None:
        """Refuse nesting deeper than MAX_NESTING before Python's stack gives out (never a 500)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise malformed(f"{TOO_DEEP}{MAX_NESTING}")

    def unexpected(self, after_infix: bool = False) -> Exception:
        """The service's detail for a token that cannot start (or continue) what is expected."""
        token = self.peek()
        if token.kind == EOF or (token.kind == OP and token.text == ";"):
            return malformed(MISSING_RHS if after_infix else UNEXPECTED_TERM)
        if token.kind == WORD and token.upper in OPERATOR_WORDS:
            return malformed(UNEXPECTED_OPERATOR)
        if token.kind == WORD and token.upper in KEYWORDS:
            return malformed(UNEXPECTED_KEYWORD)
        if token.kind == OP and token.text in _COMPARISONS:
            return malformed(UNEXPECTED_OPERATOR)
        return malformed(UNEXPECTED_TERM)

    # -- statements -------------------------------------------------------------------------

    def statement(self) -> ast.Statement:
        word = self.peek().upper
        if word == "SELECT":
            out: ast.Statement = self.select()
        elif word == "INSERT":
            out = self.insert()
        elif word == "UPDATE":
            self.next()
            out = self.update(self.target(aliasable=True))
        elif word == "DELETE":
            out = self.delete()
        elif word == "EXISTS":
            out = self.exists()
        elif word == "FROM":
            out = self.from_update()
        else:
            raise malformed(EXPECTED_DML)
        self.take_op(";")
        if self.peek().kind != EOF:
            raise malformed(LEFTOVER)
        return out

    def name(self) -> str:
        token = self.peek()
        if token.kind == QUOTED or (token.kind == WORD and token.upper not in KEYWORDS):
            self.next()
            return token.text
        raise self.unexpected()

    def target(self, aliasable: bool) -> ast.Target:
        token = self.peek()
        if not (token.kind == QUOTED or (token.kind == WORD and token.upper not in KEYWORDS)):
            raise self.unexpected()
        names = [self.name()]
        while self.take_op("."):
            names.append(self.name())
        if aliasable and (self.at_word("AS") or self.peek().kind in (WORD, QUOTED)) and not self.at_word(
            "WHERE", "SET", "REMOVE", "ORDER", "RETURNING", "VALUE"
        ):
            raise self.aliasing()
        index = names[1] if len(names) > 1 else None
        return ast.Target(names[0], index, len(names), "" in names)

    def aliasing(self) -> Exception:
        return ValidationException(ALIASING)

    def select(self) -> ast.Select:
        self.expect_word("SELECT")
        if self.at_word("DISTINCT"):
                raise ValidationException("Unsupported token in expression: DISTINCT")
        projection: tuple[ast.Path, ...] | None
        refusal: str | None = None
        if self.take_op("*"):
            projection = None
        else:
            paths: list[ast.Path] = []
            while True:
                if self.peek().kind == WORD and self.peek().upper not in KEYWORDS and self.at_call_paren():
                    refusal = refusal or self.projected_call()
                else:
                    paths.append(self.path())
                if not self.take_op(","):
                    break
            projection = tuple(paths)
        self.expect_word("FROM")
        target = self.target(aliasable=True)
        where = self.expression() if self.take_word("WHERE") else None
        self.unsupported_clauses()
        order: list[tuple[ast.Path, bool]] = []
        if self.take_word("ORDER"):
            self.expect_word("BY")
            while True:
                path = self.path()
                descending = False
                if self.take_word("DESC"):
                    descending = True
                else:
                    self.take_word("ASC")
                order.append((path, descending))
                if not self.take_op(","):
                    break
        return ast.Select(target, projection, where, tuple(order), refusal)

    def projected_call(self) -> str:
        """Step over a call in a projection (COUNT(*), attribute_exists(a)) and return its
        refusal, which the compiler raises once the table and index are known: AWS refused
        `SELECT COUNT(*)` on a multi-attribute-key index for the index (paritysuite
        partiqlMultiAttributeIndex, 2026), and `SELECT attribute_exists(a)` on a table with
        this message pointing at the name (partiqlFunctions)."""
        token = self.next()
        refusal = f"Unexpected path component at {self.span(token.start, token.start + len(token.text))}"
        depth = 0
        while True:
            token = self.next()
            if token.kind == EOF:
                raise self.unexpected()
            if token.kind == PARAM:
                self.params += 1
            elif token.kind == OP and token.text in ("(", ")"):
                depth += 1 if token.text == "(" else -1
                if depth == 0:
                    return refusal

    def unsupported_clauses(self) -> None:
        """SQL clauses PartiQL parses and DynamoDB refuses (DynamoDB Local's wording)."""
        for word, clause in (("GROUP", "GROUP BY"), ("HAVING", "HAVING"), ("LIMIT", "LIMIT")):
            if self.at_word(word):
                raise ValidationException(f"Unsupported clause: {clause}")

    def insert(self) -> ast.Insert:
        self.expect_word("INSERT")
        self.expect_word("INTO")
        target = self.target(aliasable=False)
        if not self.take_word("VALUE"):
            raise malformed(LEFTOVER) if not self.at_end() else self.unexpected()
        value = self.term()
        if self.at_word("RETURNING"):
                raise ValidationException(INSERT_RETURNING)
        return ast.Insert(target, value)

    def update(self, target: ast.Target, where: ast.Expr | None = None) -> ast.Update:
        sets: list[tuple[ast.Path, ast.Expr]] = []
        removes: list[ast.Path] = []
        if not self.at_word("SET", "REMOVE"):
            raise self.unexpected()
        while True:
            if self.take_word("SET"):
                while True:
                    path = self.path()
                    self.expect_op("=")
                    sets.append((path, self.additive(after_infix=True)))
                    if not self.take_op(","):
                        break
            elif self.take_word("REMOVE"):
                while True:
                    removes.append(self.path())
                    if not self.take_op(","):
                        break
            else:
                break
        if where is None and self.take_word("WHERE"):
            where = self.expression()
        return ast.Update(target, tuple(sets), tuple(removes), where, self.returning())

    def from_update(self) -> ast.Update:
        """`FROM "T" [WHERE ...] SET ...`: the service's other spelling of an UPDATE."""
        self.expect_word("FROM")
        target = self.target(aliasable=True)
        where = self.expression() if self.take_word("WHERE") else None
        out = self.update(target, where)
        return out

    def delete(self) -> ast.Delete:
        self.expect_word("DELETE")
        self.expect_word("FROM")
        token = self.peek()
        if not (token.kind == QUOTED or (token.kind == WORD and token.upper not in KEYWORDS)):
            raise malformed(EXPECTED_SIMPLE_PATH)
        target = self.target(aliasable=True)
        where = self.expression() if self.take_word("WHERE") else None
        return ast.Delete(target, where, self.returning())

    def exists(self) -> ast.Exists:
        self.expect_word("EXISTS")
        self.expect_op("(")
        select = self.select()
        self.expect_op(")")
        return ast.Exists(select)

    def returning(self) -> ast.Returning | None:
        if not self.take_word("RETURNING"):
            return None
        scope = self.peek().upper
        if scope not in ("ALL", "MODIFIED"):
            raise self.unexpected()
        self.next()
        timing = self.peek().upper
        if timing not in ("OLD", "NEW"):
            raise self.unexpected()
        self.next()
        if not self.take_op("*"):
                raise ValidationException(RETURNING_WILDCARD)
        return ast.Returning(scope, timing)

    # -- expressions ------------------------------------------------------------------------

    def expression(self) -> ast.Expr:
        if self.at_end():
            raise self.unexpected()
        return self.disjunction()

    def disjunction(self) -> ast.Expr:
        terms = [self.conjunction()]
        while self.take_word("OR"):
            terms.append(self.conjunction(after_infix=True))
        return ast.balanced(terms, ast.Or)

    def conjunction(self, after_infix: bool = False) -> ast.Expr:
        terms = [self.negation(after_infix)]
        while self.take_word("AND"):
            terms.append(self.negation(after_infix=True))
        return ast.balanced(terms, ast.And)

    def negation(self, after_infix: bool = False) -> ast.Expr:
        if self.take_word("NOT"):
            self.deeper()
            inner = self.negation()
            self.depth -= 1
            return ast.Not(inner)
        return self.predicate(after_infix)

    def predicate(self, after_infix: bool = False) -> ast.Expr:
        left = self.additive(after_infix)
        token = self.peek()
        if token.kind == OP and token.text in _COMPARISONS:
            self.next()
            return ast.Compare(_COMPARISONS[token.text], left, self.additive(after_infix=True))
        if self.take_word("IS"):
            negated = self.take_word("NOT")
            what = self.peek().upper
            if what in IS_TYPES:
                self.next()
                return ast.Is(left, IS_TYPES[what], negated)
            if what in _OTHER_TYPE_NAMES:
                raise malformed(UNEXPECTED_KEYWORD)
            raise malformed("Expected type name")
        negated = False
        if self.at_word("NOT") and self.peek(1).upper in ("BETWEEN", "IN", "LIKE"):
            self.next()
            negated = True
        out: ast.Expr | None = None
        if self.take_word("BETWEEN"):
            low = self.additive(after_infix=True)
            self.expect_word("AND")
            out = ast.Between(left, low, self.additive(after_infix=True))
        elif self.take_word("IN"):
            out = ast.In(left, self.in_items())
        elif self.at_word("LIKE"):
            raise malformed(UNEXPECTED_KEYWORD)
        if out is None:
            return left
        return ast.Not(out) if negated else out

    def in_items(self) -> tuple[ast.Expr, ...]:
        close = ")" if self.take_op("(") else "]" if self.take_op("[") else None
        if close is None:
            raise self.unexpected(after_infix=True)
        items = [self.additive(after_infix=True)]
        while self.take_op(","):
            items.append(self.additive(after_infix=True))
        self.expect_op(close)
        return tuple(items)

    def additive(self, after_infix: bool = False) -> ast.Expr:
        left = self.term(after_infix)
        while self.at_op("+", "-"):
            op = self.next().text
            left = ast.Arith(op, left, self.term(after_infix=True))
        return left

    def term(self, after_infix: bool = False) -> ast.Expr:
        token = self.peek()
        kind = token.kind
        if kind == STRING:
            self.next()
            return ast.Lit("S", token.text)
        if kind == NUMBER:
            self.next()
            return _number(token.text)
        if kind == PARAM:
            self.next()
            self.params += 1
            return ast.Param(self.params - 1)
        if kind == OP:
            return self.punctuated(token, after_infix)
        if kind == WORD:
            word = token.upper
            if word in ("TRUE", "FALSE"):
                self.next()
                return ast.Lit("BOOL", word)
            if word == "NULL":
                self.next()
                return ast.Lit("NULL", word)
            if word == "MISSING":
                self.next()
                return ast.Missing()
            if self.peek(1).kind == OP and self.peek(1).text == "(" and (word not in KEYWORDS or word == "EXISTS"):
                return self.call()
        if kind == QUOTED or (kind == WORD and token.upper not in KEYWORDS):
            return self.path()
        raise self.unexpected(after_infix)

    def punctuated(self, token: Token, after_infix: bool) -> ast.Expr:
        text = token.text
        if text == "(":
            self.next()
            self.deeper()
            inner = self.expression()
            self.expect_op(")")
            self.depth -= 1
            return inner
        if text == "-" and self.peek(1).kind == NUMBER:
            self.next()
            number = self.next().text
            return _number("-" + number)
        if text in _CLOSERS:
            if self.literals >= LITERAL_CAP:
                return self.skip_literal()
            self.literals += 1
            out = self.collection(text)
            self.literals -= 1
            return out
        raise self.unexpected(after_infix)

    def collection(self, text: str) -> ast.Expr:
        self.next()
        close = _CLOSERS[text]
        if text == "{":
            pairs: list[tuple[ast.Expr, ast.Expr]] = []
            if not self.take_op("}"):
                while True:
                    key = self.additive()
                    self.expect_op(":")
                    pairs.append((key, self.additive()))
                    if not self.take_op(","):
                        break
                self.expect_op("}")
            return ast.MapExpr(tuple(pairs))
        items: list[ast.Expr] = []
        if not self.take_op(close):
            items.append(self.additive())
            while self.take_op(","):
                items.append(self.additive())
            self.expect_op(close)
        return ast.ListExpr(tuple(items)) if text == "[" else ast.BagExpr(tuple(items))

    def skip_literal(self) -> ast.Expr:
        """Step over a literal nested too deeply to matter, without recursion.

        Only the tokens a literal of values may hold are accepted on the way:
        anything else is reported as the recursive parse would report a term
        it did not expect.
        """
        stack: list[str] = []
        while True:
            token = self.next()
            if token.kind == PARAM:
                self.params += 1
            if token.kind == OP and (token.text in _CLOSERS or token.text == "("):
                stack.append(_CLOSERS.get(token.text, ")"))
            elif token.kind == OP and stack and token.text == stack[-1]:
                stack.pop()
                if not stack:
                    return ast.TooDeep()
            elif token.kind == EOF or not (
                token.kind in (STRING, NUMBER, PARAM)
                or (token.kind == OP and token.text in (",", ":", "-"))
                or (token.kind == WORD and token.upper in ("TRUE", "FALSE", "NULL"))
            ):
                raise malformed(UNEXPECTED_TERM)

    def call(self) -> ast.Expr:
        token = self.next()
        at = self.span(token.start, token.start + len(token.text))
        self.expect_op("(")
        self.deeper()
        args: list[ast.Expr] = []
        arg_at: list[str] = []
        if not self.take_op(")"):
            while True:
                first = self.pos
                args.append(self.additive())
                arg_at.append(self.span_since(first))
                if not self.take_op(","):
                    break
            self.expect_op(")")
        self.depth -= 1
        return ast.Call(token.text.lower(), tuple(args), at, tuple(arg_at))

    def path(self) -> ast.Path:
        token = self.peek()
        if token.kind == WORD and token.upper not in KEYWORDS and self.at_call_paren():
            # A call where only a path may stand (a SET target, ORDER BY): the message
            # recorded for `SELECT attribute_exists(a) FROM ...`, pointing at the name.
            # A projection's call is stepped over instead (projected_call).
            raise ValidationException(
                f"Unexpected path component at {self.span(token.start, token.start + len(token.text))}"
            )
        head = self.name()
        steps: list[ast.PathStep] = []
        while True:
            if self.take_op("."):
                if self.peek().kind == WORD and self.peek().upper in KEYWORDS:
                    # Recorded for `m.inner`; other reserved words after a dot are assumed alike.
                    raise malformed(INVALID_DOT)
                steps.append(self.name())
            elif self.at_op("["):
                self.next()
                token = self.next()
                if token.kind == NUMBER and token.text.isdigit():
                    steps.append(int(token.text))
                elif token.kind == STRING:
                    steps.append(token.text)
                else:
                    raise malformed(UNEXPECTED_TERM)
                self.expect_op("]")
            else:
                return ast.Path(head, tuple(steps))


@lru_cache(maxsize=4096)
def parse(text: str) -> ast.Parsed:
    """Parse one statement (cached by text; the tree is immutable and shared)."""
    parser = _Parser(text)
    statement = parser.statement()
    return ast.Parsed(statement, parser.params)

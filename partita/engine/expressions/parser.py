"""Recursive-descent parsers for condition, projection and update expressions.

Parsing settles everything that depends on the text alone: syntax, redundant
parentheses, function names, misused functions, reserved words, path nesting
depth, IN operand count. Checks that need the request's
ExpressionAttributeNames/Values (undefined placeholders, operand types,
overlapping paths, ...) live in `validate.py`, because DynamoDB interleaves
them per sub-expression and the parsed tree is shared across requests.

Among text-level errors DynamoDB reports by category, not by position: a
syntax error anywhere wins, then (for conditions) redundant parentheses,
unknown function, misused function, reserved word. So the parser notes the
first error of each category and raises the best one once the whole text has
parsed.
"""

from __future__ import annotations

from .ast import (
    AddAction,
    And,
    Arith,
    Between,
    Call,
    Compare,
    Condition,
    DeleteAction,
    In,
    Node,
    Not,
    Operand,
    Or,
    Path,
    PathElement,
    Projection,
    RemoveAction,
    SetAction,
    Update,
    UpdateAction,
    Value,
)
from .errors import invalid
from .lexer import ATTR_NAME, EOF, NAME, NUMBER, OP, VALUE, Token, tokenize
from .reserved import RESERVED_WORDS

MAX_EXPRESSION_BYTES = 4096
MAX_PATH_DEPTH = 32
MAX_IN_OPERANDS = 100  # counting the left-hand operand
# Partita's own guard against stack exhaustion; DynamoDB's limit here is unknown.
MAX_NESTING = 200
# A list index must fit a signed 32-bit integer (DynamoDB parses it as a Java int).
MAX_LIST_INDEX = 2**31 - 1

CONDITION_FUNCTIONS = {
    "attribute_exists": 1,
    "attribute_not_exists": 1,
    "attribute_type": 2,
    "begins_with": 2,
    "contains": 2,
    "size": 1,
}
UPDATE_FUNCTIONS = {"if_not_exists": 2, "list_append": 2}

_COMPARATORS = frozenset(("=", "<>", "<", "<=", ">", ">="))
_CONDITION_KEYWORDS = frozenset(("AND", "OR", "NOT", "BETWEEN", "IN"))
_UPDATE_KEYWORDS = frozenset(("SET", "REMOVE", "ADD", "DELETE"))


class _Parser:
    def __init__(self, text: str, kind: str, keywords: frozenset[str]) -> None:
        self.text = text
        self.kind = kind
        self.keywords = keywords
        self.tokens = tokenize(text)
        self.pos = 0
        self.names: dict[str, None] = {}
        self.values: dict[str, None] = {}
        self.reserved: str | None = None
        self.too_deep: int | None = None
        self.bad_index: str | None = None
        self.depth = 0

    # -- token helpers -------------------------------------------------
    def peek(self) -> Token:
        return self.tokens[self.pos]

    def advance(self) -> Token:
        tok = self.tokens[self.pos]
        if tok.kind != EOF:
            self.pos += 1
        return tok

    def is_op(self, text: str) -> bool:
        tok = self.tokens[self.pos]
        return tok.kind == OP and tok.text == text

    def is_keyword(self, word: str) -> bool:
        tok = self.tokens[self.pos]
        return tok.kind == NAME and tok.text.upper() == word

    def keyword_token(self, tok: Token) -> bool:
        return tok.kind == NAME and tok.text.upper() in self.keywords

    def expect_op(self, text: str) -> None:
        if not self.is_op(text):
            self.fail()
        self.pos += 1

    def fail(self, index: int | None = None) -> None:
        """Raise DynamoDB's syntax error at token `index` (default: the current one).

        DynamoDB names the offending token and quotes the source from the start
        of the token before it to the end of the token after it.
        """
        i = self.pos if index is None else index
        tokens = self.tokens
        bad = tokens[i]
        start = tokens[i - 1].start if i > 0 else bad.start
        if bad.kind == EOF:
            end = tokens[i - 1].end if i > 0 else 0
        elif tokens[i + 1].kind != EOF:
            end = tokens[i + 1].end
        else:
            end = bad.end
        near = self.text[start:end]
        raise invalid(self.kind, f'Syntax error; token: "{bad.text}", near: "{near}"')

    def deeper(self) -> None:
        """Refuse nesting deeper than any real expression needs, before Python's stack does."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise invalid(
                self.kind,
                f"The expression is nested too deeply; nesting depth exceeds {MAX_NESTING}",
            )

    def expect_eof(self) -> None:
        if self.peek().kind != EOF:
            self.fail()

    # -- paths ---------------------------------------------------------
    def path_element(self) -> str:
        tok = self.peek()
        if tok.kind == ATTR_NAME:
            self.pos += 1
            self.names.setdefault(tok.text)
            return tok.text
        if tok.kind == NAME and not self.keyword_token(tok):
            self.pos += 1
            if self.reserved is None and tok.text.upper() in RESERVED_WORDS:
                self.reserved = tok.text
            return tok.text
        self.fail()
        raise AssertionError  # unreachable

    def path(self) -> Path:
        elements: list[PathElement] = [self.path_element()]
        while True:
            if self.is_op("."):
                self.pos += 1
                elements.append(self.path_element())
            elif self.is_op("["):
                self.pos += 1
                tok = self.peek()
                if tok.kind != NUMBER:
                    self.fail()
                self.pos += 1
                self.expect_op("]")
                index = int(tok.text)
                if index > MAX_LIST_INDEX and self.bad_index is None:
                    self.bad_index = tok.text
                elements.append(index)
            else:
                break
        if len(elements) > MAX_PATH_DEPTH and self.too_deep is None:
            self.too_deep = len(elements)
        return Path(tuple(elements))

    def value(self) -> Value:
        tok = self.advance()
        self.values.setdefault(tok.text)
        return Value(tok.text)

    def finish(self) -> None:
        """Raise the text-level errors shared by every kind, in DynamoDB's order.

        An index beyond a Java int is DynamoDB's "List index is not within the
        allowable range" (its message catalogue, DynamoDB Local's
        DbValidationError.INVALID_LIST_INDEX; observed on the service for
        ProjectionExpression "a[99999999999999]"). That it outranks the other
        text-level errors is Partita's reading, unconfirmed.
        """
        if self.bad_index is not None:
            raise invalid(
                self.kind,
                f"List index is not within the allowable range; index: [{self.bad_index}]",
            )
        if self.too_deep is not None:
            raise invalid(
                self.kind,
                f"The document path has too many nesting levels; nesting levels: {self.too_deep}",
            )


class _ConditionParser(_Parser):
    def __init__(self, text: str, kind: str) -> None:
        super().__init__(text, kind, _CONDITION_KEYWORDS)
        self.unknown_function: str | None = None
        self.misused_function: str | None = None
        self.in_count: int | None = None

    def parse(self) -> Node:
        root = self.or_expr(False)
        self.expect_eof()
        if isinstance(root, (Path, Value)):  # pragma: no cover - the grammar rejects these
            self.fail()
        self.finish()
        if self.in_count is not None:
            raise invalid(
                self.kind,
                "The IN operator is provided with too many operands; "
                f"number of operands: {self.in_count}",
            )
        if self._redundant_parentheses():
            raise invalid(self.kind, "The expression has redundant parentheses;")
        self._check_functions(root, as_condition=True)
        if self.unknown_function is not None:
            raise invalid(self.kind, f"Invalid function name; function: {self.unknown_function}")
        if self.misused_function is not None:
            raise invalid(
                self.kind,
                "The function is not allowed to be used this way in an expression; "
                f"function: {self.misused_function}",
            )
        if self.reserved is not None:
            raise invalid(
                self.kind,
                f"Attribute name is a reserved keyword; reserved keyword: {self.reserved}",
            )
        return root  # type: ignore[return-value]

    # -- grammar -------------------------------------------------------
    # or_expr  := and_expr (OR and_expr)*
    # and_expr := not_expr (AND not_expr)*
    # not_expr := NOT not_expr | primary
    # primary  := '(' or_expr ')' [comparison tail] | operand comparison tail | function
    # A parenthesised group may hold a bare operand, as in `(a) = b`; `allow`
    # says a bare operand may be returned to such an enclosing group.
    def or_expr(self, allow: bool) -> Node | Operand:
        left = self.and_expr(allow)
        while self.is_keyword("OR"):
            if isinstance(left, (Path, Value)):
                self.fail()
            self.pos += 1
            right = self.and_expr(False)
            left = Or(left, right)  # type: ignore[arg-type]
        return left

    def and_expr(self, allow: bool) -> Node | Operand:
        left = self.not_expr(allow)
        while self.is_keyword("AND"):
            if isinstance(left, (Path, Value)):
                self.fail()
            self.pos += 1
            right = self.not_expr(False)
            left = And(left, right)  # type: ignore[arg-type]
        return left

    def not_expr(self, allow: bool) -> Node | Operand:
        if self.is_keyword("NOT"):
            self.pos += 1
            self.deeper()
            inner = self.not_expr(False)
            self.depth -= 1
            return Not(inner)  # type: ignore[arg-type]
        return self.primary(allow)

    def primary(self, allow: bool) -> Node | Operand:
        if self.is_op("("):
            self.pos += 1
            self.deeper()
            inner = self.or_expr(True)
            self.expect_op(")")
            self.depth -= 1
            if isinstance(inner, (Path, Value, Call)):
                return self.comparison_tail(inner, allow)
            return inner
        return self.comparison_tail(self.operand(), allow)

    def comparison_tail(self, left: Operand, allow: bool) -> Node | Operand:
        tok = self.peek()
        if tok.kind == OP and tok.text in _COMPARATORS:
            self.pos += 1
            return Compare(tok.text, left, self.operand())
        if self.is_keyword("BETWEEN"):
            self.pos += 1
            low = self.operand()
            if not self.is_keyword("AND"):
                self.fail()
            self.pos += 1
            return Between(left, low, self.operand())
        if self.is_keyword("IN"):
            self.pos += 1
            self.expect_op("(")
            options = [self.operand()]
            while self.is_op(","):
                self.pos += 1
                options.append(self.operand())
            self.expect_op(")")
            if len(options) + 1 > MAX_IN_OPERANDS and self.in_count is None:
                self.in_count = len(options) + 1
            return In(left, tuple(options))
        if allow and tok.kind == OP and tok.text == ")":
            return left
        if isinstance(left, Call):
            return left
        self.fail()
        raise AssertionError  # unreachable

    def operand(self) -> Operand:
        tok = self.peek()
        if tok.kind == OP and tok.text == "(":
            self.pos += 1
            self.deeper()
            inner = self.operand()
            self.expect_op(")")
            self.depth -= 1
            return inner
        if tok.kind == VALUE:
            return self.value()
        if (
            tok.kind == NAME
            and self.tokens[self.pos + 1].kind == OP
            and self.tokens[self.pos + 1].text == "("
            and not self.keyword_token(tok)
        ):
            self.pos += 2
            self.deeper()
            args = [self.operand()]
            while self.is_op(","):
                self.pos += 1
                args.append(self.operand())
            self.expect_op(")")
            self.depth -= 1
            return Call(tok.text, tuple(args))
        return self.path()

    # -- text-level checks ---------------------------------------------
    def _redundant_parentheses(self) -> bool:
        """`((x))` anywhere, except where the outer parenthesis is a call's or IN's list."""
        tokens = self.tokens
        match: dict[int, int] = {}
        stack: list[int] = []
        for i, tok in enumerate(tokens):
            if tok.kind == OP:
                if tok.text == "(":
                    stack.append(i)
                elif tok.text == ")" and stack:
                    match[stack.pop()] = i
        for i, close in match.items():
            inner_close = match.get(i + 1)
            if inner_close is None or inner_close + 1 != close:
                continue
            before = tokens[i - 1] if i > 0 else None
            if before is not None and before.kind == NAME:
                word = before.text.upper()
                if word == "IN" or word not in _CONDITION_KEYWORDS:
                    continue  # the outer parenthesis opens an argument list
            return True
        return False

    def _check_functions(self, node: Node | Operand, as_condition: bool) -> None:
        """Find the first unknown and the first misused function, in completion order."""
        if isinstance(node, (And, Or)):
            self._check_functions(node.left, True)
            self._check_functions(node.right, True)
        elif isinstance(node, Not):
            self._check_functions(node.operand, True)
        elif isinstance(node, Compare):
            self._check_operands((node.left, node.right))
        elif isinstance(node, Between):
            self._check_operands((node.operand, node.low, node.high))
        elif isinstance(node, In):
            self._check_operands((node.operand, *node.options))
        elif isinstance(node, Call):
            self._check_call(node)
            if as_condition and node.name == "size":
                self._misused("size")

    def _check_operands(self, operands: tuple[Operand, ...]) -> None:
        for op in operands:
            if isinstance(op, Call):
                self._check_call(op)
        for op in operands:
            if isinstance(op, Call) and op.name != "size":
                self._misused(op.name)

    def _check_call(self, call: Call) -> None:
        for arg in call.args:
            if isinstance(arg, Call):
                self._check_call(arg)
        for arg in call.args:
            if isinstance(arg, Call) and arg.name != "size":
                self._misused(arg.name)
        if call.name in UPDATE_FUNCTIONS:
            self._misused(call.name)
        elif call.name not in CONDITION_FUNCTIONS and self.unknown_function is None:
            self.unknown_function = call.name

    def _misused(self, name: str) -> None:
        if self.misused_function is None:
            self.misused_function = name


class _ProjectionParser(_Parser):
    def __init__(self, text: str) -> None:
        super().__init__(text, "ProjectionExpression", frozenset())

    def parse(self) -> tuple[Path, ...]:
        paths = [self.path()]
        while self.is_op(","):
            self.pos += 1
            paths.append(self.path())
        self.expect_eof()
        self.finish()
        if self.reserved is not None:
            raise invalid(
                self.kind,
                f"Attribute name is a reserved keyword; reserved keyword: {self.reserved}",
            )
        return tuple(paths)


class _UpdateParser(_Parser):
    def __init__(self, text: str) -> None:
        super().__init__(text, "UpdateExpression", _UPDATE_KEYWORDS)
        self.unknown_function: str | None = None
        self.duplicate_section: str | None = None

    def parse(self) -> tuple[UpdateAction, ...]:
        actions: list[UpdateAction] = []
        seen: set[str] = set()
        while True:
            tok = self.peek()
            word = tok.text.upper() if tok.kind == NAME else ""
            if word not in _UPDATE_KEYWORDS:
                if actions and tok.kind == EOF:
                    break
                self.fail()
            self.pos += 1
            if word in seen and self.duplicate_section is None:
                self.duplicate_section = word
            seen.add(word)
            while True:
                actions.append(self.action(word))
                if not self.is_op(","):
                    break
                self.pos += 1
        self.finish()
        if self.reserved is not None:
            raise invalid(
                self.kind,
                f"Attribute name is a reserved keyword; reserved keyword: {self.reserved}",
            )
        if self.unknown_function is not None:
            raise invalid(self.kind, self.unknown_function)
        if self.duplicate_section is not None:
            raise invalid(
                self.kind,
                f'The "{self.duplicate_section}" section can only be used once in an update expression;',
            )
        return tuple(actions)

    def action(self, section: str) -> UpdateAction:
        path = self.path()
        if section == "SET":
            self.expect_op("=")
            return SetAction(path, self.set_value())
        if section == "REMOVE":
            return RemoveAction(path)
        if self.peek().kind != VALUE:
            self.fail()
        value = self.value()
        return AddAction(path, value) if section == "ADD" else DeleteAction(path, value)

    def set_value(self) -> Operand:
        if self.is_op("("):
            # `SET a = (b + c)`: a parenthesised sum, or a parenthesised operand.
            save = self.pos
            self.pos += 1
            inner = self.sum()
            if self.is_op(")"):
                self.pos += 1
                if isinstance(inner, Arith) or not (self.is_op("+") or self.is_op("-")):
                    return inner
            self.pos = save
        return self.sum()

    def sum(self) -> Operand:
        left = self.operand()
        tok = self.peek()
        if tok.kind == OP and tok.text in ("+", "-"):
            self.pos += 1
            return Arith(tok.text, left, self.operand())
        return left

    def operand(self) -> Operand:
        tok = self.peek()
        if tok.kind == OP and tok.text == "(":
            self.pos += 1
            self.deeper()
            inner = self.operand()
            self.expect_op(")")
            self.depth -= 1
            return inner
        if tok.kind == VALUE:
            return self.value()
        nxt = self.tokens[self.pos + 1] if tok.kind == NAME else tok
        if tok.kind == NAME and nxt.kind == OP and nxt.text == "(" and not self.keyword_token(tok):
            self.pos += 2
            self.deeper()
            args = [self.operand()]
            while self.is_op(","):
                self.pos += 1
                args.append(self.operand())
            self.expect_op(")")
            self.depth -= 1
            self._note_function(tok.text)
            return Call(tok.text, tuple(args))
        return self.path()

    def _note_function(self, name: str) -> None:
        if self.unknown_function is not None or name in UPDATE_FUNCTIONS:
            return
        if name in CONDITION_FUNCTIONS:
            self.unknown_function = (
                f"The function is not allowed in an update expression; function: {name}"
            )
        else:
            self.unknown_function = f"Invalid function name; function: {name}"


def _check_text(text: str, kind: str) -> None:
    if not text.strip():
        raise invalid(kind, "The expression can not be empty;")
    size = len(text.encode("utf-8"))
    if size > MAX_EXPRESSION_BYTES:
        raise invalid(
            kind,
            f"Expression size has exceeded the maximum allowed size; expression size: {size}",
        )


def parse_condition_text(text: str, kind: str) -> Condition:
    _check_text(text, kind)
    parser = _ConditionParser(text, kind)
    root = parser.parse()
    return Condition(kind, text, root, frozenset(parser.names), frozenset(parser.values))


def parse_projection_text(text: str) -> Projection:
    _check_text(text, "ProjectionExpression")
    parser = _ProjectionParser(text)
    paths = parser.parse()
    return Projection("ProjectionExpression", text, paths, frozenset(parser.names))


def parse_update_text(text: str) -> Update:
    _check_text(text, "UpdateExpression")
    parser = _UpdateParser(text)
    actions = parser.parse()
    return Update(
        "UpdateExpression", text, actions, frozenset(parser.names), frozenset(parser.values)
    )

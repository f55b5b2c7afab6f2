"""The PartiQL syntax tree: immutable, so one parsed statement serves every request.

Literals stay as syntax (`Lit` holds the written text) until a request binds
its parameters: a number's validity is checked where the service checks it,
when the statement runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PathStep = str | int


@dataclass(frozen=True, slots=True)
class Path:
    head: str
    steps: tuple[PathStep, ...] = ()

    @property
    def is_top(self) -> bool:
        return not self.steps

    def text(self) -> str:
        out = self.head
        for step in self.steps:
            out += f"[{step}]" if isinstance(step, int) else f".{step}"
        return out


@dataclass(frozen=True, slots=True)
class Lit:
    """A scalar literal: kind is S, N, BOOL or NULL; `text` as written (N) or the value."""

    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class Missing:
    pass


@dataclass(frozen=True, slots=True)
class Param:
    index: int


@dataclass(frozen=True, slots=True)
class TooDeep:
    """A collection literal nested past any depth a value may have: the parser skips its text.

    It sits deeper than the 32 levels an attribute value may reach, so binding
    the literal around it always refuses the value (with the service's
    "Nesting Levels" message) before this node is reached; it only keeps the
    parser's recursion bounded.
    """


@dataclass(frozen=True, slots=True)
class ListExpr:
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class BagExpr:
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class MapExpr:
    pairs: tuple[tuple[Expr, Expr], ...]


@dataclass(frozen=True, slots=True)
class Call:
    """A function call; `at` and `arg_at` place the name and each argument in the statement
    (`line:column:length`, from 1), as the service's messages about a call point at them."""

    name: str  # lower case
    args: tuple[Expr, ...]
    at: str = field(default="", compare=False)
    arg_at: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class Arith:
    op: str  # + or -
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Compare:
    op: str  # = <> < <= > >=
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Between:
    operand: Expr
    low: Expr
    high: Expr


@dataclass(frozen=True, slots=True)
class In:
    operand: Expr
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class And:
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Or:
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Not:
    operand: Expr


@dataclass(frozen=True, slots=True)
class Is:
    operand: Expr
    what: str  # MISSING, or the DynamoDB type tested: NULL, BOOL, S
    negated: bool


Expr = (
    Path | Lit | Missing | Param | TooDeep | ListExpr | BagExpr | MapExpr | Call | Arith | Compare | Between | In
    | And | Or | Not | Is
)
VALUE_NODES = (Lit, Missing, Param, TooDeep, ListExpr, BagExpr, MapExpr)


def balanced(terms: list[Expr], kind: type[And] | type[Or]) -> Expr:
    """A chain of ANDs (or ORs) as a balanced tree: the same terms in the same order,
    at a depth that grows with the logarithm of their number, so that a statement of
    thousands of terms never nests deeper than the code walking it can follow."""
    if len(terms) == 1:
        return terms[0]
    middle = len(terms) // 2
    return kind(balanced(terms[:middle], kind), balanced(terms[middle:], kind))


@dataclass(frozen=True, slots=True)
class Target:
    """The FROM (or INTO) source: a table, or `"table"."index"`.

    `components` counts the dotted names as written (a third is an error the
    compiler reports, after any syntax error, as the service does); `empty`
    records a `""` among them.
    """

    table: str
    index: str | None = None
    components: int = 1
    empty: bool = False


@dataclass(frozen=True, slots=True)
class Select:
    target: Target
    projection: tuple[Path, ...] | None  # None is *
    where: Expr | None
    order: tuple[tuple[Path, bool], ...] = ()  # (path, descending)
    # A call in the projection: its refusal, answered after the table and index checks.
    projection_refusal: str | None = None


@dataclass(frozen=True, slots=True)
class Insert:
    target: Target
    value: Expr


@dataclass(frozen=True, slots=True)
class Returning:
    scope: str  # ALL or MODIFIED
    timing: str  # OLD or NEW

    def text(self) -> str:
        return f"RETURNING {self.scope} {self.timing} *"

    @property
    def return_values(self) -> str:
        """The UpdateItem/DeleteItem ReturnValues it stands for."""
        return ("ALL_" if self.scope == "ALL" else "UPDATED_") + self.timing


@dataclass(frozen=True, slots=True)
class Update:
    target: Target
    sets: tuple[tuple[Path, Expr], ...]
    removes: tuple[Path, ...]
    where: Expr | None
    returning: Returning | None


@dataclass(frozen=True, slots=True)
class Delete:
    target: Target
    where: Expr | None
    returning: Returning | None


@dataclass(frozen=True, slots=True)
class Exists:
    """EXISTS(SELECT ...): a transaction's condition check."""

    select: Select


Statement = Select | Insert | Update | Delete | Exists


@dataclass(frozen=True, slots=True)
class Parsed:
    statement: Statement
    parameters: int  # how many ? it holds

    @property
    def is_read(self) -> bool:
        return isinstance(self.statement, Select)

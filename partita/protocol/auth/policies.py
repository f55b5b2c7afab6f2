"""IAM policy evaluation: statements compiled once, evaluated per request.

Generic IAM semantics, nothing DynamoDB-specific (what a DynamoDB operation
needs is `partita.api.authorize`'s business): `Action`/`NotAction` match
case-insensitively with `*` and `?`; `Resource`/`NotResource` case-
sensitively; every statement's conditions are ANDed, values of one key
ORed; `ForAllValues:` holds for a missing key and `ForAnyValue:` does not,
as in IAM; `...IfExists` holds for a missing key. Policy variables
(`${aws:username}` ...) are substituted when a principal's policies are
compiled (Version 2012-10-17 only, as in IAM).

Evaluation of one (action, resource, context): an explicit Deny anywhere
wins; otherwise an Allow in an identity or a resource policy allows (one
account: Partita's principals and tables share it); otherwise the request
is implicitly denied.

A key's values may be `Unknowable`: the request touches values it cannot
name (a PartiQL SELECT that scans touches every partition key of the
table). A condition on such a key fails closed: it does not hold in an
Allow statement and holds in a Deny statement, whatever its operator.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from ...api.authorize.context import Unknowable

ALLOW = "Allow"
DENY = "Deny"

Context = Mapping[str, list[str]]
"""Condition keys (lower-case) -> their values; single-valued keys hold one."""

TIME_KEYS = frozenset({"aws:currenttime", "aws:epochtime"})
"""Keys whose value is the request's time: a decision that reads them is never remembered."""


def uses(statements: Iterable[Statement], keys: frozenset[str] | set[str]) -> bool:
    """Whether any condition of these statements reads one of `keys`."""
    return any(c.key in keys for statement in statements for c in statement.conditions)


def reads_only(statements: Iterable[Statement], keys: frozenset[str] | set[str]) -> bool:
    """Whether every condition of these statements reads one of `keys` (none: True)."""
    return all(c.key in keys for statement in statements for c in statement.conditions)


class PolicyError(ValueError):
    """A policy document Partita cannot evaluate (raised when it is loaded)."""


# `${*}` and `${?}` stand for the literal characters (IAM's rule), not wildcards: substitution
# leaves these private-use stand-ins, which a pattern reads as the literal character and
# anything compared exactly gets back as `*` and `?` (`literal`).
_STAR, _QUESTION = "\ue000", "\ue001"
_LITERALS = str.maketrans({_STAR: "*", _QUESTION: "?"})


def literal(text: str) -> str:
    """A substituted value for an exact comparison: the stand-ins back as `*` and `?`."""
    return text.translate(_LITERALS)


def _pattern(text: str, ignore_case: bool) -> re.Pattern[str]:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(literal(c)) for c in text)
    return re.compile(body, re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


class _Matcher:
    """A list of IAM wildcard patterns; plain `*` matches everything without a regex."""

    __slots__ = ("_all", "_exact", "_patterns", "_ignore_case")

    def __init__(self, values: Iterable[str], ignore_case: bool) -> None:
        self._all = False
        self._ignore_case = ignore_case
        self._exact: set[str] = set()
        self._patterns: list[re.Pattern[str]] = []
        for value in values:
            if value == "*":
                self._all = True
            elif "*" in value or "?" in value:
                self._patterns.append(_pattern(value, ignore_case))
            else:
                value = literal(value)
                self._exact.add(value.lower() if ignore_case else value)

    def __call__(self, text: str) -> bool:
        if self._all:
            return True
        if (text.lower() if self._ignore_case else text) in self._exact:
            return True
        return any(p.fullmatch(text) for p in self._patterns)


def _strings(value: Any, what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    raise PolicyError(f"{what} must be a string or a non-empty list of strings")


_VARIABLE = re.compile(r"\$\{([^}]*)\}")


def substitute(text: str, variables: Mapping[str, str]) -> str:
    """`${aws:username}` and friends, and `${$}` for a dollar sign.

    An unknown variable is left as written, so it matches nothing but itself
    (IAM treats an absent variable as making the statement not match).
    `${*}` and `${?}` are the literal characters, never wildcards (IAM's
    rule): they come out as stand-ins that `_pattern` and `literal` read so.
    """

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "*":
            return _STAR
        if name == "?":
            return _QUESTION
        if name == "$":
            return "$"
        return variables.get(name.lower(), match.group(0))

    return _VARIABLE.sub(one, text)


# Condition operators: (context value, policy values) -> bool.
Test = Callable[[str, list[str]], bool]


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except (InvalidOperation, ValueError):
        return None


def _numeric(compare: Callable[[Decimal, Decimal], bool]) -> Test:
    def test(value: str, wanted: list[str]) -> bool:
        left = _number(value)
        if left is None:
            return False
        for w in wanted:
            right = _number(w)
            if right is not None and compare(left, right):
                return True
        return False

    return test


@lru_cache(maxsize=1024)
def when(text: str) -> float | None:
    """A date as IAM's Date operators read it: epoch seconds, or ISO 8601 (UTC unless it says)."""
    text = text.strip()
    if _EPOCH.fullmatch(text):
        return float(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


_EPOCH = re.compile(r"-?\d+(?:\.\d+)?")


def _dated(compare: Callable[[float, float], bool]) -> Test:
    def test(value: str, wanted: list[str]) -> bool:
        left = when(value)
        if left is None:
            return False
        for w in wanted:
            right = when(w)
            if right is not None and compare(left, right):
                return True
        return False

    return test


def _like(value: str, wanted: list[str]) -> bool:
    return any(_pattern(w, False).fullmatch(value) for w in wanted)


def _negate(test: Test) -> Test:
    return lambda value, wanted: not test(value, wanted)


def _equals(value: str, wanted: list[str]) -> bool:
    return value in wanted


def _equals_ignore_case(value: str, wanted: list[str]) -> bool:
    return value.lower() in (w.lower() for w in wanted)


def _bool(value: str, wanted: list[str]) -> bool:
    return value.lower() in (w.lower() for w in wanted)


OPERATORS: dict[str, Test] = {
    "stringequals": _equals,
    "stringnotequals": _negate(_equals),
    "stringequalsignorecase": _equals_ignore_case,
    "stringnotequalsignorecase": _negate(_equals_ignore_case),
    "stringlike": _like,
    "stringnotlike": _negate(_like),
    "numericequals": _numeric(lambda a, b: a == b),
    "numericnotequals": _negate(_numeric(lambda a, b: a == b)),
    "numericlessthan": _numeric(lambda a, b: a < b),
    "numericlessthanequals": _numeric(lambda a, b: a <= b),
    "numericgreaterthan": _numeric(lambda a, b: a > b),
    "numericgreaterthanequals": _numeric(lambda a, b: a >= b),
    "dateequals": _dated(lambda a, b: a == b),
    "datenotequals": _negate(_dated(lambda a, b: a == b)),
    "datelessthan": _dated(lambda a, b: a < b),
    "datelessthanequals": _dated(lambda a, b: a <= b),
    "dategreaterthan": _dated(lambda a, b: a > b),
    "dategreaterthanequals": _dated(lambda a, b: a >= b),
    "bool": _bool,
    "arnequals": _like,
    "arnlike": _like,
    "arnnotequals": _negate(_like),
    "arnnotlike": _negate(_like),
}


@dataclass(frozen=True, slots=True)
class _Condition:
    mode: str  # "", "all" (ForAllValues), "any" (ForAnyValue), "null"
    test: Test | None
    if_exists: bool
    key: str  # lower-case
    values: list[str]
    in_deny: bool = False  # the statement's effect is Deny: an Unknowable value makes it hold

    def holds(self, context: Context) -> bool:
        present = context.get(self.key)
        if present.__class__ is Unknowable:
            return self.in_deny
        if self.mode == "null":
            absent = not present
            return any((w.lower() == "true") == absent for w in self.values)
        assert self.test is not None
        if not present:
            return self.mode == "all" or self.if_exists
        if self.mode == "any":
            return any(self.test(v, self.values) for v in present)
        # ForAllValues and a plain operator: every value of the request passes.
        return all(self.test(v, self.values) for v in present)


_PATTERN_TESTS = frozenset({OPERATORS["stringlike"], OPERATORS["stringnotlike"], OPERATORS["arnlike"],
                            OPERATORS["arnnotlike"], OPERATORS["arnequals"], OPERATORS["arnnotequals"]})
"""Operators whose policy values are wildcard patterns (the others compare exactly)."""


def _conditions(block: Any, variables: Mapping[str, str], in_deny: bool = False) -> list[_Condition]:
    if block is None:
        return []
    if not isinstance(block, dict):
        raise PolicyError("Condition must be an object")
    out = []
    for operator, keys in block.items():
        if not isinstance(keys, dict):
            raise PolicyError(f"Condition {operator} must map keys to values")
        name = operator.lower()
        mode = ""
        for prefix, tag in (("forallvalues:", "all"), ("foranyvalue:", "any")):
            if name.startswith(prefix):
                name, mode = name[len(prefix):], tag
        if_exists = name.endswith("ifexists")
        if if_exists:
            name = name[: -len("ifexists")]
        if name == "null":
            test = None
            mode = "null"
        else:
            test = OPERATORS.get(name)
            if test is None:
                raise PolicyError(f"Unsupported condition operator: {operator}")
        for key, raw in keys.items():
            values = [v if isinstance(v, str) else _scalar(v) for v in (raw if isinstance(raw, list) else [raw])]
            values = [substitute(v, variables) for v in values]
            if test not in _PATTERN_TESTS:
                values = [literal(v) for v in values]  # compared exactly: `${*}` is a star
            if name.startswith("date") and any(when(v) is None and "${" not in v for v in values):
                raise PolicyError(f"{operator} needs dates (ISO 8601 or epoch seconds), not {values}")
            out.append(_Condition(mode, test, if_exists, key.lower(), values, in_deny))
    return out


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    raise PolicyError("Condition values must be strings, numbers or booleans")


@dataclass(frozen=True, slots=True)
class Statement:
    effect: str
    actions: _Matcher | None
    not_actions: _Matcher | None
    resources: _Matcher | None
    not_resources: _Matcher | None
    principals: _Matcher | None  # resource policies: who the statement is about
    not_principals: _Matcher | None
    conditions: list[_Condition]

    def applies(self, action: str, resource: str, principal: tuple[str, ...], context: Context) -> bool:
        if self.actions is not None and not self.actions(action):
            return False
        if self.not_actions is not None and self.not_actions(action):
            return False
        if self.resources is not None and not self.resources(resource):
            return False
        if self.not_resources is not None and self.not_resources(resource):
            return False
        if self.principals is not None and not any(self.principals(p) for p in principal):
            return False
        if self.not_principals is not None and any(self.not_principals(p) for p in principal):
            return False
        return all(c.holds(context) for c in self.conditions)


def _principal_values(value: Any) -> list[str]:
    if value == "*":
        return ["*"]
    if isinstance(value, dict):
        out: list[str] = []
        for kind, names in value.items():
            if kind == "AWS":
                out += _strings(names, "Principal AWS")
        return out or ["\x00nobody"]
    raise PolicyError("Principal must be \"*\" or an object such as {\"AWS\": ...}")


def _member(
    statement: dict[str, Any], key: str, ignore_case: bool, variables: Mapping[str, str] | None
) -> _Matcher | None:
    if key not in statement:
        return None
    values = _strings(statement[key], key)
    if variables is not None:
        values = [substitute(v, variables) for v in values]
    return _Matcher(values, ignore_case)


def compile_policy(document: Any, variables: Mapping[str, str], resource_policy: bool = False) -> list[Statement]:
    """A policy document (dict or JSON text) as statements; PolicyError when it is not one."""
    if isinstance(document, str):
        import orjson

        try:
            document = orjson.loads(document)
        except orjson.JSONDecodeError:
            raise PolicyError("the policy is not valid JSON") from None
    if not isinstance(document, dict):
        raise PolicyError("a policy must be a JSON object")
    if document.get("Version") != "2012-10-17":
        variables = {}  # IAM substitutes variables only in the 2012-10-17 language
    raw = document.get("Statement")
    statements = raw if isinstance(raw, list) else [raw]
    out = []
    for s in statements:
        if not isinstance(s, dict):
            raise PolicyError("a Statement must be an object")
        effect = s.get("Effect")
        if effect not in (ALLOW, DENY):
            raise PolicyError("Effect must be Allow or Deny")
        if ("Action" in s) == ("NotAction" in s):
            raise PolicyError("a Statement needs exactly one of Action and NotAction")
        if ("Resource" in s) == ("NotResource" in s) and not resource_policy:
            raise PolicyError("a Statement needs exactly one of Resource and NotResource")

        principals = not_principals = None
        if resource_policy:
            if "Principal" in s:
                principals = _Matcher(_principal_values(s["Principal"]), False)
            if "NotPrincipal" in s:
                not_principals = _Matcher(_principal_values(s["NotPrincipal"]), False)
        out.append(
            Statement(
                effect,
                _member(s, "Action", True, None),
                _member(s, "NotAction", True, None),
                _member(s, "Resource", False, variables),
                _member(s, "NotResource", False, variables),
                principals,
                not_principals,
                _conditions(s.get("Condition"), variables, effect == DENY),
            )
        )
    return out


IMPLICIT = "implicit"
IDENTITY_DENY = "identity"
RESOURCE_DENY = "resource"


def decide(
    identity: list[Statement],
    resource: list[Statement] | None,
    action: str,
    arn: str,
    principal: tuple[str, ...],
    context: Context,
) -> str | None:
    """None when allowed; otherwise why not: IDENTITY_DENY, RESOURCE_DENY or IMPLICIT."""
    allowed = False
    for statement in identity:
        if statement.applies(action, arn, principal, context):
            if statement.effect == DENY:
                return IDENTITY_DENY
            allowed = True
    if resource:
        for statement in resource:
            if statement.applies(action, arn, principal, context):
                if statement.effect == DENY:
                    return RESOURCE_DENY
                allowed = True
    return None if allowed else IMPLICIT

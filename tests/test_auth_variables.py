"""IAM policy variables: `${*}`, `${?}` and `${$}` are the literal characters, never wildcards."""

from __future__ import annotations

from typing import Any

import pytest

from partita.protocol.auth.policies import compile_policy, decide

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"
VARIABLES = {"aws:username": "alice"}


def _allows(statement: dict[str, Any], action: str, resource: str, context: dict[str, list[str]] | None = None) -> bool:
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", **statement}]}
    return decide(compile_policy(policy, VARIABLES), None, action, resource, (), context or {}) is None


@pytest.mark.parametrize("written, literal", [("${*}", "*"), ("${?}", "?"), ("${$}", "$")])
def test_escapes_in_a_resource_are_literal(written: str, literal: str) -> None:
    statement = {"Action": "dynamodb:GetItem", "Resource": f"{ARN}a{written}b"}
    assert _allows(statement, "dynamodb:GetItem", f"{ARN}a{literal}b")
    assert not _allows(statement, "dynamodb:GetItem", f"{ARN}axb")  # not a wildcard
    assert not _allows(statement, "dynamodb:GetItem", f"{ARN}axyzb")


def test_escapes_beside_real_wildcards_and_variables() -> None:
    statement = {"Action": "dynamodb:GetItem", "Resource": f"{ARN}${{aws:username}}-${{*}}-*"}
    assert _allows(statement, "dynamodb:GetItem", f"{ARN}alice-*-anything")
    assert not _allows(statement, "dynamodb:GetItem", f"{ARN}alice-x-anything")
    assert not _allows(statement, "dynamodb:GetItem", f"{ARN}bob-*-anything")


def test_escapes_in_conditions_exact_and_like() -> None:
    equals = {"Action": "*", "Resource": "*",
              "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${aws:username}${*}"]}}}
    assert _allows(equals, "dynamodb:GetItem", ARN + "t", {"dynamodb:leadingkeys": ["alice*"]})
    assert not _allows(equals, "dynamodb:GetItem", ARN + "t", {"dynamodb:leadingkeys": ["alicex"]})
    like = {"Action": "*", "Resource": "*",
            "Condition": {"StringLike": {"dynamodb:LeadingKeys": ["${aws:username}${?}*"]}}}
    assert _allows(like, "dynamodb:GetItem", ARN + "t", {"dynamodb:leadingkeys": ["alice?-1"]})
    assert _allows(like, "dynamodb:GetItem", ARN + "t", {"dynamodb:leadingkeys": ["alice?"]})
    assert not _allows(like, "dynamodb:GetItem", ARN + "t", {"dynamodb:leadingkeys": ["alicex-1"]})

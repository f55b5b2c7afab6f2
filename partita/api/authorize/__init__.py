"""What `--auth` checks for each DynamoDB operation (the IAM evaluator is protocol/auth/policies.py).

`rules` is the table (operation -> action, resources, condition keys),
`requirements` turns a request into its checks, `context` computes the
condition keys a request carries, `statements` does so for PartiQL
statements by compiling them as they will run.
"""

from __future__ import annotations

from .requirements import Check, Requirements, plain_check_key

__all__ = ["Check", "Requirements", "plain_check_key"]

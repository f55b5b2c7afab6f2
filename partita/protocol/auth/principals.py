"""The `--auth FILE` of principals: loaded at start, reloaded on SIGHUP.

The file (JSON, or TOML when its name ends in .toml) lists users:

    {"users": [{"name": "alice", "access_key_id": "AKIA...",
                "secret_access_key": "...", "account_id": "123456789012",
                "session_token": "... (optional: temporary credentials)",
                "policies": [<IAM policy document>, ...]}]}

Policies are compiled once per load with the user's policy variables
substituted. A reload that fails (bad JSON, a bad policy) keeps the
previous principals and logs why, so a typo never locks everyone out or
lets everyone in. Secrets are never logged.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ...engine.control.arns import ACCOUNT_ID
from .policies import TIME_KEYS, PolicyError, Statement, compile_policy, reads_only, uses

log = logging.getLogger("partita.auth")


class AuthFileError(ValueError):
    """The file cannot be used; the message names the problem, never a secret."""


@dataclass(slots=True)
class Principal:
    name: str
    access_key_id: str
    secret: str
    account: str
    session_token: str | None
    statements: list[Statement]
    variables: dict[str, str]
    arn: str = ""
    #: What a resource policy's Principal may name to mean this user.
    identities: tuple[str, ...] = ()
    #: Compiled resource policies, by their text (they carry this user's variables).
    resource_cache: dict[str, tuple[list[Statement] | None, bool]] = field(default_factory=dict)
    #: Global condition keys (aws:username ...), built on first use.
    context: dict[str, list[str]] | None = None
    #: Whether an identity statement has a Condition on a request's key (else request keys
    #: are not computed and decisions are remembered).
    conditional: bool = True
    #: Whether one reads aws:CurrentTime or aws:EpochTime (then nothing is remembered).
    timed: bool = False
    #: The condition keys the identity policies read: the request's others are not computed.
    keys: frozenset[str] = frozenset()
    #: (action, resource, resource policy) -> decision, for checks without request keys.
    decisions: dict[tuple[str, str, str | None], str | None] = field(default_factory=dict)
    #: (operation, table, index) -> (decision, action, resource), for single-table requests
    #: on tables without a resource policy (`partita.api.authorize.plain_check_key`).
    plain: dict[tuple[str, str, Any], tuple[str | None, str, str]] = field(default_factory=dict)
    #: `Authenticator.authorize` bound to this principal and an engine (a `functools.partial`),
    #: which the protocol layer passes to dispatch: made once, not per request.
    authorizer: Any = None

    def __repr__(self) -> str:  # never show the secret
        return f"Principal({self.arn})"


def _user(entry: Any, index: int) -> Principal:
    if not isinstance(entry, dict):
        raise AuthFileError(f"users[{index}] must be an object")
    try:
        name = entry["name"]
        key = entry["access_key_id"]
        secret = entry["secret_access_key"]
    except KeyError as missing:
        raise AuthFileError(f"users[{index}] lacks {missing.args[0]}") from None
    account = str(entry.get("account_id", ACCOUNT_ID))
    token = entry.get("session_token")
    for what, value in (("name", name), ("access_key_id", key), ("secret_access_key", secret)):
        if not isinstance(value, str) or not value:
            raise AuthFileError(f"users[{index}].{what} must be a non-empty string")
    if token is not None and not isinstance(token, str):
        raise AuthFileError(f"users[{index}].session_token must be a string")
    arn = f"arn:aws:iam::{account}:user/{name}"
    variables = {
        "aws:username": name,
        "aws:userid": key,
        "aws:principalaccount": account,
        "aws:principalarn": arn,
        "aws:principaltype": "User",
    }
    statements: list[Statement] = []
    policies = entry.get("policies", [])
    if not isinstance(policies, list):
        raise AuthFileError(f"users[{index}].policies must be a list of policy documents")
    for number, document in enumerate(policies):
        try:
            statements += compile_policy(document, variables)
        except PolicyError as error:
            raise AuthFileError(f"users[{index}].policies[{number}]: {error}") from None
    identities = (arn, account, f"arn:aws:iam::{account}:root")
    user = Principal(name, key, secret, account, token, statements, variables, arn, identities)
    # Conditions on the principal's own keys (aws:username ...) decide the same for every
    # request: only conditions on request keys (LeadingKeys, time ...) make it conditional.
    user.conditional = not reads_only(statements, {*variables, "aws:securetransport"})
    user.timed = uses(statements, TIME_KEYS)
    user.keys = frozenset(c.key for statement in statements for c in statement.conditions)
    return user


def load(path: Path) -> dict[str, Principal]:
    """access key id -> principal."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise AuthFileError(f"cannot read {path}: {error.strerror}") from None
    try:
        data = tomllib.loads(raw.decode()) if path.suffix == ".toml" else orjson.loads(raw)
    except (orjson.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise AuthFileError(f"{path} is not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("users"), list):
        raise AuthFileError(f"{path} must hold an object with a list of users")
    principals: dict[str, Principal] = {}
    for index, entry in enumerate(data["users"]):
        user = _user(entry, index)
        if user.access_key_id in principals:
            raise AuthFileError(f"users[{index}] repeats an access key id")
        principals[user.access_key_id] = user
    return principals


class Principals:
    """The current principals of one process; `reload` swaps them atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.by_key: Mapping[str, Principal] = load(path)
        #: The same by the key id's bytes, as the hot path reads it from the header.
        self.by_raw_key: Mapping[bytes, Principal] = _raw(self.by_key)

    def reload(self) -> bool:
        try:
            fresh = load(self.path)
        except AuthFileError as error:
            log.error("partita: --auth file not reloaded, keeping the previous principals: %s", error)
            return False
        self.by_key, self.by_raw_key = fresh, _raw(fresh)
        log.warning("partita: --auth file reloaded (%d principals)", len(fresh))
        return True


def _raw(principals: Mapping[str, Principal]) -> dict[bytes, Principal]:
    """Only ASCII ids: the hot path matches printable ASCII; others take the general path."""
    return {key.encode(): user for key, user in principals.items() if key.isascii()}

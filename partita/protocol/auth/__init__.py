"""`partita serve --auth FILE`: every request signed with a known key and allowed by its policies.

`Authenticator.verify` is SigV4 (sigv4.py) against the principals of the
file (principals.py); `authorize` evaluates the checks DynamoDB makes for
the operation (`partita.api.authorize`) against the principal's identity
policies and the resources' policies (policies.py). Without `--auth` none
of this runs: the protocol layer keeps its one header-form check.
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Any

from ...api.authorize import Requirements
from ...engine.engine import Engine
from ...errors import AccessDeniedException
from .errors import INVALID_TOKEN, UnrecognizedClientException
from .policies import IDENTITY_DENY, RESOURCE_DENY, PolicyError, Statement, compile_policy, decide
from .principals import AuthFileError, Principal, Principals
from .sigv4 import check_scope, check_skew, parse_authorization, verify_signature, wall_now

__all__ = ["AuthFileError", "Authenticator", "Principal"]

ADMIN_ACTION = "partita:Admin"
"""What Partita's own routes (/partita/v1/..., /metrics) require: an identity
policy allowing it (`"Action": "*"` or `"partita:*"`) on resource `*`."""


class Authenticator:
    def __init__(self, path: Path, region: str, secure_transport: bool = False) -> None:
        self.principals = Principals(path)
        self.secure_transport = secure_transport  # the console's cookie is Secure over TLS
        self.region = region
        self._secure = ["true" if secure_transport else "false"]

    def reload(self) -> bool:
        return self.principals.reload()

    def verify(self, method: str, path: bytes, headers: dict[bytes, bytes], body: bytes) -> Principal:
        """The principal that signed this request, or DynamoDB's exception for why not."""
        auth = parse_authorization(headers)
        principal = self.principals.by_key.get(auth.access_key)
        if principal is None:
            raise UnrecognizedClientException(INVALID_TOKEN)
        token = headers.get(b"x-amz-security-token")
        expected = principal.session_token
        if (token is None) != (expected is None) or (
            token is not None and expected is not None and not hmac.compare_digest(token, expected.encode())
        ):
            raise UnrecognizedClientException(INVALID_TOKEN)
        check_scope(auth, self.region)
        check_skew(auth.amz_date, auth.seconds, wall_now())
        verify_signature(auth, principal.secret, method, path, headers, body)
        return principal

    def authorize(
        self, principal: Principal, engine: Engine, operation: str, request: dict[str, Any], streams: bool
    ) -> None:
        """Raise AccessDeniedException unless every check of the request is allowed."""
        base = self._base_context(principal)
        checks = Requirements(engine, principal.account, principal.conditional).of(operation, request, streams)
        memo = principal.decisions
        for check in checks:
            if check.context:
                context = {**base, **check.context}
                resource = self._resource_policy(principal, check.resource_policy)
                why = decide(principal.statements, resource, check.action, check.resource, principal.identities, context)
            else:
                # Without request-specific keys the answer depends on nothing else: remember it.
                key = (check.action, check.resource, check.resource_policy)
                try:
                    why = memo[key]
                except KeyError:
                    resource = self._resource_policy(principal, check.resource_policy)
                    why = decide(principal.statements, resource, check.action, check.resource, principal.identities, base)
                    if len(memo) > 4096:
                        memo.clear()
                    memo[key] = why
            if why is not None:
                raise AccessDeniedException(denied(principal, check.action, check.resource, why))

    def authorize_admin(self, principal: Principal) -> None:
        why = decide(principal.statements, None, ADMIN_ACTION, "*", principal.identities, self._base_context(principal))
        if why is not None:
            raise AccessDeniedException(denied(principal, ADMIN_ACTION, "*", why))

    def _base_context(self, principal: Principal) -> dict[str, list[str]]:
        base = principal.context
        if base is None:
            base = {key: [value] for key, value in principal.variables.items()}
            base["aws:securetransport"] = self._secure
            principal.context = base
        return base

    @staticmethod
    def _resource_policy(principal: Principal, text: str | None) -> list[Statement] | None:
        if text is None:
            return None
        cache = principal.resource_cache
        if text not in cache:
            if len(cache) > 1024:
                cache.clear()
            try:
                cache[text] = compile_policy(text, principal.variables, resource_policy=True)
            except PolicyError:
                cache[text] = None  # stored before enforcement and not evaluable: grants nothing
        return cache[text]


def denied(principal: Principal, action: str, resource: str, why: str) -> str:
    """DynamoDB's AccessDeniedException message, in IAM's three forms."""
    head = f"User: {principal.arn} is not authorized to perform: {action} on resource: {resource} "
    if why == IDENTITY_DENY:
        return head + "with an explicit deny in an identity-based policy"
    if why == RESOURCE_DENY:
        return head + "with an explicit deny in a resource-based policy"
    return head + f"because no identity-based policy allows the {action} action"

"""`partita serve --auth FILE`: every request signed with a known key and allowed by its policies.

`Authenticator.verify` is SigV4 (sigv4.py) against the principals of the
file (principals.py); `authorize` evaluates the checks DynamoDB makes for
the operation (`partita.api.authorize`) against the principal's identity
policies and the resources' policies (policies.py). Without `--auth` none
of this runs: the protocol layer keeps its one header-form check.
"""

from __future__ import annotations

import hmac
import time
from pathlib import Path
from typing import Any

from ...api.authorize import Requirements, plain_check_key
from ...engine.engine import Engine
from ...engine.time.clock import wall_now
from ...errors import AccessDeniedException
from . import presigned
from .digest import check
from .errors import INVALID_TOKEN, UnrecognizedClientException
from .policies import (
    IDENTITY_DENY,
    RESOURCE_DENY,
    TIME_KEYS,
    PolicyError,
    Statement,
    compile_policy,
    decide,
    uses,
)
from .principals import AuthFileError, Principal, Principals
from .sigv4 import (
    REPEATED,
    SERVICE,
    TERMINATOR,
    Plan,
    make_plan,
    parse_authorization,
    verify_signature,
)

__all__ = ["AuthFileError", "Authenticator", "Principal"]

ADMIN_ACTION = "partita:Admin"
"""What Partita's own routes (/partita/v1/..., /metrics) require: an identity
policy allowing it (`"Action": "*"` or `"partita:*"`) on resource `*`."""


class Authenticator:
    def __init__(
        self, path: Path, region: str, secure_transport: bool = False, regions: tuple[str, ...] | None = None
    ) -> None:
        self.principals = Principals(path)
        self.secure_transport = secure_transport  # the console's cookie is Secure over TLS
        #: The region a credential must be scoped to; with `--regions`, the set of them.
        self.region: str | frozenset[str] = region
        self._secure = ["true" if secure_transport else "false"]
        self._scope_tail: bytes | frozenset[bytes] = f"/{region}/{SERVICE}/{TERMINATOR}".encode()
        if regions is not None and regions != (region,):
            self.region = frozenset(regions)
            self._scope_tail = frozenset(f"/{name}/{SERVICE}/{TERMINATOR}".encode() for name in regions)
        #: Authorization header less its signature -> what it fixes (sigv4.Plan).
        self._plans: dict[bytes, Plan] = {}
        self._last: Plan | None = None

    def reload(self) -> bool:
        return self.principals.reload()

    def verify(self, method: str, path: bytes, headers: dict[bytes, bytes], body: bytes) -> Principal:
        """The principal that signed this request, or DynamoDB's exception for why not.

        The SDK form is verified on bytes by the plan of its Authorization
        header less the signature (the hot path: the parse, scope and key are
        worked out once per client and day); whatever fails there, or is in
        another form, takes the full checks, which find the exception to raise
        in DynamoDB's order.
        """
        raw = headers.get(b"authorization")
        query = presigned.query_auth(path) if b"?" in path else None
        if query is not None:
            return self._verify_query(query, method, path, headers, body)
        if raw is not None and REPEATED not in headers:
            # One client's header prefix repeats: the last plan is tried by one compare (a
            # slice and == cost less than startswith's argument parsing; equal prefixes
            # imply equal lengths).
            prefix = raw[:-64]
            plan = self._last
            if plan is None or prefix != plan.prefix or plan.principals is not self.principals.by_raw_key:
                plan = self._plans.get(prefix)
                if plan is None or plan.principals is not self.principals.by_raw_key:
                    plan = self._plan(raw)
                self._last = plan
            if plan is not None:
                try:
                    values = plan.values(headers)
                except KeyError:
                    values = None  # a signed header is missing: the general path says so
                if values is not None:
                    # The canonical request, string to sign and HMAC (sigv4.py), inline: this
                    # runs on every request. What the signed values fix is remembered (a
                    # `Form`: hash states over the bytes they fix); the body's hash, the
                    # canonical request's hash and the HMAC are computed for each request,
                    # in one call (digest.check).
                    if method != plan.method or path != plan.path:
                        form = None
                    elif values == plan.last_values:  # concurrent clients sign within the same second
                        form = plan.last_form
                    else:
                        form = plan.forms.get(values)
                        if form is not None:
                            plan.last_values, plan.last_form = values, form
                    made = form is None
                    if made:
                        form = plan.form(values, headers.get(b"x-amz-date"), method, path)
                    if (
                        form is not None
                        and form.earliest <= wall_now() <= form.latest
                        and (
                            plan.token is None and b"x-amz-security-token" not in headers
                            or _token_matches(plan.principal, headers)
                        )
                    ):
                        if check(form.states, body, raw[-64:]):
                            if made:
                                plan.remember(values, form, method, path)
                            return plan.principal
        auth = parse_authorization(headers, self.region, wall_now())
        principal = self.principals.by_key.get(auth.access_key)
        if principal is None or (principal.session_token is not None and b"x-amz-security-token" not in headers):
            raise UnrecognizedClientException(INVALID_TOKEN)
        verify_signature(auth, principal.secret, method, path, headers, body)
        if not _token_matches(principal, headers):
            # Checked after the signature, and without the period (dynalite's record of DynamoDB).
            raise UnrecognizedClientException(INVALID_TOKEN.rstrip("."))
        return principal

    def _verify_query(
        self, query: dict[str, str], method: str, path: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> Principal:
        """A presigned request (presigned.py): the general checks, on the query's parameters."""
        auth = presigned.parse(query, headers, self.region, wall_now())
        headers = presigned.token_headers(query, headers)
        principal = self.principals.by_key.get(auth.access_key)
        if principal is None or (principal.session_token is not None and b"x-amz-security-token" not in headers):
            raise UnrecognizedClientException(INVALID_TOKEN)
        verify_signature(auth, principal.secret, method, presigned.unsigned_path(path), headers, body)
        if not _token_matches(principal, headers):
            raise UnrecognizedClientException(INVALID_TOKEN.rstrip("."))
        return principal

    def _plan(self, raw: bytes) -> Plan | None:
        """Work out (and remember) the plan of an SDK-form header; None sends it the general way."""
        plan = make_plan(raw, self.principals.by_raw_key, self._scope_tail)
        if plan is not None:
            if len(self._plans) >= 1024:
                self._plans.clear()
            self._plans[raw[:-64]] = plan
        return plan

    def authorize(
        self, principal: Principal, engine: Engine, operation: str, request: dict[str, Any], streams: bool
    ) -> None:
        """Raise AccessDeniedException unless every check of the request is allowed."""
        if not principal.conditional and not streams:
            key = plain_check_key(engine, operation, request)
            if key is not None:
                remembered = principal.plain.get(key)
                if remembered is None:
                    (check,) = Requirements(engine, principal.account, False).of(operation, request, streams)
                    why = decide(principal.statements, None, check.action, check.resource, principal.identities,
                                 self._base_context(principal))
                    remembered = (why, check.action, check.resource)
                    if len(principal.plain) > 4096:
                        principal.plain.clear()
                    principal.plain[key] = remembered
                if remembered[0] is not None:
                    raise AccessDeniedException(denied(principal, remembered[1], remembered[2], remembered[0]))
                return
        base = self._base_context(principal)
        checks = Requirements(engine, principal.account, principal.conditional, principal.keys).of(
            operation, request, streams
        )
        memo = principal.decisions
        for check in checks:
            resource, resource_timed = self._resource_policy(principal, check.resource_policy)
            timed = principal.timed or resource_timed
            if check.context or timed:
                context = {**base, **check.context, **time_context()} if timed else {**base, **check.context}
                why = decide(principal.statements, resource, check.action, check.resource, principal.identities, context)
            else:
                # Without request-specific keys the answer depends on nothing else: remember it.
                key = (check.action, check.resource, check.resource_policy)
                try:
                    why = memo[key]
                except KeyError:
                    why = decide(principal.statements, resource, check.action, check.resource, principal.identities, base)
                    if len(memo) > 4096:
                        memo.clear()
                    memo[key] = why
            if why is not None:
                raise AccessDeniedException(denied(principal, check.action, check.resource, why))

    def authorize_admin(self, principal: Principal) -> None:
        context = self._base_context(principal)
        if principal.timed:
            context = {**context, **time_context()}
        why = decide(principal.statements, None, ADMIN_ACTION, "*", principal.identities, context)
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
    def _resource_policy(principal: Principal, text: str | None) -> tuple[list[Statement] | None, bool]:
        """The resource's policy compiled for this principal, and whether it reads the time."""
        if text is None:
            return None, False
        cache = principal.resource_cache
        compiled = cache.get(text)
        if compiled is None:
            if len(cache) > 1024:
                cache.clear()
            try:
                statements = compile_policy(text, principal.variables, resource_policy=True)
                compiled = cache[text] = (statements, uses(statements, TIME_KEYS))
            except PolicyError:
                compiled = cache[text] = (None, False)  # stored before enforcement and not evaluable: grants nothing
        return compiled


def time_context() -> dict[str, list[str]]:
    """aws:CurrentTime and aws:EpochTime: wall time, as the signature's skew check reads it."""
    now = int(wall_now())
    return {
        "aws:currenttime": [time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))],
        "aws:epochtime": [str(now)],
    }


def _token_matches(principal: Principal, headers: dict[bytes, bytes]) -> bool:
    """A session token exactly when the principal has one, and the right one."""
    token = headers.get(b"x-amz-security-token")
    expected = principal.session_token
    if token is None or expected is None:
        return token is None and expected is None
    return hmac.compare_digest(token, expected.encode())


def denied(principal: Principal, action: str, resource: str, why: str) -> str:
    """DynamoDB's AccessDeniedException message, in IAM's three forms.

    The implicit form is on record for DynamoDB; the two explicit-deny
    suffixes are IAM's as other services answer them (not seen for DynamoDB).
    """
    head = f"User: {principal.arn} is not authorized to perform: {action} on resource: {resource} "
    if why == IDENTITY_DENY:
        return head + "with an explicit deny in an identity-based policy"
    if why == RESOURCE_DENY:
        return head + "with an explicit deny in a resource-based policy"
    return head + f"because no identity-based policy allows the {action} action"

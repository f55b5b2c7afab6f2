"""SigV4 in the query string (a presigned request), as DynamoDB takes it.

DynamoDB accepts the signature in the query string instead of an
Authorization header: dynalite's source records the service's answers for
that form (a request whose query names `X-Amz-Algorithm`): both forms at
once are refused ("Found both ..."), each of X-Amz-Algorithm, X-Amz-Credential,
X-Amz-Signature, X-Amz-SignedHeaders and X-Amz-Date that is missing or empty
is named in one IncompleteSignatureException ending "Re-examine the
query-string parameters.", and then the checks go on as for the header
(date, expiry, Host signed, algorithm, credential, scope, key, signature,
session token). The canonical request is SigV4's: the query string less
X-Amz-Signature, the signed headers, the body's SHA-256.
"""

from __future__ import annotations

import time
from urllib.parse import unquote

from .errors import IncompleteSignatureException, InvalidSignatureException
from .sigv4 import Parsed, amz_seconds, check_skew, checked_parts

BOTH = "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header."
REQUIRED = ("X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-SignedHeaders", "X-Amz-Date")
MAX_EXPIRES = 7 * 24 * 3600


def query_auth(path: bytes) -> dict[str, str] | None:
    """The query's parameters (decoded; the first of a name sent twice) when it names
    X-Amz-Algorithm, else None (the request is signed in a header, or not at all)."""
    _, sep, query = path.partition(b"?")
    if not sep or b"X-Amz-Algorithm" not in query:
        return None
    params: dict[str, str] = {}
    for part in query.decode("latin-1").split("&"):
        name, _, value = part.partition("=")
        params.setdefault(unquote(name), unquote(value))
    return params if "X-Amz-Algorithm" in params else None


def check_form(params: dict[str, str], headers: dict[bytes, bytes]) -> None:
    """Both forms at once, or a missing parameter: DynamoDB's two refusals (the header-less
    server checks this much, as it checks an Authorization header's form)."""
    if b"authorization" in headers:
        raise InvalidSignatureException(BOTH)
    message = "".join(f"AWS query-string parameters must include '{name}'. " for name in REQUIRED if not params.get(name))
    if message:
        raise IncompleteSignatureException(message + "Re-examine the query-string parameters.")


def parse(params: dict[str, str], headers: dict[bytes, bytes], region: str, now: float) -> Parsed:
    """The query's signature parts, or DynamoDB's exception for the first thing wrong, in the
    header form's order (sigv4.parse_authorization)."""
    check_form(params, headers)
    amz_date = params["X-Amz-Date"].strip()
    seconds = amz_seconds(amz_date.encode("latin-1"))
    if seconds is None:
        raise IncompleteSignatureException(
            f"Date must be in ISO-8601 'basic format'. Got '{amz_date}'. See http://en.wikipedia.org/wiki/ISO_8601"
        )
    check_skew(amz_date, seconds, now)
    expires = params.get("X-Amz-Expires", "")
    if expires.isdigit() and int(expires) <= MAX_EXPIRES and now > seconds + int(expires):
        # Unconfirmed: DynamoDB's words for a presigned request past its X-Amz-Expires
        # (this is the skew message's form, with the request's own validity).
        raise InvalidSignatureException(f"Signature expired: {amz_date} is now earlier than "
                                        f"{_iso(now - int(expires))} ({_iso(now)} - {expires} sec.)")
    return checked_parts(params["X-Amz-Algorithm"], params["X-Amz-Credential"], params["X-Amz-SignedHeaders"],
                         params["X-Amz-Signature"], amz_date, seconds, region)


def unsigned_path(path: bytes) -> bytes:
    """The path and query the signature covers: the query less X-Amz-Signature."""
    raw_path, _, query = path.partition(b"?")
    kept = [part for part in query.split(b"&") if unquote(part.partition(b"=")[0].decode("latin-1")) != "X-Amz-Signature"]
    return raw_path + b"?" + b"&".join(kept)


def token_headers(params: dict[str, str], headers: dict[bytes, bytes]) -> dict[bytes, bytes]:
    """The headers with the query's X-Amz-Security-Token as the header a session token is read from."""
    token = params.get("X-Amz-Security-Token")
    if token is None or b"x-amz-security-token" in headers:
        return headers
    return {**headers, b"x-amz-security-token": token.encode("latin-1")}


def _iso(seconds: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(int(seconds)))

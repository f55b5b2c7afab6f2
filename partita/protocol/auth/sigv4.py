"""AWS Signature Version 4, verified as DynamoDB verifies it.

The server recomputes the canonical request from what arrived (method, path
and query as sent, the headers the client says it signed, the SHA-256 of
the body bytes as received -- still compressed under `Content-Encoding: gzip`
or `deflate`, because the SDKs sign the compressed body and the service
verifies those bytes), derives the signing key from the
secret it holds, and compares signatures in constant time. The body's hash
is always computed here: an `X-Amz-Content-Sha256` header is only one more
signed header, so a client cannot vouch for its own body.

Messages and their order are DynamoDB's as dynalite's source records the
service's answers (docs/decisions.md, "Messages"); a secret never appears
in one. Clock skew is judged against wall
time (docs/decisions.md, "Authentication"): clients sign with their wall
clock, and `partita clock advance` must not make every signature "expired".
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from calendar import monthrange, timegm
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_tz
from functools import lru_cache
from operator import itemgetter
from typing import Any
from urllib.parse import quote, unquote

from .digest import check, join, state
from .errors import (
    IncompleteSignatureException,
    InvalidSignatureException,
    MissingAuthenticationTokenException,
)

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "dynamodb"
TERMINATOR = "aws4_request"
MAX_SKEW_SECONDS = 15 * 60
_UNRESERVED = "-_.~"
_SIGNING_KEYS: dict[tuple[str, bytes], tuple[Any, Any]] = {}
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))
_MAX_SIGNING_KEYS = 4096


@dataclass(frozen=True, slots=True)
class Parsed:
    """The parts of an Authorization header, checked for presence and form."""

    algorithm: str
    access_key: str
    date: str
    region: str
    service: str
    terminator: str
    signed_headers: tuple[bytes, ...]
    signature: bytes
    amz_date: str  # the request time, ISO-8601 basic format (from X-Amz-Date or Date)
    seconds: int  # the same as POSIX seconds


_SDK_FORM = re.compile(
    rb"AWS4-HMAC-SHA256 Credential=([!-+\--.0-~]+)/((\d{8})/([!-+\--.0-~]+)/([!-+\--.0-~]+)/([!-+\--.0-~]+)),"
    rb" ?SignedHeaders=([!-+\--~]+), ?Signature=([0-9a-f]{64})"
)
"""What every SDK sends: parsed by one match (the general path below costs
several times more). Parts hold printable ASCII without space, comma or
slash, so the general path would read the same values; group 2 is the whole
credential scope, as the string to sign carries it."""

_AMZ_SECONDS: dict[bytes, int] = {}
"""X-Amz-Date values seen lately -> POSIX seconds (a new one each second)."""

REPEATED = b"\x00repeated"
"""Present in a request's headers when one was sent more than once. SigV4 signs such a
header over its values joined by commas, which the HTTP layer keeps under b"\x00" + name
(no header name can begin with NUL); the rest of Partita reads the first value."""


def note_repeated(headers: dict[bytes, bytes], name: bytes, previous: bytes, value: bytes) -> None:
    """Record that header `name` came again: its values joined by commas, each trimmed (as signed)."""
    joined = headers.get(b"\x00" + name)
    if joined is None:
        joined = b" ".join(previous.split())
    headers[b"\x00" + name] = joined + b"," + b" ".join(value.split())
    headers[REPEATED] = b""


def amz_seconds(amz: bytes) -> int | None:
    """X-Amz-Date's POSIX seconds, or None when it is not YYYYMMDDTHHMMSSZ (cached: one a second)."""
    seconds = _AMZ_SECONDS.get(amz)
    if seconds is None:
        seconds = _seconds(amz.decode("latin-1")) if len(amz) == 16 else None
        if seconds is None:
            return None
        if len(_AMZ_SECONDS) >= 64:
            _AMZ_SECONDS.clear()
        _AMZ_SECONDS[amz] = seconds
    return seconds


@dataclass(slots=True)
class Plan:
    """What an SDK-form Authorization header fixes apart from its signature, worked out once.

    A client sends the same header but for its last 64 bytes (the signature)
    on every request of a day, so the header's prefix keys this: the parse
    (one regex), the scope and region check, the principal and its signing
    key, and the canonical request's template. Every request is still
    verified: its own header values, body hash and HMAC.
    """

    prefix: bytes  # the header less its signature
    principals: Any  # the principals mapping it was made from (a reload makes it stale)
    principal: Any
    day: bytes  # the scope's date, which X-Amz-Date must begin with
    middle: bytes  # b"\n" + scope + b"\n": the string to sign between the date and the hash
    signed: bytes  # SignedHeaders, lower-cased
    names: tuple[bytes, ...]
    values: Callable[[dict[bytes, bytes]], tuple[bytes, ...]]
    token: bytes | None  # the principal's session token
    inner: Any  # the signing key's HMAC states (digest.state)
    outer: Any
    method: str = ""  # the (method, path) `template` and `forms` are for
    path: bytes = b""
    template: bytes = b""
    #: Signed header values (as sent) -> Form, for requests to (method, path).
    forms: dict[tuple[bytes, ...], Form] = field(default_factory=dict)
    last_values: tuple[bytes, ...] = ()  # the values of the form last used, tried first (no hash)
    last_form: Form | None = None

    def template_for(self, method: str, path: bytes) -> bytes:
        """The canonical request's template for this method and path (the first one is kept here)."""
        template = _cached_template(method, path, self.signed, self.names)
        if not self.method:
            self.method, self.path, self.template = method, path, template
        return template

    def form(self, values: tuple[bytes, ...], amz: bytes | None, method: str, path: bytes) -> Form | None:
        """What these signed values fix; None when X-Amz-Date is missing, not this plan's, or not signed.

        Made, not remembered: `remember` keeps it once a request with it
        has verified, so that only a holder of the secret adds forms.
        """
        if amz is None or b"x-amz-date" not in self.names:
            return None  # the general path says what is wrong (or verifies an unsigned date)
        seconds = amz_seconds(amz)
        if seconds is None or not amz.startswith(self.day):
            return None
        joined = b" ".join(values)
        if b" ".join(joined.split()) != joined:
            # SigV4 trims each value and collapses runs of whitespace.
            values_signed = tuple([b" ".join(value.split()) for value in values])
        else:
            values_signed = values
        return Form(
            join(
                state(self.template_for(method, path) % values_signed),
                state(b"AWS4-HMAC-SHA256\n" + amz + self.middle, self.inner),
                self.outer,
            ),
            float(seconds - MAX_SKEW_SECONDS),  # floats: compared with wall time, no int-float compare
            float(seconds + MAX_SKEW_SECONDS),
        )

    def remember(self, values: tuple[bytes, ...], form: Form, method: str, path: bytes) -> None:
        """Keep a form that verified a request, for the plan's first (method, path) only.

        Clients repeat the signed values but for X-Amz-Date (once a second)
        and X-Amz-Target (per operation), so few distinct ones are current;
        the bound keeps a client cycling through values from holding memory.
        """
        if method == self.method and path == self.path:
            if len(self.forms) >= MAX_FORMS:
                self.forms.clear()
            self.forms[values] = form
            self.last_values, self.last_form = values, form


MAX_FORMS = 64
"""Forms a plan keeps: those of the current second's operations, with room to spare."""


@dataclass(frozen=True, slots=True)
class Form:
    """What one set of signed header values fixes: all but the body's hash and what follows it.

    The canonical request up to the body's hash and the string to sign up to
    the canonical request's hash are the same bytes for every request with
    these values, so both are kept as SHA-256 states that have absorbed them
    (as the signing key's HMAC pads are): a request's hashes continue from
    them over its own body's hash, then its canonical request's hash, then
    the HMAC's outer hash, and its signature is compared. Nothing of a
    signature is kept. Also the window of wall time X-Amz-Date is good for.
    """

    #: digest.join of: the SHA-256 state having absorbed the canonical request less the body's
    #: hash, HMAC's inner state having absorbed the string to sign less the canonical request's
    #: hash, and HMAC's outer state (the plan's).
    states: Any
    earliest: float  # wall time in [earliest, latest]: X-Amz-Date within 15 minutes
    latest: float


def make_plan(raw: bytes, principals: Any, scope_tail: bytes | frozenset[bytes]) -> Plan | None:
    """The plan of an SDK-form header whose key is known and whose scope names this server.

    `scope_tail` is the scope after its date ("/region/dynamodb/aws4_request"),
    or the set of them of a server of several regions. None otherwise: the
    general path then finds the exception to raise.
    """
    match = _SDK_FORM.fullmatch(raw)
    if match is None:
        return None
    key, scope, signed = match.group(1, 2, 7)
    principal = principals.get(key)
    if principal is None or (scope[8:] not in scope_tail if isinstance(scope_tail, frozenset)
                             else scope[8:] != scope_tail):
        return None
    signed = signed.lower()
    names = tuple(signed.split(b";"))
    if b"host" not in names:
        return None  # DynamoDB refuses it: the general path says why
    values: Callable[[dict[bytes, bytes]], tuple[bytes, ...]]
    if len(names) == 1:
        only = names[0]
        values = lambda headers: (headers[only],)  # noqa: E731 - itemgetter of one name is no tuple
    else:
        values = itemgetter(*names)
    inner, outer = signing_pads(principal.secret, scope)
    token = None if principal.session_token is None else principal.session_token.encode()
    return Plan(raw[:-64], principals, principal, scope[:8], b"\n" + scope + b"\n", signed, names, values, token,
                inner, outer)


def parse_authorization(headers: dict[bytes, bytes], region: str | frozenset[str], now: float) -> Parsed:
    """The header's parts, or DynamoDB's exception for the first thing wrong, in its order.

    The order is the one DynamoDB answered in, as dynalite's source records
    it: parameters present, the date's form, clock skew, Host signed, the
    algorithm, the credential's five parts, its scope (every part wrong
    named in one message); the caller then checks the key id, the
    signature and last the session token.
    """
    raw = headers.get(b"authorization", b"")
    algorithm, params = header_parameters(raw, headers)
    amz_date, seconds = _request_time(headers)
    check_skew(amz_date, seconds, now)
    return checked_parts(algorithm, params["Credential"], params["SignedHeaders"], params["Signature"],
                         amz_date, seconds, region)


def checked_parts(algorithm: str, credential: str, signed_headers: str, signature: str, amz_date: str,
                  seconds: float, region: str | frozenset[str]) -> Parsed:
    """The checks after the date's, shared by the header and the query-string (presigned) forms,
    in DynamoDB's order: Host signed, the algorithm, the credential's five parts, its scope."""
    signed = tuple(name.encode("latin-1").lower() for name in signed_headers.split(";"))
    if b"host" not in signed:
        raise InvalidSignatureException("'Host' must be a 'SignedHeader' in the AWS Authorization.")
    if algorithm != ALGORITHM:
        raise IncompleteSignatureException(f"Unsupported AWS 'algorithm': '{algorithm}' (only {ALGORITHM} for now). ")
    parts = credential.split("/")
    while parts and not parts[-1]:
        parts.pop()  # trailing slashes are ignored (as Java's split drops trailing empty parts)
    if len(parts) != 5:
        raise IncompleteSignatureException(
            "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term,"
            f" got '{credential}'"
        )
    auth = Parsed(algorithm, *parts, signed, signature.encode("latin-1"), amz_date, seconds)
    check_scope(auth, region)
    return auth


_COMPONENTS = re.compile(r"[ \t,]+")
"""What separates the Authorization header's components: commas, whitespace, or both.

DynamoDB parses `Credential=... SignedHeaders=... Signature=...` with single
spaces and no commas (observed on the service), as it parses ", " and ","."""


_CREDENTIAL = re.compile(rb"Credential=([^ \t,]*)")


def credential_region(headers: dict[bytes, bytes]) -> str:
    """The region of a request's credential scope, the one it belongs to on a server of several regions.

    The header's form is already checked (`header_parameters`); a
    credential that does not have DynamoDB's five parts is refused as
    `parse_authorization` refuses it.
    """
    match = _CREDENTIAL.search(headers.get(b"authorization", b""))
    credential = "" if match is None else match.group(1).decode("latin-1")
    parts = credential.split("/")
    while parts and not parts[-1]:
        parts.pop()
    if len(parts) != 5:
        raise IncompleteSignatureException(
            "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term,"
            f" got '{credential}'"
        )
    return parts[2]


def unknown_region(region: str) -> InvalidSignatureException:
    """DynamoDB's answer to a credential scoped to a region the server does not serve (check_scope's words)."""
    return InvalidSignatureException(f"Credential should be scoped to a valid region, not '{region}'. ")


def header_parameters(raw: bytes, headers: dict[bytes, bytes]) -> tuple[str, dict[str, str]]:
    """The Authorization header's algorithm and parameters, or DynamoDB's error for a missing part.

    The one check of the header's form: the protocol layer runs it on every
    request without `--auth` too (presence and form, as DynamoDB Local).
    """
    auth = raw.decode("latin-1")
    stripped = auth.strip()
    if not stripped.startswith("AWS4-"):
        raise MissingAuthenticationTokenException("Request is missing Authentication Token")
    algorithm, _, rest = stripped.partition(" ")
    params: dict[str, str] = {}
    for part in _COMPONENTS.split(rest):
        name, equals, value = part.partition("=")
        if not equals:
            if not part:
                continue  # a separator at either end
            # Checked before the parameters, the first such part named (dynalite's record of DynamoDB).
            raise IncompleteSignatureException(
                f"'{part}' not a valid key=value pair (missing equal-sign) in Authorization header: '{auth}'."
            )
        params[name] = value
    message = "".join(
        f"Authorization header requires '{name}' parameter. "
        for name in ("Credential", "Signature", "SignedHeaders")
        if not params.get(name)
    )
    if b"x-amz-date" not in headers and b"date" not in headers:
        message += "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. "
    if message:
        raise IncompleteSignatureException(message + "Authorization=" + auth)
    return algorithm, params


def _request_time(headers: dict[bytes, bytes]) -> tuple[str, int]:
    """The request's time as YYYYMMDDTHHMMSSZ and seconds: X-Amz-Date, else the HTTP Date header."""
    value = headers.get(b"x-amz-date")
    if value is not None:
        text = value.decode("latin-1").strip()
        seconds = _seconds(text)
        if seconds is not None:
            return text, seconds
        raise IncompleteSignatureException(
            f"Date must be in ISO-8601 'basic format'. Got '{text}'. See http://en.wikipedia.org/wiki/ISO_8601"
        )
    text = headers[b"date"].decode("latin-1").strip()
    parsed = parsedate_tz(text)
    if parsed is None:
        raise IncompleteSignatureException(
            f"Date must be in ISO-8601 'basic format'. Got '{text}'. See http://en.wikipedia.org/wiki/ISO_8601"
        )
    seconds = timegm(parsed[:9]) - (parsed[9] or 0)
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(seconds)), seconds


def check_scope(auth: Parsed, region: str | frozenset[str]) -> None:
    """The credential scope names this server's region (one of its `--regions`), DynamoDB and the request's date.

    Every part that is wrong is named, in one message (as DynamoDB answers).
    """
    message = ""
    if auth.region not in region if isinstance(region, frozenset) else auth.region != region:
        message += f"Credential should be scoped to a valid region, not '{auth.region}'. "
    if auth.service != SERVICE:
        message += f"Credential should be scoped to correct service: '{SERVICE}'. "
    if auth.terminator != TERMINATOR:
        message += f"Credential should be scoped with a valid terminator: '{TERMINATOR}', not '{auth.terminator}'. "
    if auth.date != auth.amz_date[:8]:
        message += (
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
            f"'{auth.date}' != '{auth.amz_date[:8]}', from '{auth.amz_date}'."
        )
    if message:
        raise InvalidSignatureException(message)


def _seconds(text: str) -> int | None:
    """YYYYMMDDTHHMMSSZ as POSIX seconds, or None when it is not a valid one.

    By hand: time.strptime costs ~10 us, more than the rest of verification.
    """
    if len(text) != 16 or text[8] != "T" or text[15] != "Z":
        return None
    digits = text[:8] + text[9:15]
    if not digits.isascii() or not digits.isdigit():
        return None
    year, month, day = int(text[:4]), int(text[4:6]), int(text[6:8])
    hour, minute, second = int(text[9:11]), int(text[11:13]), int(text[13:15])
    if not (1 <= month <= 12 and 1 <= day <= monthrange(year, month)[1] and hour < 24 and minute < 60 and second < 62):
        return None
    return timegm((year, month, day, hour, minute, second, 0, 0, 0))


def check_skew(amz_date: str, signed: int, now: float) -> None:
    """More than 15 minutes from `now` either way: DynamoDB's two messages."""
    if signed < now - MAX_SKEW_SECONDS:
        raise InvalidSignatureException(
            f"Signature expired: {amz_date} is now earlier than {_iso(now - MAX_SKEW_SECONDS)} "
            f"({_iso(now)} - 15 min.)"
        )
    if signed > now + MAX_SKEW_SECONDS:
        raise InvalidSignatureException(
            f"Signature not yet current: {amz_date} is still later than {_iso(now + MAX_SKEW_SECONDS)} "
            f"({_iso(now)} + 15 min.)"
        )


def _iso(seconds: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(int(seconds)))


SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)
"""DynamoDB's text today. Years ago it went on with the canonical request and
string to sign the service expected; recent reports show this sentence alone,
so that is what Partita sends (it also keeps header values out of errors)."""


def verify_signature(
    auth: Parsed, secret: str, method: str, path: bytes, headers: dict[bytes, bytes], body: bytes
) -> None:
    """Recompute the signature over the request as received; constant-time compare (digest.check)."""
    scope = f"{auth.date}/{auth.region}/{auth.service}/{auth.terminator}".encode("latin-1")
    inner, outer = signing_pads(secret, scope)
    head = canonical_head(method, path, b";".join(auth.signed_headers), auth.signed_headers, headers)
    to_sign = b"AWS4-HMAC-SHA256\n" + auth.amz_date.encode("latin-1") + b"\n" + scope + b"\n"
    if not check(join(state(head), state(to_sign, inner), outer), body, auth.signature):
        raise InvalidSignatureException(SIGNATURE_MISMATCH)


def canonical_head(
    method: str, path: bytes, signed: bytes, names: Sequence[bytes], headers: dict[bytes, bytes]
) -> bytes:
    """SigV4's canonical request less the body's hash (which `digest.check` appends).

    One formatting of a template cached per (method, path, signed); `signed`
    is the SignedHeaders value lower-cased and `names` its parts. The header
    values are the HTTP layer's (names already lower-cased); runs of
    whitespace collapse to one space, as the SDKs sign them. The body is
    always hashed by the check: the client's X-Amz-Content-Sha256 is only
    one more signed header and cannot vouch for the body.
    """
    template = _cached_template(method, path, signed, names)
    get = headers.get
    if REPEATED in headers:
        get = lambda name, default: headers.get(b"\x00" + name) or headers.get(name, default)  # noqa: E731
    return template % tuple([b" ".join(get(name, b"").split()) for name in names])


def _cached_template(method: str, path: bytes, signed: bytes, names: Sequence[bytes]) -> bytes:
    key = (method, path, signed)
    template = _TEMPLATES.get(key)
    if template is None:
        template = _template(method, path, signed, names)
        if len(_TEMPLATES) >= 256:
            _TEMPLATES.clear()
        _TEMPLATES[key] = template
    return template


_TEMPLATES: dict[tuple[str, bytes, bytes], bytes] = {}


def _template(method: str, path: bytes, signed: bytes, names: Sequence[bytes]) -> bytes:
    """Method, URI, query, `name:%b` per signed header, the signed list; the body's hash follows."""
    raw_path, _, query = path.partition(b"?")
    head = b"\n".join((method.encode("latin-1"), _canonical_uri(raw_path), _canonical_query(query), b""))
    lines = b"\n".join(name.replace(b"%", b"%%") + b":%b" for name in names)
    return head.replace(b"%", b"%%") + lines + b"\n\n" + signed.replace(b"%", b"%%") + b"\n"


@lru_cache(maxsize=256)
def _canonical_uri(path: bytes) -> bytes:
    """The path encoded once more, as botocore does for every service but S3."""
    return quote(path.decode("latin-1") or "/", safe="/~").encode("latin-1")


def _canonical_query(query: bytes) -> bytes:
    if not query:
        return b""
    pairs = []
    for part in query.decode("latin-1").split("&"):
        if not part:
            continue
        name, _, value = part.partition("=")
        pairs.append((quote(unquote(name), safe=_UNRESERVED), quote(unquote(value), safe=_UNRESERVED)))
    pairs.sort()
    return "&".join(f"{n}={v}" for n, v in pairs).encode("latin-1")


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    """HMAC chain of the secret over the scope (cached by `signing_pads`: it changes once a day per key)."""
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, TERMINATOR):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def signing_pads(secret: str, scope: bytes) -> tuple[Any, Any]:
    """The signing key of a scope as HMAC's two keyed SHA-256 states, cached per (secret, scope).

    HMAC continued from these states (digest.check) costs a fraction of
    `hmac.new(key, ...)`, which re-derives the pads on every call.
    """
    cache_key = (secret, scope)
    pads = _SIGNING_KEYS.get(cache_key)
    if pads is None:
        date, region, service, _ = scope.decode("latin-1").split("/")
        key = signing_key(secret, date, region, service).ljust(64, b"\0")
        pads = (state(key.translate(_IPAD)), state(key.translate(_OPAD)))
        if len(_SIGNING_KEYS) >= _MAX_SIGNING_KEYS:
            _SIGNING_KEYS.clear()
        _SIGNING_KEYS[cache_key] = pads
    return pads

"""The HTTP face of Partita: DynamoDB's JSON 1.0 protocol as a raw ASGI app.

A raw ASGI callable (no framework) because every request takes this path and
a framework's routing and request objects would cost more than the work of a
GetItem. The order of checks follows the real service: content type, body
decoding, JSON, target, authentication header, then the operation.

Around that, what DynamoDB's endpoint does at the HTTP level: `GET /` (and
/health) is the health check naming the host the client used (other GET
paths: 404); an `Origin` header gets CORS headers and `OPTIONS` with one is
a preflight; a large answer is compressed when the client accepts it
(`encoding.py`); every answer says `Server: Server`; a request line or
headers over 16 KB get 400.
"""

from __future__ import annotations

import logging
import re
import zlib
from binascii import hexlify as _hexlify
from functools import partial
from random import getrandbits as _random_bits
from typing import TYPE_CHECKING, Any

import orjson

from ..api.answers import EmptyAnswer
from ..api.dispatch import handle
from ..errors import (
    DynamoDBError,
    InternalServerError,
    SerializationException,
    UnknownOperationException,
)
from .browsers import Browsers, admin_refusal, host_name
from .encoding import (
    COMPRESSION_THRESHOLD,
    BadEncoding,
    TooLarge,
    accepted_coding,
    compress,
    decode_body,
)

if TYPE_CHECKING:
    from ..engine.engine import Engine
    from .auth import Authenticator

log = logging.getLogger("partita")

MAX_REQUEST_BYTES = 16 * 1024 * 1024
JSON_TYPES = (b"application/x-amz-json-1.0", b"application/json")
TARGET_PREFIXES = ("DynamoDB_20120810.", "DynamoDBStreams_20120810.")
_UNKNOWN_XML = b"<UnknownOperationException/>\n"
#: X-Amz-Target values already split into (service, operation): the few every client sends,
#: looked up instead of decoded and split on every request (bounded: a target is any text).
_TARGETS: dict[bytes, tuple[str, str]] = {}
_GET_ITEM = b"DynamoDB_20120810.GetItem"
_MAX_TARGETS = 512
# What every SDK sends; a match passes the checks below without parsing (a
# fast path, ~1.5 us a request). Values are printable ASCII without space or
# comma, so the full parse would find all three parameters non-empty.
_WELL_FORMED_AUTH = re.compile(
    rb"AWS4-[!-~]* Credential=[!-+\--~]+, ?SignedHeaders=[!-+\--~]+, ?Signature=[!-+\--~]+"
)
JSON_REPLY = b"application/x-amz-json-1.0"
OWN_PATHS = (b"/metrics",)
"""Partita's routes beside the admin API: with `--auth` they need a signature too.
The console is not among them: a browser cannot sign, so with `--auth` the
console asks for a sign-in and a session cookie instead (partita/console/login.py)."""
TEXT_REPLY = b"text/plain"
TEXT_UTF8 = b"text/plain; charset=utf-8"
ADMIN_PREFIX = b"/partita/"
"""Partita's own API (`partita/admin/routes.py`, whose PREFIX a test holds equal to this),
imported by its first request."""
CONSOLE_PREFIX = b"/console"
"""The web console's paths (`partita/console/routes.py`, whose PREFIX a test holds equal to this):
the console and Jinja2 are imported by the first request for one of them, not at start-up."""
HEALTH_PATHS = (b"/", b"/health")
"""The GET paths of the health check; GET elsewhere is 404 like other methods.

DynamoDB answers 404 to GET /dog (scylladb/scylladb#26079) and a 4xx to
GET /abc, /- and /index.htm (Alternator's `test_health_only_works_for_root_path`,
run against it); /health answered 404 too until 2025 and no longer does
(the same issue), so it keeps the health text. The 404's body there, and
whether a query string after "/" matters, are not on record."""

MAX_TARGET_BYTES = 16 * 1024
MAX_HEADER_BYTES = 16 * 1024
"""DynamoDB answers 400 to a request line (URL) or headers over 16 KB (as
recorded by Alternator's suite against it; the 400 for headers, its empty
body and whether the limit is 16,384 or 16,000 bytes are not on record).
The cap also bounds everything the protocol layer echoes: the Host in the
health text, CORS request headers, the Authorization header in
IncompleteSignatureException, the operation name in UnknownOperationException."""

# CORS as DynamoDB sends it (dynalite's suite and Alternator's, both run
# against the service): every answer to a request with an Origin allows any
# origin and exposes these headers; a preflight echoes what was asked for.
CORS_EXPOSE_HEADERS = b"x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"
CORS_MAX_AGE = b"172800"
_CORS = [(b"access-control-allow-origin", b"*"), (b"access-control-expose-headers", CORS_EXPOSE_HEADERS)]
_SERVER = (b"server", b"Server")  # DynamoDB's Server header, word for word

Headers = list[tuple[bytes, bytes]]
Answer = tuple[int, bytes, bytes | None, Headers | None]
"""(status, payload, content type or None, extra headers or None): what
Partita answers to one request. Extra headers are those that depend on the
request (Content-Encoding, CORS); the payload is already encoded."""

TOO_LARGE: Answer = (413, b"", None, None)
"""The answer to a body over MAX_REQUEST_BYTES (DynamoDB's status); the server then closes."""

HEAD_TOO_LARGE: Answer = (400, b"", None, None)
"""The answer to a request line or headers over their limit; the server then closes."""

# DynamoDB answers 500 to a body it cannot decode (Alternator's suite); the
# body of that 500 is not on record, so it is Partita's InternalServerError.
_UNDECODABLE = (500, orjson.dumps(InternalServerError("Internal server error").body()))


def request_id() -> bytes:
    """52 upper-case characters, the shape of DynamoDB's x-amzn-RequestId.

    Random, to tell requests apart in logs and bug reports, not secret: the
    module's generator (reseeded in every forked worker) costs half of
    os.urandom + base64, and this runs on every answer. hexlify of the
    bytes costs a third of formatting the 208-bit number with %X.
    """
    return _hexlify(_random_bits(208).to_bytes(26, "big")).upper()


def _headers(scope: dict[str, Any]) -> dict[bytes, bytes]:
    """Lower-case names, the first value of a repeated header, and the joined ones SigV4 signs.

    The first value counts: DynamoDB chooses the answer's coding from the
    first of several Accept-Encoding headers while SigV4 signs them joined
    (Alternator's `test_multiple_accept_encoding_headers`, run against the
    service). No other repeated header is on record; one rule for all of
    them is what an HTTP stack's `get(name)` does (docs/decisions.md).
    """
    pairs = scope["headers"]
    headers = {name.lower(): value for name, value in pairs}
    if len(headers) != len(pairs):
        headers = {}
        for name, value in pairs:
            name = name.lower()
            first = headers.get(name)
            if first is None:
                headers[name] = value
            else:
                # Rare: loaded by the first repeated header.
                from .auth.sigv4 import note_repeated

                note_repeated(headers, name, first, value)
    client = scope.get("client")
    if client and scope.get("path", "").startswith("/console"):
        from ..console.web import PEER

        headers[PEER] = str(client[0]).encode("latin-1", "replace")  # the sign-in throttle's address
    return headers


def is_console(path: bytes) -> bool:
    """A path of the web console (`partita/console/routes.py` answers it; loaded on first use)."""
    return path == CONSOLE_PREFIX or path.startswith((CONSOLE_PREFIX + b"/", CONSOLE_PREFIX + b"?"))


def header_bytes(headers: Any) -> int:
    """The size of a header block as sent (name, value, ": " and CRLF per header)."""
    return sum(len(name) + len(value) + 4 for name, value in headers)


def _head_too_large(scope: dict[str, Any]) -> bool:
    query = scope.get("query_string") or b""
    target = len(scope.get("raw_path") or scope["path"].encode()) + (len(query) + 1 if query else 0)
    return target > MAX_TARGET_BYTES or header_bytes(scope["headers"]) > MAX_HEADER_BYTES


def _check_auth(headers: dict[bytes, bytes], path: bytes) -> None:
    """Reject requests that are not SigV4-signed at all, as DynamoDB does.

    Without `--auth` signatures are not verified (any credentials work, as
    on DynamoDB Local); the presence and form of the Authorization header, or
    of a presigned request's query parameters, are still checked so that a
    client that forgot to sign learns it here and not in production.
    """
    if b"?" in path:
        from .auth import presigned  # a query string on "/": rare, so loaded by the first

        query = presigned.query_auth(path)
        if query is not None:
            presigned.check_form(query, headers)
            return
    raw = headers.get(b"authorization", b"")
    if _WELL_FORMED_AUTH.fullmatch(raw) and (b"x-amz-date" in headers or b"date" in headers):
        return
    # What the fast path leaves: loaded by the first such request.
    from .auth.sigv4 import header_parameters

    header_parameters(raw, headers)


class PartitaApp:
    """The ASGI application bound to one engine (and, with `--auth`, an Authenticator)."""

    def __init__(
        self,
        engine: Engine,
        auth: Authenticator | None = None,
        *,
        console: bool = True,
        bound: str = "127.0.0.1",
        allowed_hosts: tuple[str, ...] = (),
        secure: bool = False,
    ) -> None:
        """`bound`, `allowed_hosts`: the names a server without `--auth` answers its own routes
        under (protocol/browsers.py); `secure`: served over TLS (the console's cookies say so)."""
        self.engine = engine
        self.auth = auth
        self.console = console  # `partita serve --no-console` turns the web console off
        self._health_default = b"healthy: dynamodb.%s.amazonaws.com " % engine.region.encode()
        #: Without `--auth`: what browsers may not do on the console and admin routes.
        self.browsers = Browsers(bound, allowed_hosts) if auth is None else None
        self.secure = secure
        #: With `--regions`: the engine of each region; a request goes to its credential's region.
        self.regions = engine.regions
        if self.regions is not None:
            self._run = self._run_regional  # type: ignore[method-assign]  # one region's path stays as it was
        self._console: Any = None  # (authorizer, answer function), made by the first console request

    def _console_answer(self, method: str, headers: dict[bytes, bytes], path: bytes, body: bytes) -> Answer:
        """Answer a console request, importing the console (and Jinja2) the first time.

        The console's authorizer is process-wide (`console/web.py`): the app
        that answers installs its own, so with several apps in one process
        (partita.testing) each console sees its own server's `--auth`.
        """
        if self._console is None:
            from ..console.routes import answer

            auth = self.auth
            if auth is None:  # the per-browser form token (console/forms.py)
                from ..console.forms import Forms

                check = Forms(self.engine, self.secure).check
            else:
                from ..console.login import Guard

                check = Guard(self.engine, lambda key: auth.principals.by_key.get(key), auth.authorize,
                              auth.secure_transport).check
            self._console = check, answer
        check, answer = self._console
        from ..console.web import AUTHORIZER, set_authorizer

        if AUTHORIZER[0] is not check:
            set_authorizer(check)
        return answer(self.engine, method, headers, path, body)  # type: ignore[no-any-return]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if _head_too_large(scope):  # uvicorn sets no such limit itself
            await _send(send, 400, b"", None, [(b"connection", b"close")])
            return
        chunks = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_REQUEST_BYTES:
                await _send(send, *TOO_LARGE)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        path = scope.get("raw_path") or scope.get("path", "/").encode("latin-1")
        query = scope.get("query_string")
        if query:
            path += b"?" + query  # as our own server passes the URL: signatures cover the query
        await _send(send, *self.answer(scope["method"], _headers(scope), b"".join(chunks), path))

    def answer(
        self, method: str, headers: dict[bytes, bytes], body: bytes, path: bytes = b"/"
    ) -> Answer:
        """Answer one complete HTTP request: (status, payload, content type, extra headers).

        The one definition of what Partita answers at the HTTP level, shared
        by the ASGI path above and by `partita.protocol.server`, so that both
        servers behave the same byte for byte (apart from headers a server
        adds itself, such as Date). `headers` has lower-case names; of a
        header sent several times the first counts (as on DynamoDB, for
        Accept-Encoding).
        """
        if path != b"/":  # every DynamoDB request is a POST to "/": Partita's own paths are the others
            if path.startswith(ADMIN_PREFIX):  # Partita's own API (partita/admin), beside DynamoDB's
                refused = self._refuse_admin(method, path, headers, body)
                if refused is not None:
                    return refused
                from ..admin.routes import answer as admin_answer

                answer = (*admin_answer(self.engine, method, path, body), None)
                return answer if not self.secure else with_hsts(answer, headers)
            if path.startswith(OWN_PATHS):
                refused = self._refuse_admin(method, path, headers, body)
                if refused is not None:
                    return refused
            if path == b"/metrics" and method == "GET":  # Prometheus (partita/admin/metrics.py)
                from ..admin.metrics import CONTENT_TYPE, metrics

                return 200, metrics(self.engine), CONTENT_TYPE, None
            if self.console and is_console(path):  # the web console (partita/console): its own forms and pages
                if self.browsers is not None:
                    why = self.browsers.refusal(method, headers)
                    if why is not None:
                        return why[0], why[1].encode(), TEXT_UTF8, [(b"cache-control", b"no-store")]
                answer = self._console_answer(method, headers, path, body)
                return answer if not self.secure else with_hsts(answer, headers)
        if method == "POST":
            content_type = headers.get(b"content-type", b"")
            if content_type not in JSON_TYPES:  # what SDKs send passes as it is
                content_type = content_type.split(b";")[0].strip()
            if body and content_type not in JSON_TYPES:
                status, payload, reply_type = 404, _UNKNOWN_XML, None
            else:
                coding = headers.get(b"content-encoding")
                if coding is None:
                    status, payload = self.respond(headers, body, path=path)
                else:
                    raw = body
                    try:
                        body = decode_body(body, coding, MAX_REQUEST_BYTES)
                    except TooLarge:
                        return _with_cors(TOO_LARGE, method, headers)
                    except BadEncoding:
                        status, payload = _UNDECODABLE
                    else:
                        status, payload = self.respond(headers, body, raw, path)
                reply_type = JSON_REPLY if content_type != b"application/json" else content_type
        elif method == "GET" and path.partition(b"?")[0] in HEALTH_PATHS:
            host = headers.get(b"host")
            status, reply_type = 200, TEXT_REPLY
            payload = b"healthy: " + host + b" " if host else self._health_default
        elif method == "OPTIONS" and headers.get(b"origin"):
            status, payload, reply_type = 200, b"", None  # a CORS preflight
        else:
            status, payload, reply_type = 404, _UNKNOWN_XML, None
        extra = None
        if len(payload) >= COMPRESSION_THRESHOLD:
            accept = headers.get(b"accept-encoding")
            if accept is not None:
                chosen = accepted_coding(accept)
                if chosen is not None:
                    payload = compress(payload, chosen)
                    extra = [(b"content-encoding", chosen)]
        if b"origin" in headers:
            return _with_cors((status, payload, reply_type, extra), method, headers)
        return status, payload, reply_type, extra

    def _refuse_admin(
        self, method: str, path: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> Answer | None:
        """With `--auth`, Partita's own routes need a signature and the partita:Admin action.

        The refusal is DynamoDB's error (the same exceptions as the API's),
        not the admin API's `{"error": ...}`: it comes from the same check.
        Without `--auth`, browsers' requests are refused as protocol/browsers.py
        says, with the admin API's `{"error": ...}`.
        """
        if self.auth is None:
            assert self.browsers is not None
            why = self.browsers.refusal(method, headers)
            if why is None and path.startswith(ADMIN_PREFIX):
                message = admin_refusal(method, headers)
                why = None if message is None else (415, message)
            if why is None:
                return None
            return why[0], orjson.dumps({"error": why[1]}), b"application/json", [(b"cache-control", b"no-store")]
        try:
            self.auth.authorize_admin(self.auth.verify(method, path, headers, body))
        except DynamoDBError as error:
            return error.status, orjson.dumps(error.body()), JSON_REPLY, None
        return None

    def respond(
        self, headers: dict[bytes, bytes], body: bytes, raw: bytes | None = None, path: bytes = b"/"
    ) -> tuple[int, bytes]:
        """Run one request to completion; every failure becomes DynamoDB's error.

        `raw` is the body as received when it was compressed: with `--auth`
        the signature covers those bytes, not the inflated ones.
        """
        try:
            answer = self._run(headers, body, raw, path)
            return 200, b"" if answer.__class__ is EmptyAnswer else orjson.dumps(answer)
        except DynamoDBError as error:
            return error.status, orjson.dumps(error.body())
        except Exception:
            log.exception("internal error")
            error = InternalServerError("Internal server error")
            return error.status, orjson.dumps(error.body())

    def read_ahead(self, requests: list[tuple[dict[bytes, bytes], bytes]]) -> bool:
        """Hint the store at the GetItems among a loop turn's requests (headers, body) before they run.

        Whether any was hinted; if so, `end_read_ahead` once they are answered."""
        gets = []
        for headers, body in requests:
            if headers.get(b"x-amz-target") == _GET_ITEM and b"content-encoding" not in headers:
                try:
                    gets.append(orjson.loads(body))
                except orjson.JSONDecodeError:
                    pass
        if len(gets) < 2:
            return False
        from ..api.items import read_ahead

        read_ahead(self.engine, gets)
        return True

    def end_read_ahead(self) -> None:
        self.engine.items.forget_read_ahead()

    def _run(
        self, headers: dict[bytes, bytes], body: bytes, raw: bytes | None = None, path: bytes = b"/"
    ) -> dict[str, Any]:
        request = None
        if body:
            try:
                request = orjson.loads(body)
            except orjson.JSONDecodeError:
                raise SerializationException() from None
        target = headers.get(b"x-amz-target", b"")
        known = _TARGETS.get(target)
        if known is None:
            service, _, operation = target.decode("latin-1").partition(".")
            if service + "." not in TARGET_PREFIXES or not operation:
                raise UnknownOperationException()
            if len(_TARGETS) < _MAX_TARGETS:
                _TARGETS[target] = service, operation
        else:
            service, operation = known
        # The Host header goes down for DescribeEndpoints (its Address).
        if self.auth is None:
            _check_auth(headers, path)
            return handle(self.engine, operation, request, service, headers.get(b"host"))
        principal = self.auth.verify("POST", path, headers, body if raw is None else raw)
        authorize = principal.authorizer  # made once per principal (a reload makes new principals)
        if authorize is None or authorize.args[1] is not self.engine:
            authorize = principal.authorizer = partial(self.auth.authorize, principal, self.engine)
        return handle(self.engine, operation, request, service, headers.get(b"host"), authorize)


    def _run_regional(
        self, headers: dict[bytes, bytes], body: bytes, raw: bytes | None = None, path: bytes = b"/"
    ) -> dict[str, Any]:
        """`_run` on a server of several regions: the engine is the one of the credential's region.

        The region is read from the Authorization header after its form is
        checked (without `--auth`) or its signature verified (with it: the
        scope must then name one of the regions, sigv4.check_scope).
        """
        from .auth.sigv4 import credential_region, unknown_region

        assert self.regions is not None
        request = None
        if body:
            try:
                request = orjson.loads(body)
            except orjson.JSONDecodeError:
                raise SerializationException() from None
        service, _, operation = headers.get(b"x-amz-target", b"").decode("latin-1").partition(".")
        if service + "." not in TARGET_PREFIXES or not operation:
            raise UnknownOperationException()
        if self.auth is None:
            _check_auth(headers, path)
            region = credential_region(headers)
            engine = self.regions.get(region)
            if engine is None:
                raise unknown_region(region)
            answer = handle(engine, operation, request, service, headers.get(b"host"))
        else:
            principal = self.auth.verify("POST", path, headers, body if raw is None else raw)
            engine = self.regions[credential_region(headers)]
            answer = handle(engine, operation, request, service, headers.get(b"host"),
                            partial(self.auth.authorize, principal, engine))
        engine.global_tables.after_request()  # with no replication lag, the other regions see it now
        return answer


HSTS = (b"strict-transport-security", b"max-age=31536000")
"""What Partita's own routes (the console, the admin API) send over TLS: a browser then never
goes to them over plain HTTP for a year. Not on the DynamoDB API: DynamoDB's answers carry no
Strict-Transport-Security (recorded response headers: server, date, content-type,
content-length, connection, x-amzn-requestid, x-amz-crc32), and SDKs do not read it."""


def with_hsts(answer: Answer, headers: dict[bytes, bytes]) -> Answer:
    """`answer` with HSTS, unless the browser reached the server as the loopback by name: HSTS is
    per host, ports aside, so `localhost` would force HTTPS on every other local dev server (and
    browsers ignore it for IP literals, RFC 6797 8.1)."""
    host = headers.get(b"host")
    if host is not None:
        name = host_name(host)
        if name == "localhost" or name.endswith(".localhost") or ":" in name or name.replace(".", "").isdigit():
            return answer
    status, payload, content_type, extra = answer
    return status, payload, content_type, [HSTS] if extra is None else [*extra, HSTS]


def _with_cors(answer: Answer, method: str, headers: dict[bytes, bytes]) -> Answer:
    """Add DynamoDB's CORS headers to an answer to a request with an Origin.

    Only a preflight (OPTIONS) gets Max-Age and the echo of the requested
    headers and method, as on DynamoDB; an empty Origin counts as none.
    """
    if not headers.get(b"origin"):
        return answer
    status, payload, content_type, extra = answer
    added = list(_CORS)
    if method == "OPTIONS":
        requested = headers.get(b"access-control-request-headers")
        if requested:
            added.append((b"access-control-allow-headers", requested))
        requested = headers.get(b"access-control-request-method")
        if requested:
            added.append((b"access-control-allow-methods", requested))
        added.append((b"access-control-max-age", CORS_MAX_AGE))
    return status, payload, content_type, added if extra is None else extra + added


def response_headers(
    payload: bytes, content_type: bytes | None, extra: Headers | None = None
) -> Headers:
    """The headers every answer carries, as DynamoDB sends them (lower-case names).

    botocore checks x-amz-crc32 against the body (the bytes on the wire, so
    compressed when compressed) and retries on a mismatch; the request id
    is what users quote in bug reports. The ASGI path sends this list;
    `response_head` is the same headers already formatted, for Partita's
    own server (a test compares both servers' bytes).
    """
    headers = [] if content_type is None else [(b"content-type", content_type)]
    headers += [
        (b"x-amzn-requestid", request_id()),
        (b"x-amz-crc32", b"%d" % zlib.crc32(payload)),
        (b"content-length", b"%d" % len(payload)),
        _SERVER,
    ]
    if extra is not None:
        headers += extra
    return headers


_HEAD = b"x-amzn-requestid: %s\r\nx-amz-crc32: %d\r\ncontent-length: %d\r\nserver: Server\r\n"
_TYPED_HEAD = b"content-type: %s\r\n" + _HEAD


def response_head(payload: bytes, content_type: bytes | None, extra: Headers | None = None) -> bytes:
    """`response_headers` as header lines: one formatting operation instead of a list.

    Every answer takes this path, and building a list of pairs to join
    again costs more than the rest of the framing.
    """
    rid = request_id()
    if content_type is None:
        head = _HEAD % (rid, zlib.crc32(payload), len(payload))
    else:
        head = _TYPED_HEAD % (content_type, rid, zlib.crc32(payload), len(payload))
    if extra is not None:
        head += b"".join([b"%s: %s\r\n" % pair for pair in extra])
    return head


async def _send(
    send: Any, status: int, payload: bytes, content_type: bytes | None, extra: Headers | None = None
) -> None:
    headers = response_headers(payload, content_type, extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})

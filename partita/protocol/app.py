"""The HTTP face of Partita: DynamoDB's JSON 1.0 protocol as a raw ASGI app.

A raw ASGI callable (no framework) because every request takes this path and
a framework's routing and request objects would cost more than the work of a
GetItem. The order of checks follows the real service: content type, JSON,
target, authentication header, then the operation.
"""

from __future__ import annotations

import logging
import re
import zlib
from random import getrandbits as _random_bits
from typing import Any

import orjson

from ..admin import PREFIX as ADMIN_PREFIX
from ..admin import answer as admin_answer
from ..api.dispatch import handle
from ..engine.engine import Engine
from ..errors import (
    CORAL_SERVICE,
    DynamoDBError,
    InternalServerError,
    MissingAuthenticationTokenException,
    SerializationException,
    UnknownOperationException,
)

log = logging.getLogger("partita")

MAX_REQUEST_BYTES = 16 * 1024 * 1024
JSON_TYPES = (b"application/x-amz-json-1.0", b"application/json")
TARGET_PREFIXES = ("DynamoDB_20120810.", "DynamoDBStreams_20120810.")
_UNKNOWN_XML = b"<UnknownOperationException/>\n"
# What every SDK sends; a match passes the checks below without parsing (a
# fast path, ~1.5 us a request). Values are printable ASCII without space or
# comma, so the full parse would find all three parameters non-empty.
_WELL_FORMED_AUTH = re.compile(
    rb"AWS4-[!-~]* Credential=[!-+\--~]+, ?SignedHeaders=[!-+\--~]+, ?Signature=[!-+\--~]+"
)
HEALTH_TEXT = b"healthy: dynamodb.us-east-1.amazonaws.com "
JSON_REPLY = b"application/x-amz-json-1.0"

Answer = tuple[int, bytes, bytes | None]
"""(status, payload, content type or None): what Partita answers to one request."""

TOO_LARGE: Answer = (413, b"", None)
"""The answer to a body over MAX_REQUEST_BYTES (DynamoDB's status); the server then closes."""


class IncompleteSignatureException(DynamoDBError):
    code = "IncompleteSignatureException"
    prefix = CORAL_SERVICE


def request_id() -> bytes:
    """52 upper-case characters, the shape of DynamoDB's x-amzn-RequestId.

    Random, to tell requests apart in logs and bug reports, not secret: the
    module's generator (reseeded in every forked worker) costs half of
    os.urandom + base64, and this runs on every answer.
    """
    return b"%052X" % _random_bits(208)


def _headers(scope: dict[str, Any]) -> dict[bytes, bytes]:
    return {name.lower(): value for name, value in scope["headers"]}


def _check_auth(headers: dict[bytes, bytes]) -> None:
    """Reject requests that are not SigV4-signed at all, as DynamoDB does.

    Signatures are not verified yet (any credentials work, as on DynamoDB
    Local); the header's presence and form are checked so that a client
    that forgot to sign learns it here and not in production.
    """
    raw = headers.get(b"authorization", b"")
    if _WELL_FORMED_AUTH.fullmatch(raw) and (b"x-amz-date" in headers or b"date" in headers):
        return
    auth = raw.decode("latin-1")
    if not auth.strip().startswith("AWS4-"):
        raise MissingAuthenticationTokenException("Request is missing Authentication Token")
    params = {}
    for part in "".join(auth.split(" ")[1:]).split(","):
        name, _, value = part.strip().partition("=")
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


def _decode_body(body: bytes, headers: dict[bytes, bytes]) -> bytes:
    if headers.get(b"content-encoding", b"").lower() == b"gzip":
        try:
            inflater = zlib.decompressobj(wbits=31)
            body = inflater.decompress(body, MAX_REQUEST_BYTES + 1)
        except zlib.error:
            raise SerializationException() from None
        if len(body) > MAX_REQUEST_BYTES:
            raise SerializationException()
    return body


class PartitaApp:
    """The ASGI application bound to one engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

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
        await _send(send, *self.answer(scope["method"], _headers(scope), b"".join(chunks), path))

    def answer(self, method: str, headers: dict[bytes, bytes], body: bytes, path: bytes = b"/") -> Answer:
        """Answer one complete HTTP request: (status, payload, content type or None).

        The one definition of what Partita answers at the HTTP level, shared
        by the ASGI path above and by `partita.protocol.server`, so that both
        servers behave the same byte for byte (apart from headers a server
        adds itself, such as Date). `headers` has lower-case names.
        """
        if path.startswith(ADMIN_PREFIX):  # Partita's own API (partita/admin), beside DynamoDB's
            return admin_answer(self.engine, method, path, body)
        if path == b"/metrics" and method == "GET":  # Prometheus (partita/admin/metrics.py)
            from ..admin.metrics import CONTENT_TYPE, metrics

            return 200, metrics(self.engine), CONTENT_TYPE
        if method == "GET" and not body:
            return 200, HEALTH_TEXT, b"text/plain"
        content_type = headers.get(b"content-type", b"").split(b";")[0].strip()
        if method != "POST" or (body and content_type not in JSON_TYPES):
            return 404, _UNKNOWN_XML, None
        status, payload = self.respond(headers, body)
        return status, payload, JSON_REPLY if content_type != b"application/json" else content_type

    def respond(self, headers: dict[bytes, bytes], body: bytes) -> tuple[int, bytes]:
        """Run one request to completion; every failure becomes DynamoDB's error."""
        try:
            return 200, orjson.dumps(self._run(headers, body))
        except DynamoDBError as error:
            return error.status, orjson.dumps(error.body())
        except Exception:
            log.exception("internal error")
            error = InternalServerError("Internal server error")
            return error.status, orjson.dumps(error.body())

    def _run(self, headers: dict[bytes, bytes], body: bytes) -> dict[str, Any]:
        body = _decode_body(body, headers)
        request = None
        if body:
            try:
                request = orjson.loads(body)
            except orjson.JSONDecodeError:
                raise SerializationException() from None
        service, _, operation = headers.get(b"x-amz-target", b"").decode("latin-1").partition(".")
        if service + "." not in TARGET_PREFIXES or not operation:
            raise UnknownOperationException()
        _check_auth(headers)
        # The Host header goes down for DescribeEndpoints (its Address).
        return handle(self.engine, operation, request, service, headers.get(b"host"))


def response_headers(payload: bytes, content_type: bytes | None) -> list[tuple[bytes, bytes]]:
    """The headers every answer carries, as DynamoDB sends them (lower-case names).

    botocore checks x-amz-crc32 against the body and retries on a mismatch;
    the request id is what users quote in bug reports. Both HTTP servers
    use this list, so there is one definition.
    """
    headers = [] if content_type is None else [(b"content-type", content_type)]
    headers += [
        (b"x-amzn-requestid", request_id()),
        (b"x-amz-crc32", b"%d" % zlib.crc32(payload)),
        (b"content-length", b"%d" % len(payload)),
    ]
    return headers


async def _send(send: Any, status: int, payload: bytes, content_type: bytes | None) -> None:
    headers = response_headers(payload, content_type)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})

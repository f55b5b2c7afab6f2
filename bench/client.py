"""SigV4 signing, and a small HTTP client for what wrk does not send.

The client creates and preloads tables, pages through Scans and checks that
preloads landed; the measured traffic is signed by the same Signer and
replayed by wrk (see wrk.py).
"""

from __future__ import annotations

import http.client
import json
import threading

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from common import BenchError, Json

REGION = "us-east-1"
TARGET_PREFIX = "DynamoDB_20120810."
CONTENT_TYPE = "application/x-amz-json-1.0"


class Signer:
    """Real SigV4 signatures with fixed fake credentials.

    Servers that check only the header's shape (dynalite, moto) and servers
    that verify signatures against known credentials both accept these.
    """

    def __init__(self) -> None:
        self._auth = SigV4Auth(
            Credentials("AKIDPARTITABENCH", "partita-bench-secret"), "dynamodb", REGION
        )

    def headers(self, host: str, operation: str, body: bytes) -> list[tuple[str, str]]:
        request = AWSRequest(
            method="POST",
            url=f"http://{host}/",
            data=body,
            headers={
                "Host": host,
                "Content-Type": CONTENT_TYPE,
                "X-Amz-Target": TARGET_PREFIX + operation,
            },
        )
        self._auth.add_auth(request)
        out = [(name, str(value)) for name, value in request.headers.items()]
        out.append(("Content-Length", str(len(body))))
        return out

    def raw_request(self, host: str, operation: str, payload: Json) -> bytes:
        body = json.dumps(payload, separators=(",", ":")).encode()
        head = "POST / HTTP/1.1\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in self.headers(host, operation, body)
        )
        return head.encode() + b"\r\n" + body


class DynamoClient:
    """Keep-alive DynamoDB JSON client, one connection per calling thread."""

    def __init__(self, port: int, timeout: float = 30.0) -> None:
        self.host = f"127.0.0.1:{port}"
        self.port = port
        self.timeout = timeout
        self._signer = Signer()
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def call(self, operation: str, payload: Json) -> tuple[int, Json]:
        body = json.dumps(payload, separators=(",", ":")).encode()
        for attempt in range(2):
            conn = self._connection()
            try:
                conn.request(
                    "POST", "/", body, dict(self._signer.headers(self.host, operation, body))
                )
                response = conn.getresponse()
                data = response.read()
                break
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        try:
            decoded = json.loads(data) if data else {}
        except ValueError:
            decoded = {"__raw": data[:300].decode(errors="replace")}
        if not isinstance(decoded, dict):
            decoded = {"__raw": decoded}
        return response.status, decoded

    def check(self, operation: str, payload: Json) -> Json:
        status, answer = self.call(operation, payload)
        if status != 200:
            raise BenchError(f"{operation} -> HTTP {status}: {json.dumps(answer)[:300]}")
        return answer


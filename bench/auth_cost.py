"""In-process: what `--auth` adds to one GetItem (SigV4 verification and authorization).

Run: .venv/bin/python bench/auth_cost.py [--profile] (no server: `PartitaApp.answer` on
the memory store, requests pre-signed by botocore as an SDK signs them, best of
several rounds so that other load on the machine counts as little as it can).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from in_process import Loop, Transport

from partita.engine.engine import Engine
from partita.protocol.app import PartitaApp
from partita.protocol.auth import Authenticator
from partita.storage.memory import MemoryStore

KEY, SECRET, REGION = "AKIDPARTITABENCH", "partita-bench-secret", "us-east-1"
N = 5000


def auth_file() -> Path:
    path = Path(tempfile.mkdtemp(prefix="partita-auth-cost-")) / "auth.json"
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}]}
    path.write_text(json.dumps({"users": [{"name": "bench", "access_key_id": KEY, "secret_access_key": SECRET,
                                           "policies": [policy]}]}))
    return path


def requests() -> list[tuple[dict[bytes, bytes], bytes]]:
    signer = SigV4Auth(Credentials(KEY, SECRET), "dynamodb", REGION)
    out = []
    for i in range(N):
        body = json.dumps({"TableName": "bench", "Key": {"pk": {"S": f"k{i}"}}}).encode()
        request = AWSRequest(method="POST", url="http://127.0.0.1:8000/", data=body, headers={
            "Host": "127.0.0.1:8000", "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.GetItem"})
        signer.add_auth(request)
        headers = {k.lower().encode(): str(v).encode() for k, v in request.headers.items()}
        headers[b"content-length"] = str(len(body)).encode()
        out.append((headers, body))
    return out


def best(app: PartitaApp, reqs: list[tuple[dict[bytes, bytes], bytes]], rounds: int = 7) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.process_time()
        for headers, body in reqs:
            status, payload, _, _ = app.answer("POST", headers, body, b"/")
        times.append(time.process_time() - t0)
        assert status == 200, payload
    return min(times) / len(reqs) * 1e6


def main() -> None:
    engine = Engine(MemoryStore(), background=False)
    engine.tables.create({"TableName": "bench", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                          "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                          "BillingMode": "PAY_PER_REQUEST"})
    for i in range(N):
        engine.items.put("bench", {"pk": {"S": f"k{i}"}, "v": {"S": "x" * 100}})
    plain = PartitaApp(engine)
    auth = Authenticator(auth_file(), REGION)
    signed = PartitaApp(engine, auth)
    reqs = requests()
    if "--profile" in sys.argv:
        import cProfile
        import pstats

        cProfile.runctx("for _ in range(5): best(signed, reqs, 1)", globals(), {"best": best, "signed": signed,
                                                                                  "reqs": reqs}, "/tmp/auth.prof")
        pstats.Stats("/tmp/auth.prof").sort_stats("tottime").print_stats(25)
        return
    raw = raw_requests(reqs)
    for _ in range(3):
        a, b = best(plain, reqs), best(signed, reqs)
        verify = best_verify(auth, reqs)
        print(f"GetItem (PartitaApp.answer) plain {a:.1f} us, --auth {b:.1f} us (+{b - a:.1f} us, x{b / a:.2f});"
              f" verify alone {verify:.1f} us")
        a, b = through_server(plain, raw), through_server(signed, raw)
        print(f"GetItem (HttpConnection.data_received) plain {a:.1f} us, --auth {b:.1f} us (+{b - a:.1f} us,"
              f" x{b / a:.2f})")


def best_verify(auth: Authenticator, reqs: list[tuple[dict[bytes, bytes], bytes]], rounds: int = 7) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.process_time()
        for headers, body in reqs:
            auth.verify("POST", b"/", headers, body)
        times.append(time.process_time() - t0)
    return min(times) / len(reqs) * 1e6



def through_server(app: PartitaApp, raw: list[bytes], rounds: int = 7) -> float:
    """Per request through `HttpConnection.data_received` (parse, answer, format), in-process."""
    from partita.protocol.server import HttpConnection, HttpServer
    from partita.protocol.signing import SigningConnection

    server = HttpServer(app)
    loop = Loop()
    server._loop = loop  # type: ignore[assignment]  # noqa: SLF001
    connection = (HttpConnection if app.auth is None else SigningConnection)(server)  # as HttpServer.start picks
    transport = Transport()
    connection.connection_made(transport)  # type: ignore[arg-type]
    times = []
    for _ in range(rounds):
        t0 = time.process_time()
        for data in raw:
            connection.data_received(data)
            loop.run_turn()
        times.append(time.process_time() - t0)
    assert transport.answers == rounds * len(raw)
    return min(times) / len(raw) * 1e6


def raw_requests(reqs: list[tuple[dict[bytes, bytes], bytes]]) -> list[bytes]:
    return [b"POST / HTTP/1.1\r\n" + b"".join(k + b": " + v + b"\r\n" for k, v in h.items()) + b"\r\n" + body
            for h, body in reqs]


if __name__ == "__main__":
    main()

"""Talking to a running server from the command line: the credential chain, SigV4, the admin API.

The client commands (`partita clock`, `partita streams tail`) reach the server
over HTTP as any user would, so they work against one worker or many, in
memory or on disk. They sign with SigV4 for service `dynamodb` from the
standard AWS credential chain (environment, profile, ...), so they work
against `partita serve --auth` too; without credentials an admin call goes
unsigned (a server without `--auth` needs none).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def session() -> Any:
    """botocore's session: the standard credential chain and config (AWS_PROFILE, env vars, files)."""
    import botocore.session

    return botocore.session.get_session()


def region_of(args: argparse.Namespace, current: Any) -> str:
    return str(args.region or current.get_config_variable("region") or "us-east-1")


def signed_headers(
    current: Any, method: str, url: str, data: bytes | None, headers: dict[str, str], region: str
) -> dict[str, str]:
    """`headers` plus a SigV4 signature (service dynamodb) when the chain has credentials.

    The admin routes of a server with `--auth` need a signature from a
    principal allowed `partita:Admin`; botocore's own signer makes it, so
    it is exactly what an SDK would send.
    """
    credentials = current.get_credentials()
    if credentials is None:
        return headers
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method=method, url=url, data=data or b"", headers=headers)
    SigV4Auth(credentials.get_frozen_credentials(), "dynamodb", region).add_auth(request)
    return {name: str(value) for name, value in request.headers.items()}


def _error_text(raw: bytes, fallback: str) -> str:
    """The admin API's `{"error": ...}`, or DynamoDB's error body (an `--auth` refusal)."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return fallback
    if not isinstance(doc, dict):
        return fallback
    if "error" in doc:
        return str(doc["error"])
    code = str(doc.get("__type", "")).rpartition("#")[2]
    message = doc.get("message", doc.get("Message"))
    if code:
        return f"{code}: {message}" if message else code
    return fallback


def call(current: Any, url: str, region: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    import urllib.error
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    method = "GET" if body is None else "POST"
    headers = signed_headers(current, method, url, data, {"Content-Type": "application/json"}, region)
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            doc: dict[str, Any] = json.loads(response.read())
            return doc
    except urllib.error.HTTPError as error:
        sys.exit(f"partita: {_error_text(error.read(), str(error))}")
    except urllib.error.URLError as error:
        sys.exit(f"partita: cannot reach {url}: {error.reason}")

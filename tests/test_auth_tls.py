"""`--tls-cert/--tls-key`: HTTPS (TLS 1.2+) on both HTTP servers, checked by boto3 against a CA file."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import warnings
from pathlib import Path
from urllib.parse import urlparse

import pytest
from auth_helpers import ALLOW_ALL, client, user, write_auth
from botocore.exceptions import ClientError
from conftest import error_of, launch

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def _certificate(directory: Path) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for 127.0.0.1 that is its own CA."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-keyout", str(key), "-out", str(cert), "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-addext", "basicConstraints=critical,CA:TRUE"],
        check=True, capture_output=True, timeout=60,
    )
    return cert, key


@pytest.mark.parametrize("http", ["partita", "uvicorn"])
def test_https_with_auth(tmp_path: Path, http: str) -> None:
    cert, key = _certificate(tmp_path)
    auth = write_auth(tmp_path / "auth.json", user("admin", *ALLOW_ALL["Statement"]))
    srv = launch("--in-memory", "--http", http, "--tls-cert", str(cert), "--tls-key", str(key), "--auth", str(auth))
    try:
        assert srv.url.startswith("https://127.0.0.1:")
        assert client(srv.url, "admin", verify=str(cert)).list_tables()["TableNames"] == []
        with pytest.raises(ClientError) as excinfo:
            client(srv.url, "admin", secret="wrong", verify=str(cert)).list_tables()
        assert error_of(excinfo)[0] == "InvalidSignatureException"
        parsed = urlparse(srv.url)
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.load_verify_locations(str(cert))
        with warnings.catch_warnings():  # the point is that the server refuses it
            warnings.simplefilter("ignore", DeprecationWarning)
            old.minimum_version = old.maximum_version = ssl.TLSVersion.TLSv1_1
        with socket.create_connection((parsed.hostname, parsed.port), timeout=10) as raw:
            with pytest.raises((ssl.SSLError, ConnectionError)):
                with old.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    tls.do_handshake()
    finally:
        srv.stop()


def test_tls_without_auth_keeps_any_credentials(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    srv = launch("--in-memory", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        assert client(srv.url, "whoever", verify=str(cert)).list_tables()["TableNames"] == []
    finally:
        srv.stop()


def _get(url: str, cert: Path, path: str, host: str, method: str = "GET",
         headers: dict[str, str] | None = None, body: bytes = b"") -> tuple[int, dict[str, str]]:
    import http.client

    parsed = urlparse(url)
    context = ssl.create_default_context(cafile=str(cert))
    conn = http.client.HTTPSConnection(parsed.hostname, parsed.port, context=context, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True)
        for name, value in {"Host": host, **(headers or {})}.items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


@pytest.mark.parametrize("http", ["partita", "uvicorn"])
def test_partita_s_own_routes_send_hsts_over_tls_and_the_api_does_not(tmp_path: Path, http: str) -> None:
    cert, key = _certificate(tmp_path)
    srv = launch("--in-memory", "--http", http, "--tls-cert", str(cert), "--tls-key", str(key),
                 "--allowed-hosts", "partita.test")
    try:
        for path in ("/console", "/partita/v1/clock"):
            status, headers = _get(srv.url, cert, path, "partita.test:8443")
            assert (status, headers.get("strict-transport-security")) == (200, "max-age=31536000"), path
            # Not for the loopback by name (HSTS is per host: it would force HTTPS on every local
            # server) nor for an IP address (browsers ignore it there).
            for host in ("localhost:8443", "127.0.0.1:8443", "[::1]:8443"):
                status, headers = _get(srv.url, cert, path, host)
                assert status == 200 and "strict-transport-security" not in headers, (path, host)
        # The DynamoDB API answers as DynamoDB does: no HSTS (SDKs would not read it anyway).
        status, headers = _get(srv.url, cert, "/", "partita.test", "POST", {
            "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "X-Amz-Date": "20260101T000000Z",
            "Authorization": "AWS4-HMAC-SHA256 Credential=k/20260101/us-east-1/dynamodb/aws4_request, "
                             "SignedHeaders=host;x-amz-date, Signature=0000",
        }, b"{}")
        assert status == 200 and "strict-transport-security" not in headers
        assert "strict-transport-security" not in _get(srv.url, cert, "/", "partita.test")[1]
    finally:
        srv.stop()
    plain = launch("--in-memory", "--allowed-hosts", "partita.test")
    try:
        import http.client as client_module

        conn = client_module.HTTPConnection(urlparse(plain.url).hostname, urlparse(plain.url).port, timeout=10)
        conn.request("GET", "/console", headers={"Host": "partita.test"})
        response = conn.getresponse()
        assert response.status == 200 and response.getheader("strict-transport-security") is None
        conn.close()
    finally:
        plain.stop()

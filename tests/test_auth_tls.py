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

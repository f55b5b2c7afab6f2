"""`--tls-cert/--tls-key`: HTTPS on the same port, TLS 1.2 or later, for both HTTP servers.

Our own server wraps its transports with this context; uvicorn builds its
own from the same files (ssl_certfile/ssl_keyfile) and is held to the same
minimum by Python's defaults (TLS 1.2 since 3.10).
"""

from __future__ import annotations

import ssl
from pathlib import Path


class TlsError(ValueError):
    pass


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(str(cert), str(key))
    except (OSError, ssl.SSLError) as error:
        raise TlsError(f"cannot load the TLS certificate or key: {error.strerror or error}") from None
    return context

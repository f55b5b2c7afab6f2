"""Fuzzing the Authorization and date headers of a signed request: never a 500, never a bad signature accepted."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest
from auth_helpers import ALLOW_ALL, send, signed_headers, user, write_auth
from conftest import launch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

BODY = json.dumps({"Limit": 1}).encode()
TARGET = "DynamoDB_20120810.ListTables"
REFUSALS = {
    "MissingAuthenticationTokenException",
    "IncompleteSignatureException",
    "InvalidSignatureException",
    "UnrecognizedClientException",
}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = write_auth(tmp_path_factory.mktemp("auth") / "auth.json", user("admin", *ALLOW_ALL["Statement"]))
    srv = launch("--in-memory", "--auth", str(path))
    yield srv.url
    srv.stop()


@pytest.fixture(scope="module")
def conn(url: str) -> Iterator[http.client.HTTPConnection]:
    parsed = urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    yield connection
    connection.close()


_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)


@st.composite
def _mutation(draw: st.DrawFn) -> tuple[str, str | None, str]:
    """(header, new value or None to drop it, how): a change to one signed-request header."""
    header = draw(st.sampled_from(["Authorization", "X-Amz-Date", "Date"]))
    how = draw(st.sampled_from(["replace", "flip", "cut", "insert", "drop"]))
    return header, draw(_text) if how in ("replace", "insert") else None, how


def _apply(value: str, how: str, text: str | None, position: int) -> str | None:
    if how == "drop":
        return None
    if how == "replace":
        return text or ""
    position %= max(len(value), 1)
    if how == "flip":
        return value[:position] + chr(ord(value[position]) ^ 1) + value[position + 1:] if value else "x"
    if how == "cut":
        return value[:position]
    return value[:position] + (text or "") + value[position:]


def _parameters(authorization: str) -> list[str]:
    """What the server's parser reads (sigv4.header_parameters): the algorithm, then the
    parameters separated by commas, spaces or both, empty parts skipped."""
    algorithm, _, rest = authorization.strip().partition(" ")
    return [algorithm, *(part for part in re.split(r"[ \t,]+", rest) if part)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutation=_mutation(), position=st.integers(min_value=0, max_value=400))
@example(mutation=("Authorization", " ", "insert"), position=18)  # "C redential=": refused (no Credential)
@example(mutation=("Authorization", " ", "insert"), position=136)  # another space between two components: accepted
@example(mutation=("Authorization", "0", "insert"), position=136)  # ",0 Signature=": refused (no equal sign)
def test_mutated_headers(url: str, conn: http.client.HTTPConnection, mutation: tuple[str, str | None, str],
                         position: int) -> None:
    headers = signed_headers(url, "admin", BODY, TARGET)
    header, text, how = mutation
    original = headers.get(header)
    if header == "Date":
        headers["Date"] = "Thu, 01 Jan 2026 00:00:00 GMT"  # an extra, unsigned header
        original = headers["Date"]
    changed = _apply(original or "", how, text, position)
    if changed is None:
        headers.pop(header, None)
    else:
        headers[header] = changed
    try:
        status, answer = send(url, headers, BODY, conn=conn)
    except (http.client.HTTPException, OSError):
        conn.close()  # a header http.client refuses to send or the server closed: reconnect next time
        return
    assert status != 500, answer
    same = changed == original
    if status == 200:
        # Accepted only unchanged, or when what changed is not part of the signature:
        # Date beside X-Amz-Date, or the separators between the Authorization header's
        # components (commas, spaces or both, as DynamoDB reads them).
        harmless = header == "Date" or (
            header == "Authorization" and changed is not None and original is not None
            and _parameters(changed) == _parameters(original)
        )
        assert same or harmless, (header, changed)
    else:
        assert status == 400 and answer["__type"].split("#")[1] in REFUSALS, answer
        assert "admin-secret" not in json.dumps(answer)


def test_the_unmutated_request_is_accepted(url: str, conn: http.client.HTTPConnection) -> None:
    assert send(url, signed_headers(url, "admin", BODY, TARGET), BODY, conn=conn)[0] == 200

"""Partita's own commands against `partita serve --auth`: signed from the standard credential chain.

`partita clock` signs its admin calls with botocore's SigV4 signer,
`partita streams tail` and `partita load/dump` use botocore clients; all
take their keys from the environment or a profile, as the AWS CLI does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from auth_helpers import ALLOW_ALL, client, create, user, write_auth
from conftest import launch

TABLE = "cli-table"
NOT_ADMIN = (
    "partita: AccessDeniedException: User: arn:aws:iam::000000000000:user/reader is not authorized to perform: "
    "partita:Admin on resource: * because no identity-based policy allows the partita:Admin action"
)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    auth = write_auth(
        tmp_path_factory.mktemp("auth") / "auth.json",
        user("admin", *ALLOW_ALL["Statement"]),
        user("reader", {"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}),
        user("temp", *ALLOW_ALL["Statement"], token="session-token-1"),
    )
    srv = launch("--in-memory", "--auth", str(auth))
    ddb = client(srv.url, "admin")
    create(ddb, TABLE, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    yield srv.url
    srv.stop()


def env_of(tmp_path: Path, name: str | None, secret: str | None = None, **extra: str) -> dict[str, str]:
    """An environment whose credential chain holds only `name`'s keys (or nothing)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["AWS_CONFIG_FILE"] = str(tmp_path / "no-config")
    env["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "no-credentials")
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    env["AWS_DEFAULT_REGION"] = "us-east-1"
    if name is not None:
        env["AWS_ACCESS_KEY_ID"] = f"AKIA{name.upper()}"
        env["AWS_SECRET_ACCESS_KEY"] = secret or f"{name}-secret"
    env.update(extra)
    return env


def partita(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "partita", *args], capture_output=True, text=True, env=env,
                          input=stdin, timeout=120, check=False)


def test_clock_signs_its_admin_calls(url: str, tmp_path: Path) -> None:
    env = env_of(tmp_path, "admin")
    shown = partita(env, "clock", "show", "--endpoint", url)
    assert shown.returncode == 0, shown.stderr
    before = json.loads(shown.stdout)["offset_seconds"]
    moved = partita(env, "clock", "advance", "90s", "--endpoint", url)
    assert moved.returncode == 0, moved.stderr
    assert json.loads(moved.stdout)["offset_seconds"] == before + 90


def test_clock_with_a_session_token(url: str, tmp_path: Path) -> None:
    env = env_of(tmp_path, "temp", AWS_SESSION_TOKEN="session-token-1")
    shown = partita(env, "clock", "show", "--endpoint", url)
    assert shown.returncode == 0, shown.stderr
    assert "offset_seconds" in json.loads(shown.stdout)


def test_clock_reads_a_profile(url: str, tmp_path: Path) -> None:
    credentials = tmp_path / "credentials"
    credentials.write_text("[ops]\naws_access_key_id = AKIAADMIN\naws_secret_access_key = admin-secret\n")
    env = env_of(tmp_path, None, AWS_SHARED_CREDENTIALS_FILE=str(credentials), AWS_PROFILE="ops")
    shown = partita(env, "clock", "show", "--endpoint", url)
    assert shown.returncode == 0, shown.stderr


def test_clock_refusals_say_why(url: str, tmp_path: Path) -> None:
    refused = partita(env_of(tmp_path, "reader"), "clock", "advance", "1h", "--endpoint", url)
    assert (refused.returncode, refused.stderr.strip()) == (1, NOT_ADMIN)
    wrong = partita(env_of(tmp_path, "admin", "not-the-secret"), "clock", "show", "--endpoint", url)
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("partita: InvalidSignatureException: The request signature we calculated")
    unsigned = partita(env_of(tmp_path, None), "clock", "show", "--endpoint", url)
    assert (unsigned.returncode, unsigned.stderr.strip()) == (
        1, "partita: MissingAuthenticationTokenException: Request is missing Authentication Token")
    wrong_region = partita(env_of(tmp_path, "admin"), "clock", "show", "--endpoint", url, "--region", "eu-west-1")
    assert (wrong_region.returncode, wrong_region.stderr.strip()) == (
        1, "partita: InvalidSignatureException: Credential should be scoped to a valid region, not 'eu-west-1'.")


def test_streams_tail_signs_with_the_chain(url: str, tmp_path: Path) -> None:
    ddb = client(url, "admin")
    for i in range(3):
        ddb.put_item(TableName=TABLE, Item={"pk": {"S": f"t{i}"}})
    args = ("streams", "tail", TABLE, "--endpoint", url, "--from", "trim-horizon", "--exit-when-idle", "1",
            "--poll", "0.1")
    out = partita(env_of(tmp_path, "admin"), *args)
    assert out.returncode == 0, out.stderr
    keys = [json.loads(line)["dynamodb"]["Keys"]["pk"]["S"] for line in out.stdout.splitlines()]
    assert [k for k in keys if k.startswith("t")] == ["t0", "t1", "t2"]
    refused = partita(env_of(tmp_path, "nobody"), *args)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "partita: An error occurred (UnrecognizedClientException) when calling the DescribeTable operation: "
        "The security token included in the request is invalid."
    )


def test_load_and_dump_sign_with_the_chain(url: str, tmp_path: Path) -> None:
    env = env_of(tmp_path, "admin")
    items = "".join(json.dumps({"pk": f"d{i}", "n": i}) + "\n" for i in range(5))
    loaded = partita(env, "load", TABLE, "-", "--format", "json", "--endpoint", url, stdin=items)
    assert loaded.returncode == 0, loaded.stderr
    dumped = partita(env, "dump", TABLE, "--endpoint", url)
    assert dumped.returncode == 0, dumped.stderr
    got: dict[str, Any] = {}
    for line in dumped.stdout.splitlines():
        item = json.loads(line)["Item"]
        got[item["pk"]["S"]] = item
    assert {k: v["n"] for k, v in got.items() if k.startswith("d")} == {f"d{i}": {"N": str(i)} for i in range(5)}
    refused = partita(env_of(tmp_path, "admin", "not-the-secret"), "dump", TABLE, "--endpoint", url)
    assert refused.returncode == 1
    assert refused.stderr.strip().startswith(
        "partita: An error occurred (InvalidSignatureException) when calling the DescribeTable operation: "
        "The request signature we calculated does not match the signature you provided."
    )

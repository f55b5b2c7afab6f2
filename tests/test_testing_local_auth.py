"""`partita.testing.local(auth=..., tls_cert=..., tls_key=...)` in-process: the serve code path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from auth_helpers import ALLOW_ALL, user, write_auth
from botocore.config import Config
from botocore.exceptions import ClientError

from partita.protocol.auth import AuthFileError
from partita.testing import local

MISMATCH = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)
ONE_TRY = Config(retries={"max_attempts": 1})


def _keys(name: str, secret: str | None = None) -> dict[str, object]:
    return {"aws_access_key_id": f"AKIA{name.upper()}", "aws_secret_access_key": secret or f"{name}-secret",
            "config": ONE_TRY}


def _error(excinfo: pytest.ExceptionInfo[ClientError]) -> tuple[str, str]:
    error = excinfo.value.response["Error"]
    return error["Code"], error["Message"]


@pytest.mark.parametrize("subprocess", [False, True])
def test_right_and_wrong_keys_against_local_auth(tmp_path: Path, subprocess: bool) -> None:
    deny = {"Effect": "Deny", "Action": "dynamodb:DeleteTable", "Resource": "*"}
    path = write_auth(tmp_path / "auth.json", user("admin", *ALLOW_ALL["Statement"]),
                      user("careful", *ALLOW_ALL["Statement"], deny))
    with local(auth=path, subprocess=subprocess) as server:
        admin = server.client(**_keys("admin"))
        admin.create_table(TableName="tbl", BillingMode="PAY_PER_REQUEST",
                           KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                           AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        admin.put_item(TableName="tbl", Item={"pk": {"S": "a"}})
        assert admin.get_item(TableName="tbl", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
        with pytest.raises(ClientError) as excinfo:
            server.client(**_keys("admin", "not-the-secret")).list_tables()
        assert _error(excinfo) == ("InvalidSignatureException", MISMATCH)
        with pytest.raises(ClientError) as excinfo:
            server.client(config=ONE_TRY).list_tables()  # the environment's dummy keys are not in the file
        assert _error(excinfo) == ("UnrecognizedClientException",
                                   "The security token included in the request is invalid.")
        with pytest.raises(ClientError) as excinfo:
            server.client(**_keys("careful")).delete_table(TableName="tbl")
        assert _error(excinfo) == ("AccessDeniedException",
                                   "User: arn:aws:iam::000000000000:user/careful is not authorized to perform: "
                                   "dynamodb:DeleteTable on resource: arn:aws:dynamodb:us-east-1:000000000000:table/tbl "
                                   "with an explicit deny in an identity-based policy")
        # A rotated secret, re-read as SIGHUP does for partita serve.
        rotated = user("admin", *ALLOW_ALL["Statement"])
        rotated["secret_access_key"] = "admin-new-secret"
        write_auth(path, rotated)
        assert server.reload_auth()
        if subprocess:
            import time

            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    server.client(**_keys("admin", "admin-new-secret")).list_tables()
                    break
                except ClientError:
                    time.sleep(0.05)
        assert server.client(**_keys("admin", "admin-new-secret")).list_tables()["TableNames"] == ["tbl"]


def test_a_bad_auth_file_fails_the_start_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text('{"users": [{"name": "x"}]}')
    with pytest.raises(AuthFileError, match="lacks access_key_id"):
        local(auth=path).start()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_https_in_process_with_auth(tmp_path: Path) -> None:
    from test_auth_tls import _certificate

    cert, key = _certificate(tmp_path)
    path = write_auth(tmp_path / "auth.json", user("admin", *ALLOW_ALL["Statement"]))
    with local(auth=path, tls_cert=cert, tls_key=key) as server:
        assert server.endpoint.startswith("https://127.0.0.1:")
        assert server.client(verify=str(cert), **_keys("admin")).list_tables()["TableNames"] == []
        with pytest.raises(ClientError) as excinfo:
            server.client(verify=str(cert), **_keys("admin", "wrong")).list_tables()
        assert _error(excinfo)[0] == "InvalidSignatureException"
    with pytest.raises(ValueError, match="go together"):
        local(tls_cert=cert).start()


def test_a_reload_forgets_remembered_decisions(tmp_path: Path) -> None:
    """Decisions (and the bound authorizer) are remembered per principal; a reload makes new ones."""
    admin = user("admin", *ALLOW_ALL["Statement"])
    reader = {"Effect": "Allow", "Action": ["dynamodb:GetItem"], "Resource": "*"}
    path = write_auth(tmp_path / "auth.json", admin, user("app", reader))
    with local(auth=path) as server:
        server.client(**_keys("admin")).create_table(
            TableName="tbl", BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        app = server.client(**_keys("app"))
        for _ in range(2):  # the second is answered from the remembered decision
            assert "Item" not in app.get_item(TableName="tbl", Key={"pk": {"S": "a"}})
        write_auth(path, admin, user("app", {**reader, "Action": ["dynamodb:PutItem"]}))
        assert server.reload_auth()
        with pytest.raises(ClientError) as excinfo:
            app.get_item(TableName="tbl", Key={"pk": {"S": "a"}})
        assert _error(excinfo) == ("AccessDeniedException",
                                   "User: arn:aws:iam::000000000000:user/app is not authorized to perform: "
                                   "dynamodb:GetItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table/tbl "
                                   "because no identity-based policy allows the dynamodb:GetItem action")
        app.put_item(TableName="tbl", Item={"pk": {"S": "a"}})


def test_a_conditioned_statement_is_evaluated_for_every_request(tmp_path: Path) -> None:
    tenant = {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*",
              "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${aws:username}"]}}}
    path = write_auth(tmp_path / "auth.json", user("admin", *ALLOW_ALL["Statement"]), user("t1", tenant))
    with local(auth=path) as server:
        server.client(**_keys("admin")).create_table(
            TableName="tbl", BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        t1 = server.client(**_keys("t1"))
        for _ in range(2):
            assert "Item" not in t1.get_item(TableName="tbl", Key={"pk": {"S": "t1"}})
            with pytest.raises(ClientError) as excinfo:
                t1.get_item(TableName="tbl", Key={"pk": {"S": "t2"}})
            assert _error(excinfo)[0] == "AccessDeniedException"

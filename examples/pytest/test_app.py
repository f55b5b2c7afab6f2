"""Tests of app.py against a real Partita server, one fixture away."""

from __future__ import annotations

import os

import app
import boto3
import pytest
from botocore.exceptions import ClientError


def _record_worker(endpoint: str) -> None:
    """Tell the suite that runs this example which server each xdist worker used."""
    out = os.environ.get("PARTITA_EXAMPLE_REPORT")
    if out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(os.path.join(out, f"{worker}-{os.getpid()}"), "a") as report:
            report.write(endpoint + "\n")


@pytest.mark.parametrize("user", [f"user-{n}" for n in range(6)])
def test_each_test_starts_from_fresh_tables(stack: dict, dynamodb_client, user: str) -> None:
    # Every test sees exactly the declared tables, and they are empty.
    assert sorted(stack) == ["example-orders", "example-users"]
    assert dynamodb_client.list_tables()["TableNames"] == ["example-orders", "example-users"]
    assert dynamodb_client.scan(TableName="example-users")["Count"] == 0
    app.register(user, f"{user}@example.com")  # app code, no endpoint given anywhere
    with pytest.raises(ClientError) as failure:
        app.register(user, "again@example.com")
    assert failure.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    _record_worker(os.environ["AWS_ENDPOINT_URL_DYNAMODB"])


def test_template_settings_are_applied(stack: dict, dynamodb_client) -> None:
    table = dynamodb_client.describe_table(TableName="example-orders")["Table"]
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    ttl = dynamodb_client.describe_time_to_live(TableName="example-orders")["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
    backups = dynamodb_client.describe_continuous_backups(TableName="example-orders")
    pitr = backups["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
    assert pitr["PointInTimeRecoveryStatus"] == "ENABLED"


def test_query_and_index(stack: dict) -> None:
    app.place_order("ada", "o-2", 20)
    app.place_order("ada", "o-1", 10)
    app.place_order("bob", "o-3", 30)
    assert [o["order"] for o in app.orders_of("ada")] == ["o-1", "o-2"]
    assert app.new_orders() == ["o-1", "o-2", "o-3"]


def test_json_definitions(events: dict, stack: dict) -> None:
    events["example-events"].put_item(Item={"id": 1, "kind": "signup"})
    assert events["example-events"].get_item(Key={"id": 1})["Item"] == {"id": 1, "kind": "signup"}
    assert len(stack) == 2


@pytest.mark.partita
def test_marker_alone_points_boto3_at_partita() -> None:
    ddb = boto3.client("dynamodb")
    assert ddb.list_tables()["TableNames"] == []
    assert os.environ["AWS_ACCESS_KEY_ID"] == "partita"


def test_tests_without_partita_see_the_real_environment() -> None:
    assert "AWS_ENDPOINT_URL_DYNAMODB" not in os.environ


def test_the_server_clock_moves(partita, stack: dict) -> None:
    before = partita.clock()
    assert partita.advance_clock(86400) - before >= 86400

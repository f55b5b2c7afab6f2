"""Time to Live: the API's statuses and errors, and expiry on the server clock (advanced, not slept)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import Server, client_for, create_table, error_of
from streams_helpers import advance, eventually, read_stream, streams_client

S = lambda v: {"S": v}  # noqa: E731
N = lambda v: {"N": str(v)}  # noqa: E731


def ttl_spec(enabled: bool, name: str = "expires") -> dict[str, Any]:
    return {"Enabled": enabled, "AttributeName": name}


def test_update_and_describe(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory")
    ddb = client_for(server.url)
    create_table(ddb, "ttl")
    assert ddb.describe_time_to_live(TableName="ttl")["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    out = ddb.update_time_to_live(TableName="ttl", TimeToLiveSpecification=ttl_spec(True))
    assert out["TimeToLiveSpecification"] == ttl_spec(True)
    assert ddb.describe_time_to_live(TableName="ttl")["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
    assert "TimeToLive" not in str(ddb.describe_table(TableName="ttl")["Table"])  # DescribeTable is unchanged

    def refused(spec: dict[str, Any]) -> tuple[str, str]:
        with pytest.raises(ClientError) as excinfo:
            ddb.update_time_to_live(TableName="ttl", TimeToLiveSpecification=spec)
        return error_of(excinfo)

    assert refused(ttl_spec(True)) == ("ValidationException", "TimeToLive is already enabled")
    different = "TimeToLive is active on a different AttributeName: current AttributeName is expires"
    assert refused(ttl_spec(True, "other")) == ("ValidationException", different)
    assert refused(ttl_spec(False, "other")) == ("ValidationException", different)
    assert refused(ttl_spec(False)) == (
        "ValidationException", "Time to live has been modified multiple times within a fixed interval")
    advance(server.url, 3600)
    assert ddb.update_time_to_live(TableName="ttl", TimeToLiveSpecification=ttl_spec(False))[
        "TimeToLiveSpecification"] == ttl_spec(False)
    assert ddb.describe_time_to_live(TableName="ttl")["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    assert refused(ttl_spec(False)) == ("ValidationException", "TimeToLive is already disabled")
    assert refused(ttl_spec(True, "again"))[1] == "Time to live has been modified multiple times within a fixed interval"
    for call in (lambda: ddb.describe_time_to_live(TableName="nope"),
                 lambda: ddb.update_time_to_live(TableName="nope", TimeToLiveSpecification=ttl_spec(True))):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == ("ResourceNotFoundException", "Requested resource not found: Table: nope not found")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_time_to_live(TableName="ttl", TimeToLiveSpecification=ttl_spec(True, "x" * 256))
    assert error_of(excinfo)[0] == "ValidationException" and "length less than or equal to 255" in error_of(excinfo)[1]


def test_expiry_on_the_server_clock(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory")
    ddb, streams = client_for(server.url), streams_client(server.url)
    now = int(time.time())
    out = ddb.create_table(
        TableName="exp", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "gix", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "OLD_IMAGE"},
    )
    arn = out["TableDescription"]["LatestStreamArn"]
    # Written before TTL is enabled: found by the backfill of the expiry index.
    ddb.put_item(TableName="exp", Item={"pk": S("early"), "g": S("x"), "expires": N(now + 50)})
    ddb.update_time_to_live(TableName="exp", TimeToLiveSpecification=ttl_spec(True))
    items = {
        "soon": N(now + 100), "later": N(now + 10_000), "string": S(str(now)), "none": None,
        "ancient": N(now - 6 * 365 * 86400), "fraction": N(f"{now + 100}.5"),
    }
    for pk, value in items.items():
        item = {"pk": S(pk), "g": S("x")}
        if value is not None:
            item["expires"] = value
        ddb.put_item(TableName="exp", Item=item)

    def keys() -> set[str]:
        return {i["pk"]["S"] for i in ddb.scan(TableName="exp")["Items"]}

    time.sleep(0.6)
    assert keys() == {"early", *items}  # nothing is due yet
    advance(server.url, 102)
    eventually(lambda: keys() == {"later", "string", "none", "ancient"})
    index = {i["pk"]["S"] for i in ddb.query(TableName="exp", IndexName="gix", KeyConditionExpression="g = :x",
                                              ExpressionAttributeValues={":x": S("x")})["Items"]}
    assert index == {"later", "string", "none", "ancient"}  # index entries went with the items
    removes = [r for r in read_stream(streams, arn) if r["eventName"] == "REMOVE"]
    assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in removes) == ["early", "fraction", "soon"]
    for record in removes:
        # The Streams API's member names (Lambda events say type / principalId).
        assert record["userIdentity"] == {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}
        assert "expires" in record["dynamodb"]["OldImage"]
    # Updating the TTL attribute moves the expiry; removing it stops it.
    ddb.update_item(TableName="exp", Key={"pk": S("later")}, UpdateExpression="SET expires = :e",
                    ExpressionAttributeValues={":e": N(now + 200)})
    advance(server.url, 100)
    eventually(lambda: "later" not in keys())


def test_ttl_delay(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory", "--ttl-delay", "48h")
    ddb = client_for(server.url)
    create_table(ddb, "lazy")
    ddb.update_time_to_live(TableName="lazy", TimeToLiveSpecification=ttl_spec(True))
    ddb.put_item(TableName="lazy", Item={"pk": S("a"), "expires": N(int(time.time()) - 10)})
    time.sleep(0.6)
    assert "Item" in ddb.get_item(TableName="lazy", Key={"pk": S("a")})  # expired, still readable
    advance(server.url, 48 * 3600)
    eventually(lambda: "Item" not in ddb.get_item(TableName="lazy", Key={"pk": S("a")}))


def test_pynamodb_ttl_model(ddb: Any, endpoint: str, table_name: str) -> None:
    from pynamodb.attributes import TTLAttribute, UnicodeAttribute
    from pynamodb.models import Model

    class Session(Model):
        class Meta:
            table_name = ""
            host = endpoint
            region = "us-east-1"
            billing_mode = "PAY_PER_REQUEST"

        key = UnicodeAttribute(hash_key=True)
        expires = TTLAttribute()

    Session.Meta.table_name = table_name
    Session.create_table(wait=True)
    description = ddb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    assert description == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
    Session("k", expires=timedelta(hours=1)).save()
    assert Session.get("k").expires is not None

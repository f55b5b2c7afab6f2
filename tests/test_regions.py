"""Several regions in one server (`--regions`): each a namespace of tables, ARNs and streams.

A request belongs to the region of its SigV4 credential scope (verified with
`--auth`, as signed without); an unknown region is refused as DynamoDB
refuses a credential scoped to another region.
"""

from __future__ import annotations

import http.client
import json
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from auth_helpers import ALLOW_ALL, user, write_auth
from auth_helpers import client as auth_client
from conftest import STORE, Server, durable_store, error_of, launch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from region_helpers import REGIONS, client, clients, key_table, launch_regions
from streams_helpers import read_stream

from partita.testing import local

STREAM = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}


@pytest.fixture(scope="module")
def regional(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = launch_regions(tmp_path_factory.mktemp("regions"))
    yield srv
    srv.stop()


def test_each_region_has_its_own_tables_arns_items_and_streams(regional: Server, table_name: str) -> None:
    us, eu, ap = (clients(regional.url)[name] for name in REGIONS)
    made_us = key_table(us, table_name, StreamSpecification=STREAM)
    made_eu = key_table(eu, table_name, StreamSpecification=STREAM)
    assert made_us["TableArn"] == f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}"
    assert made_eu["TableArn"] == f"arn:aws:dynamodb:eu-west-1:000000000000:table/{table_name}"
    assert made_us["LatestStreamArn"].startswith(f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}/stream/")
    assert made_eu["LatestStreamArn"].startswith(f"arn:aws:dynamodb:eu-west-1:000000000000:table/{table_name}/stream/")
    assert table_name not in ap.list_tables()["TableNames"]
    with pytest.raises(ap.exceptions.ResourceNotFoundException) as excinfo:
        ap.describe_table(TableName=table_name)
    assert error_of(excinfo) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Table: {table_name} not found",
    )

    us.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "where": {"S": "us"}})
    eu.put_item(TableName=table_name, Item={"pk": {"S": "b"}, "where": {"S": "eu"}})
    assert us.scan(TableName=table_name)["Items"] == [{"pk": {"S": "a"}, "where": {"S": "us"}}]
    assert eu.scan(TableName=table_name)["Items"] == [{"pk": {"S": "b"}, "where": {"S": "eu"}}]

    for region, made, key in (("us-east-1", made_us, "a"), ("eu-west-1", made_eu, "b")):
        streams = client(regional.url, region, "dynamodbstreams")
        listed = streams.list_streams(TableName=table_name)["Streams"]
        assert [s["StreamArn"] for s in listed] == [made["LatestStreamArn"]]
        records = read_stream(streams, made["LatestStreamArn"])
        assert [(r["awsRegion"], r["eventName"], r["dynamodb"]["Keys"]) for r in records] == [
            (region, "INSERT", {"pk": {"S": key}})
        ]
    # A stream ARN of another region is not found here.
    with pytest.raises(Exception) as excinfo:
        client(regional.url, "eu-west-1", "dynamodbstreams").describe_stream(StreamArn=made_us["LatestStreamArn"])
    assert excinfo.value.response["Error"]["Code"] == "ResourceNotFoundException"  # type: ignore[attr-defined]

    # Deleting in one region leaves the other region's table.
    us.delete_table(TableName=table_name)
    assert eu.describe_table(TableName=table_name)["Table"]["TableStatus"] == "ACTIVE"
    assert eu.get_item(TableName=table_name, Key={"pk": {"S": "b"}})["Item"] == {"pk": {"S": "b"}, "where": {"S": "eu"}}


def test_a_table_arn_of_another_region_is_refused(regional: Server, table_name: str) -> None:
    us, eu = client(regional.url, "us-east-1"), client(regional.url, "eu-west-1")
    key_table(us, table_name)
    key_table(eu, table_name)
    arn = f"arn:aws:dynamodb:eu-west-1:000000000000:table/{table_name}"
    assert eu.describe_table(TableName=arn)["Table"]["TableArn"] == arn
    # The same refusal as on a server of one region (tests/test_arns.py).
    with pytest.raises(Exception) as excinfo:
        us.describe_table(TableName=arn)
    one_region = launch("--in-memory")
    try:
        key_table(client(one_region.url, "us-east-1"), table_name)
        with pytest.raises(Exception) as expected:
            client(one_region.url, "us-east-1").describe_table(TableName=arn)
    finally:
        one_region.stop()
    assert error_of(excinfo) == error_of(expected)


def test_an_unknown_region_is_refused_as_dynamodb_refuses_another_regions_credential(regional: Server) -> None:
    with pytest.raises(Exception) as excinfo:
        client(regional.url, "sa-east-1").list_tables()
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400  # type: ignore[attr-defined]
    assert error_of(excinfo) == (
        "InvalidSignatureException",
        "Credential should be scoped to a valid region, not 'sa-east-1'. ",
    )


def _raw(url: str, authorization: str) -> tuple[int, dict[str, Any]]:
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    conn.request("POST", "/", body=b"{}", headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.ListTables",
        "X-Amz-Date": "20261204T000000Z",
        "Authorization": authorization,
    })
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def test_a_credential_without_its_five_parts_is_refused_before_the_region(regional: Server) -> None:
    status, body = _raw(regional.url, "AWS4-HMAC-SHA256 Credential=AKID/20261204/dynamodb/aws4_request, "
                                      "SignedHeaders=host;x-amz-date, Signature=abc")
    assert (status, body["__type"].split("#")[-1], body["message"]) == (
        400, "IncompleteSignatureException",
        "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term,"
        " got 'AKID/20261204/dynamodb/aws4_request'",
    )
    # Any separator DynamoDB accepts between the components finds the region.
    status, body = _raw(regional.url, "AWS4-HMAC-SHA256 Credential=AKID/20261204/eu-west-1/dynamodb/aws4_request\t"
                                      "SignedHeaders=host;x-amz-date\tSignature=abc")
    assert status == 200 and "TableNames" in body


def test_one_region_servers_still_accept_any_signed_region() -> None:
    with local() as server:
        server.client(region_name="sa-east-1").create_table(
            TableName="anywhere", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
        # The table is the server's region's (us-east-1), whatever region signed.
        assert server.client(region_name="eu-west-1").describe_table(TableName="anywhere")["Table"]["TableArn"] == (
            "arn:aws:dynamodb:us-east-1:000000000000:table/anywhere")


def test_with_auth_the_verified_scope_chooses_the_region(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    path = write_auth(tmp_path / "auth.json", user("admin", *ALLOW_ALL["Statement"]))
    srv = start_server("--in-memory", "--auth", str(path), "--regions", "us-east-1,eu-west-1")
    us, eu = auth_client(srv.url, "admin"), auth_client(srv.url, "admin", region="eu-west-1")
    key_table(eu, "only-in-eu")
    assert eu.list_tables()["TableNames"] == ["only-in-eu"]
    assert us.list_tables()["TableNames"] == []
    with pytest.raises(Exception) as excinfo:
        auth_client(srv.url, "admin", region="ap-south-1").list_tables()
    assert error_of(excinfo) == (
        "InvalidSignatureException",
        "Credential should be scoped to a valid region, not 'ap-south-1'. ",
    )
    with pytest.raises(Exception) as excinfo:
        auth_client(srv.url, "admin", secret="wrong", region="eu-west-1").list_tables()
    assert error_of(excinfo)[0] == "InvalidSignatureException"
    assert error_of(excinfo)[1].startswith("The request signature we calculated does not match the signature you provided.")


def test_a_region_scoped_policy_allows_only_its_region(start_server: Callable[..., Server], tmp_path: Path) -> None:
    statement = {"Effect": "Allow", "Action": "dynamodb:*", "Resource": "arn:aws:dynamodb:eu-west-1:*:table/*"}
    listing = {"Effect": "Allow", "Action": "dynamodb:ListTables", "Resource": "*"}
    path = write_auth(tmp_path / "auth.json", user("admin", *ALLOW_ALL["Statement"]), user("eu", statement, listing))
    srv = start_server("--in-memory", "--auth", str(path), "--regions", "us-east-1,eu-west-1")
    key_table(auth_client(srv.url, "admin"), "orders")
    key_table(auth_client(srv.url, "admin", region="eu-west-1"), "orders")
    assert auth_client(srv.url, "eu", region="eu-west-1").describe_table(TableName="orders")["Table"]["TableArn"] == (
        "arn:aws:dynamodb:eu-west-1:000000000000:table/orders")
    with pytest.raises(Exception) as excinfo:
        auth_client(srv.url, "eu").describe_table(TableName="orders")
    assert error_of(excinfo) == (
        "AccessDeniedException",
        "User: arn:aws:iam::000000000000:user/eu is not authorized to perform: dynamodb:DescribeTable on "
        "resource: arn:aws:dynamodb:us-east-1:000000000000:table/orders because no identity-based policy "
        "allows the dynamodb:DescribeTable action",
    )


def test_reset_drops_the_tables_of_every_region(start_server: Callable[..., Server], tmp_path: Path) -> None:
    srv = launch_regions(tmp_path / "store")
    try:
        for region in REGIONS:
            key_table(client(srv.url, region), f"table-{region}")
        request = urllib.request.Request(srv.url + "/partita/v1/reset", data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as response:
            assert json.loads(response.read())["dropped_tables"] == 3
        assert [client(srv.url, region).list_tables()["TableNames"] for region in REGIONS] == [[], [], []]
    finally:
        srv.stop()


@pytest.mark.skipif(STORE == "memory", reason="a store that outlives its server")
def test_regions_outlive_a_restart_and_the_store_keeps_its_home_rows(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    store = durable_store(tmp_path / "store")
    srv = start_server(*store)  # one region: us-east-1, the rows the store always had
    key_table(client(srv.url, "us-east-1"), "before")
    srv.stop()
    srv = start_server(*store, "--regions", "us-east-1,eu-west-1")
    key_table(client(srv.url, "eu-west-1"), "in-eu")
    client(srv.url, "eu-west-1").put_item(TableName="in-eu", Item={"pk": {"S": "kept"}})
    assert client(srv.url, "us-east-1").list_tables()["TableNames"] == ["before"]
    srv.kill()
    srv = start_server(*store, "--regions", "eu-west-1,us-east-1")  # order does not move the home region
    assert client(srv.url, "us-east-1").list_tables()["TableNames"] == ["before"]
    assert client(srv.url, "eu-west-1").scan(TableName="in-eu")["Items"] == [{"pk": {"S": "kept"}}]
    # A table created in eu-west-1 got an id no us-east-1 table has: both keep their own rows.
    key_table(client(srv.url, "us-east-1"), "after")
    client(srv.url, "us-east-1").put_item(TableName="after", Item={"pk": {"S": "us"}})
    assert client(srv.url, "eu-west-1").scan(TableName="in-eu")["Items"] == [{"pk": {"S": "kept"}}]
    srv.stop()
    # Without --regions the server is the home region alone again.
    srv = start_server(*store)
    assert client(srv.url, "eu-west-1").list_tables()["TableNames"] == ["after", "before"]


def test_local_serves_several_regions_in_process() -> None:
    with local(regions=["us-east-1", "eu-west-1"]) as server:
        key_table(server.client(), "here")
        eu = server.client(region_name="eu-west-1")
        assert eu.list_tables()["TableNames"] == []
        key_table(eu, "there")
        assert server.client().list_tables()["TableNames"] == ["here"]
        assert server.reset() == 2  # every region's tables
        assert eu.list_tables()["TableNames"] == []
    with local(regions="us-east-1,eu-west-1", subprocess=True) as server:
        key_table(server.client(region_name="eu-west-1"), "there")
        assert server.client().list_tables()["TableNames"] == []


def test_a_bad_regions_option_stops_the_server() -> None:
    with pytest.raises(RuntimeError):
        launch("--in-memory", "--regions", "us-east-1,Mars")


_ops = st.lists(
    st.tuples(st.sampled_from(REGIONS), st.sampled_from(["put", "delete"]), st.sampled_from("abc"),
              st.integers(0, 9)),
    max_size=12,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops)
def test_writes_in_one_region_never_reach_another(regional: Server, ops: list[tuple[str, str, str, int]]) -> None:
    """The same table name in every region: each region's items are exactly its own writes (a model per region)."""
    name = "isolation"
    ddbs = clients(regional.url)
    for ddb in ddbs.values():
        if name not in ddb.list_tables()["TableNames"]:
            key_table(ddb, name)
        for item in ddb.scan(TableName=name)["Items"]:
            ddb.delete_item(TableName=name, Key={"pk": item["pk"]})
    model: dict[str, dict[str, int]] = {region: {} for region in REGIONS}
    for region, op, key, value in ops:
        if op == "put":
            ddbs[region].put_item(TableName=name, Item={"pk": {"S": key}, "v": {"N": str(value)}})
            model[region][key] = value
        else:
            ddbs[region].delete_item(TableName=name, Key={"pk": {"S": key}})
            model[region].pop(key, None)
    for region, ddb in ddbs.items():
        items = ddb.scan(TableName=name, ConsistentRead=True)["Items"]
        assert {i["pk"]["S"]: int(i["v"]["N"]) for i in items} == model[region]

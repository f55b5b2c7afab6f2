"""`--auth` policies: actions, resources, explicit deny, fine-grained condition keys, resource policies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from auth_helpers import ALLOW_ALL, client, create, user, write_auth
from botocore.exceptions import ClientError
from conftest import error_of, launch

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"
T = "pol-table"
OTHER = "pol-other"
TENANTS = "pol-tenants"


def _denied(name: str, action: str, resource: str, why: str = "implicit") -> tuple[str, str]:
    head = f"User: arn:aws:iam::000000000000:user/{name} is not authorized to perform: dynamodb:{action} on resource: {resource} "
    if why == "identity":
        return "AccessDeniedException", head + "with an explicit deny in an identity-based policy"
    if why == "resource":
        return "AccessDeniedException", head + "with an explicit deny in a resource-based policy"
    return "AccessDeniedException", head + f"because no identity-based policy allows the dynamodb:{action} action"


def _refused(call: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call()
    return error_of(excinfo)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path: Path = write_auth(
        tmp_path_factory.mktemp("auth") / "auth.json",
        user("admin", *ALLOW_ALL["Statement"]),
        user("getter", {"Effect": "Allow", "Action": "dynamodb:Get*", "Resource": ARN + T}),
        user(
            "denied",
            {"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"},
            {"Effect": "Deny", "Action": ["dynamodb:DeleteItem", "dynamodb:PartiQLDelete"], "Resource": ARN + T},
        ),
        user("notaction", {"Effect": "Allow", "NotAction": ["dynamodb:Delete*", "dynamodb:Scan"], "NotResource": ARN + OTHER}),
        user("indexer", {"Effect": "Allow", "Action": "dynamodb:Query", "Resource": ARN + T + "/index/*"}),
        user("streamer", {"Effect": "Allow", "Action": ["dynamodb:DescribeStream", "dynamodb:ListStreams"],
                          "Resource": ["*", ARN + T + "/stream/*"]}),
        *[
            user(name, {
                "Effect": "Allow",
                "Action": ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:BatchGetItem",
                           "dynamodb:BatchWriteItem", "dynamodb:UpdateItem"],
                "Resource": ARN + TENANTS,
                "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${aws:username}"]}},
            })
            for name in ("alice", "bob")
        ],
        user("attrs", {
            "Effect": "Allow",
            "Action": ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:PutItem"],
            "Resource": ARN + T,
            "Condition": {
                "ForAllValues:StringEquals": {"dynamodb:Attributes": ["pk", "name"]},
                "StringEqualsIfExists": {"dynamodb:Select": "SPECIFIC_ATTRIBUTES",
                                         "dynamodb:ReturnValues": ["NONE", "UPDATED_NEW"]},
                "StringNotEqualsIfExists": {"dynamodb:ReturnConsumedCapacity": "INDEXES"},
            },
        }),
        user("writer", {"Effect": "Allow", "Action": ["dynamodb:PutItem", "dynamodb:ConditionCheckItem",
                                                      "dynamodb:PartiQLSelect", "dynamodb:GetItem"],
                        "Resource": [ARN + T, ARN + OTHER]}),
        user("outsider"),  # no identity policy: only resource policies can let it in
    )
    srv = launch("--in-memory", "--auth", str(path))
    admin = client(srv.url, "admin")
    admin.create_table(
        TableName=T,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        BillingMode="PAY_PER_REQUEST",
    )
    create(admin, OTHER)
    create(admin, TENANTS)
    admin.put_item(TableName=T, Item={"pk": {"S": "a"}, "g": {"S": "x"}, "name": {"S": "A"}, "secret": {"S": "s"}})
    for tenant in ("alice", "bob"):
        admin.put_item(TableName=TENANTS, Item={"pk": {"S": tenant}, "v": {"N": "1"}})
    yield srv.url
    srv.stop()


def test_action_wildcards(url: str) -> None:
    getter = client(url, "getter")
    assert getter.get_item(TableName=T, Key={"pk": {"S": "a"}})["Item"]["pk"] == {"S": "a"}
    assert _refused(lambda: getter.put_item(TableName=T, Item={"pk": {"S": "b"}})) == _denied("getter", "PutItem", ARN + T)
    assert _refused(lambda: getter.get_item(TableName=OTHER, Key={"pk": {"S": "a"}})) == _denied("getter", "GetItem", ARN + OTHER)
    assert _refused(lambda: getter.list_tables()) == _denied("getter", "ListTables", "*")


def test_a_table_arn_in_place_of_the_name_is_the_same_resource(url: str) -> None:
    getter = client(url, "getter")
    assert getter.get_item(TableName=ARN + T, Key={"pk": {"S": "a"}})["Item"]["pk"] == {"S": "a"}


def test_explicit_deny_wins(url: str) -> None:
    denied = client(url, "denied")
    denied.put_item(TableName=T, Item={"pk": {"S": "d"}})
    assert _refused(lambda: denied.delete_item(TableName=T, Key={"pk": {"S": "d"}})) == _denied(
        "denied", "DeleteItem", ARN + T, "identity"
    )
    assert _refused(lambda: denied.execute_statement(Statement=f"DELETE FROM \"{T}\" WHERE pk = 'd'")) == _denied(
        "denied", "PartiQLDelete", ARN + T, "identity"
    )
    denied.delete_item(TableName=OTHER, Key={"pk": {"S": "d"}})


def test_not_action_and_not_resource(url: str) -> None:
    other = client(url, "notaction")
    other.get_item(TableName=T, Key={"pk": {"S": "a"}})
    assert _refused(lambda: other.scan(TableName=T)) == _denied("notaction", "Scan", ARN + T)
    assert _refused(lambda: other.get_item(TableName=OTHER, Key={"pk": {"S": "a"}})) == _denied(
        "notaction", "GetItem", ARN + OTHER
    )


def test_index_resources(url: str) -> None:
    indexer = client(url, "indexer")
    found = indexer.query(TableName=T, IndexName="by-g", KeyConditionExpression="g = :g",
                          ExpressionAttributeValues={":g": {"S": "x"}})
    assert found["Count"] == 1
    assert _refused(lambda: indexer.query(TableName=T, KeyConditionExpression="pk = :p",
                                          ExpressionAttributeValues={":p": {"S": "a"}})) == _denied("indexer", "Query", ARN + T)


def test_stream_resources(url: str) -> None:
    streams = client(url, "streamer", service="dynamodbstreams")
    arn = streams.list_streams(TableName=T)["Streams"][0]["StreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    assert _refused(lambda: streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")) == _denied(
        "streamer", "GetShardIterator", arn
    )


def test_leading_keys_per_tenant(url: str) -> None:
    alice, bob = client(url, "alice"), client(url, "bob")
    assert alice.get_item(TableName=TENANTS, Key={"pk": {"S": "alice"}})["Item"]["pk"] == {"S": "alice"}
    assert bob.get_item(TableName=TENANTS, Key={"pk": {"S": "bob"}})["Item"]["pk"] == {"S": "bob"}
    assert _refused(lambda: alice.get_item(TableName=TENANTS, Key={"pk": {"S": "bob"}})) == _denied("alice", "GetItem", ARN + TENANTS)
    assert _refused(lambda: alice.put_item(TableName=TENANTS, Item={"pk": {"S": "bob"}})) == _denied("alice", "PutItem", ARN + TENANTS)
    alice.put_item(TableName=TENANTS, Item={"pk": {"S": "alice"}, "v": {"N": "2"}})
    assert alice.query(TableName=TENANTS, KeyConditionExpression="#p = :p", ExpressionAttributeNames={"#p": "pk"},
                       ExpressionAttributeValues={":p": {"S": "alice"}})["Count"] == 1
    assert _refused(lambda: alice.query(TableName=TENANTS, KeyConditionExpression="pk = :p",
                                        ExpressionAttributeValues={":p": {"S": "bob"}})) == _denied("alice", "Query", ARN + TENANTS)
    # A batch is refused whole when one key is another tenant's.
    assert _refused(lambda: alice.batch_get_item(RequestItems={TENANTS: {"Keys": [{"pk": {"S": "alice"}}, {"pk": {"S": "bob"}}]}})) == _denied(
        "alice", "BatchGetItem", ARN + TENANTS
    )
    got = alice.batch_get_item(RequestItems={TENANTS: {"Keys": [{"pk": {"S": "alice"}}]}})
    assert got["Responses"][TENANTS][0]["pk"] == {"S": "alice"}
    alice.batch_write_item(RequestItems={TENANTS: [{"PutRequest": {"Item": {"pk": {"S": "alice"}, "v": {"N": "3"}}}}]})
    assert _refused(lambda: alice.batch_write_item(RequestItems={TENANTS: [{"PutRequest": {"Item": {"pk": {"S": "bob"}}}}]})) == _denied(
        "alice", "BatchWriteItem", ARN + TENANTS
    )
    # Nothing of bob's changed.
    assert client(url, "admin").get_item(TableName=TENANTS, Key={"pk": {"S": "bob"}})["Item"]["v"] == {"N": "1"}


def test_attribute_level_conditions(url: str) -> None:
    attrs = client(url, "attrs")
    got = attrs.get_item(TableName=T, Key={"pk": {"S": "a"}}, ProjectionExpression="pk, #n", ExpressionAttributeNames={"#n": "name"})
    assert got["Item"] == {"pk": {"S": "a"}, "name": {"S": "A"}}
    assert _refused(lambda: attrs.get_item(TableName=T, Key={"pk": {"S": "a"}}, ProjectionExpression="pk, secret")) == _denied(
        "attrs", "GetItem", ARN + T
    )
    # No projection is Select ALL_ATTRIBUTES, which the policy does not allow.
    assert _refused(lambda: attrs.get_item(TableName=T, Key={"pk": {"S": "a"}})) == _denied("attrs", "GetItem", ARN + T)
    attrs.update_item(TableName=T, Key={"pk": {"S": "a"}}, UpdateExpression="SET #n = :n",
                      ExpressionAttributeNames={"#n": "name"}, ExpressionAttributeValues={":n": {"S": "B"}}, ReturnValues="UPDATED_NEW")
    assert _refused(lambda: attrs.update_item(TableName=T, Key={"pk": {"S": "a"}}, UpdateExpression="SET secret = :n",
                                              ExpressionAttributeValues={":n": {"S": "x"}})) == _denied("attrs", "UpdateItem", ARN + T)
    assert _refused(lambda: attrs.update_item(TableName=T, Key={"pk": {"S": "a"}}, UpdateExpression="SET #n = :n",
                                              ExpressionAttributeNames={"#n": "name"}, ExpressionAttributeValues={":n": {"S": "C"}},
                                              ReturnValues="ALL_OLD")) == _denied("attrs", "UpdateItem", ARN + T)
    assert _refused(lambda: attrs.get_item(TableName=T, Key={"pk": {"S": "a"}}, ProjectionExpression="pk",
                                           ReturnConsumedCapacity="INDEXES")) == _denied("attrs", "GetItem", ARN + T)
    assert client(url, "admin").get_item(TableName=T, Key={"pk": {"S": "a"}})["Item"]["secret"] == {"S": "s"}


def test_transactions_are_authorized_per_action_and_table(url: str) -> None:
    writer = client(url, "writer")
    writer.transact_write_items(TransactItems=[
        {"Put": {"TableName": T, "Item": {"pk": {"S": "w"}}}},
        {"ConditionCheck": {"TableName": OTHER, "Key": {"pk": {"S": "none"}}, "ConditionExpression": "attribute_not_exists(pk)"}},
    ])
    assert _refused(lambda: writer.transact_write_items(TransactItems=[
        {"Put": {"TableName": T, "Item": {"pk": {"S": "w2"}}}},
        {"Delete": {"TableName": OTHER, "Key": {"pk": {"S": "w"}}}},
    ])) == _denied("writer", "DeleteItem", ARN + OTHER)
    assert "Item" not in client(url, "admin").get_item(TableName=T, Key={"pk": {"S": "w2"}})  # nothing was written
    writer.transact_get_items(TransactItems=[{"Get": {"TableName": T, "Key": {"pk": {"S": "w"}}}}])
    assert _refused(lambda: writer.transact_get_items(TransactItems=[{"Get": {"TableName": TENANTS, "Key": {"pk": {"S": "w"}}}}])) == _denied(
        "writer", "GetItem", ARN + TENANTS
    )


def test_partiql_statements_are_authorized_per_statement(url: str) -> None:
    client(url, "admin").put_item(TableName=T, Item={"pk": {"S": "q"}})  # its own item (xdist may split the module)
    writer = client(url, "writer")
    assert writer.execute_statement(Statement=f"SELECT * FROM \"{T}\" WHERE pk = 'q'")["Items"] == [{"pk": {"S": "q"}}]
    assert _refused(lambda: writer.execute_statement(Statement=f"INSERT INTO \"{T}\" VALUE {{'pk': 'p'}}")) == _denied(
        "writer", "PartiQLInsert", ARN + T
    )
    assert _refused(lambda: writer.batch_execute_statement(Statements=[
        {"Statement": f"SELECT * FROM \"{T}\" WHERE pk = 'w'"},
        {"Statement": f"UPDATE \"{OTHER}\" SET v = 1 WHERE pk = 'w'"},
    ])) == _denied("writer", "PartiQLUpdate", ARN + OTHER)


def test_resource_policies_are_enforced_with_identity_policies(url: str) -> None:
    admin, outsider, denied = client(url, "admin"), client(url, "outsider"), client(url, "denied")
    assert _refused(lambda: outsider.get_item(TableName=OTHER, Key={"pk": {"S": "a"}})) == _denied("outsider", "GetItem", ARN + OTHER)
    policy = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::000000000000:user/outsider"},
         "Action": "dynamodb:GetItem", "Resource": ARN + OTHER},
        {"Effect": "Deny", "Principal": "*", "Action": "dynamodb:PutItem", "Resource": ARN + OTHER,
         "Condition": {"StringEquals": {"aws:username": "denied"}}},
    ]}
    admin.put_resource_policy(ResourceArn=ARN + OTHER, Policy=json.dumps(policy))
    assert "Item" not in outsider.get_item(TableName=OTHER, Key={"pk": {"S": "a"}})
    assert _refused(lambda: outsider.put_item(TableName=OTHER, Item={"pk": {"S": "o"}})) == _denied("outsider", "PutItem", ARN + OTHER)
    assert _refused(lambda: denied.put_item(TableName=OTHER, Item={"pk": {"S": "o"}})) == _denied("denied", "PutItem", ARN + OTHER, "resource")
    admin.put_item(TableName=OTHER, Item={"pk": {"S": "o"}})  # the Deny names only `denied`
    admin.delete_resource_policy(ResourceArn=ARN + OTHER)
    denied.put_item(TableName=OTHER, Item={"pk": {"S": "o"}})

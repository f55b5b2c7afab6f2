"""UpdateTable's request rules: a change is required, key types cannot be redefined, global tables are refused."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

INVALID = "One or more parameter values were invalid: "
REDEFINED = (
    f"{INVALID}Attributes cannot be redefined. Please check that your attribute has the same type as previously "
    "defined. Existing schema: "
)
REQUIRED = [
    "ProvisionedThroughput", "BillingMode", "UpdateStreamEnabled", "GlobalSecondaryIndexUpdates", "SSESpecification",
    "ReplicaUpdates", "MultiAccountReplicaReady", "ReplicaTransitRoleArn", "MultiRegionConsistency",
    "DeletionProtectionEnabled", "OnDemandThroughput", "WarmThroughput", "TableClass",
]
NO_GLOBAL_TABLES = (
    "is not supported: Partita does not implement multi-account global tables or settings replication modes yet"
)
#: A replica in a region the server does not serve (this suite's shared server serves us-east-1 alone).
DISABLED = ("Failed to access the region: \u2018us-west-2\u2019. User is missing the permissions since the region "
            "is disabled.")
_SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _required(*sent: str) -> str:
    names = [n for n in REQUIRED if n not in sent]
    return f"At least one of {', '.join(names[:-1])} or {names[-1]} is required"


def key(name: str, kind: str) -> dict[str, str]:
    return {"AttributeName": name, "KeyType": kind}


def attr(name: str, kind: str = "S") -> dict[str, str]:
    return {"AttributeName": name, "AttributeType": kind}


def _create_gsi(name: str, *elements: tuple[str, str]) -> dict[str, Any]:
    return {"Create": {"IndexName": name, "KeySchema": [key(n, k) for n, k in elements],
                       "Projection": {"ProjectionType": "ALL"}}}


def _refused(ddb: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(**request)
    return error_of(excinfo)


# -- G2: an UpdateTable that changes nothing -------------------------------------------------


@pytest.mark.parametrize("extra, sent", [
    ({}, ()),
    ({"GlobalSecondaryIndexUpdates": []}, ()),
    ({"AttributeDefinitions": [attr("pk")]}, ()),
    ({"MultiRegionConsistency": "EVENTUAL"}, ("MultiRegionConsistency",)),
    ({"GlobalTableWitnessUpdates": [{"Create": {"RegionName": "us-east-2"}}]}, ()),
])
def test_update_that_changes_nothing_is_refused(ddb: Any, hash_table: str, extra: dict[str, Any],
                                                sent: tuple[str, ...]) -> None:
    assert _refused(ddb, TableName=hash_table, **extra) == ("ValidationException", _required(*sent))


@pytest.mark.parametrize("carrier", [
    {"DeletionProtectionEnabled": True},
    {"BillingMode": "PAY_PER_REQUEST"},
    {"OnDemandThroughput": {"MaxReadRequestUnits": 100}},
])
def test_empty_index_update_list_beside_a_change_is_refused(ddb: Any, hash_table: str,
                                                            carrier: dict[str, Any]) -> None:
    before = ddb.describe_table(TableName=hash_table)["Table"]
    assert _refused(ddb, TableName=hash_table, GlobalSecondaryIndexUpdates=[], **carrier) == (
        "ValidationException", f"{INVALID}List of GlobalSecondaryIndexUpdates is empty")
    after = ddb.describe_table(TableName=hash_table)["Table"]
    assert after["DeletionProtectionEnabled"] is False
    assert "OnDemandThroughput" not in after
    assert after == before


NO_CHANGE = st.fixed_dictionaries({}, optional={
    "AttributeDefinitions": st.just([attr("pk")]),
    "GlobalSecondaryIndexUpdates": st.just([]),
    "VectorIndexUpdates": st.just([]),
    "MultiRegionConsistency": st.sampled_from(["EVENTUAL", "STRONG"]),
    "GlobalTableWitnessUpdates": st.just([{"Delete": {"RegionName": "us-east-2"}}]),
})


@_SETTINGS
@given(extra=NO_CHANGE)
def test_members_that_change_nothing_never_count(ddb: Any, hash_table: str, extra: dict[str, Any]) -> None:
    """Definitions, empty index lists and the global-table modifiers alone are no change; the list
    of what is required leaves out MultiRegionConsistency when it was sent (as recorded)."""
    sent = {"MultiRegionConsistency"} & set(extra)
    assert _refused(ddb, TableName=hash_table, **extra) == ("ValidationException", _required(*sent))


# -- class 9: global-table members: answered as DynamoDB does, or refused by name (never dropped) --

GLOBAL_MEMBERS = {
    "ReplicaUpdates": [{"Create": {"RegionName": "us-west-2"}}],
    "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "us-east-2"}}],
    "MultiRegionConsistency": "STRONG",
    "GlobalTableSettingsReplicationMode": "ENABLED",
    "DisassociationProtectionEnabled": False,
}
#: Members that are a change by themselves (the others need a carrier to pass "At least one of").
_STANDALONE = ("ReplicaUpdates", "GlobalTableSettingsReplicationMode", "DisassociationProtectionEnabled")
#: Members Partita refuses by name (multi-account global tables, the settings replication mode).
_REFUSED = ("GlobalTableSettingsReplicationMode", "DisassociationProtectionEnabled")


def test_a_replica_in_a_region_not_served_is_refused(ddb: Any, table_name: str) -> None:
    """Issue 29 replaced Partita's "not implemented" refusal (issue 26) with DynamoDB's answer for a
    region the account cannot use: a one-region server serves no other region."""
    create_table(ddb, table_name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    before = ddb.describe_table(TableName=table_name)["Table"]
    assert _refused(ddb, TableName=table_name, ReplicaUpdates=GLOBAL_MEMBERS["ReplicaUpdates"]) == (
        "ValidationException", DISABLED)
    after = ddb.describe_table(TableName=table_name)["Table"]
    assert after == before
    assert "Replicas" not in after and "GlobalTableVersion" not in after


def _expected(members: set[str], carrier: bool) -> str:
    """What a one-region server answers to these global-table members (tests/test_global_tables.py has the rest)."""
    if not carrier and not members & set(_STANDALONE):
        return _required(*({"MultiRegionConsistency"} & members))
    refused = [m for m in _REFUSED if m in members]
    if refused:
        return f"{refused[0]} {NO_GLOBAL_TABLES}"
    strong = bool({"MultiRegionConsistency", "GlobalTableWitnessUpdates"} & members)
    if carrier:
        if strong:
            return "Requests that modify replicas or witnesses must not also modify other fields"
        return f"{INVALID}Replica modification must be the only operation in the request"
    if "GlobalTableWitnessUpdates" in members and "MultiRegionConsistency" not in members:
        return "MultiRegionConsistency must be set as STRONG when GlobalTableWitnessUpdates parameter is present."
    if "MultiRegionConsistency" in members and "GlobalTableWitnessUpdates" not in members:
        return "Unsupported replica count for global tables with MultiRegionConsistency set to STRONG."
    return DISABLED


@_SETTINGS
@given(members=st.sets(st.sampled_from(sorted(GLOBAL_MEMBERS)), min_size=1), carrier=st.booleans())
def test_global_table_members_are_answered_or_refused(
    ddb: Any, hash_table: str, members: set[str], carrier: bool
) -> None:
    request: dict[str, Any] = {"TableName": hash_table, **{m: GLOBAL_MEMBERS[m] for m in members}}
    if carrier:
        request["DeletionProtectionEnabled"] = True
    assert _refused(ddb, **request) == ("ValidationException", _expected(members, carrier))
    assert ddb.describe_table(TableName=hash_table)["Table"]["DeletionProtectionEnabled"] is False


@pytest.mark.parametrize("member, value", [
    ("GlobalTableSourceArn", "arn:aws:dynamodb:us-west-2:111122223333:table/source"),
    ("GlobalTableSettingsReplicationMode", "ENABLED"),
])
def test_create_table_refuses_global_table_members(ddb: Any, table_name: str, member: str, value: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        create_table(ddb, table_name, **{member: value})
    assert error_of(excinfo) == ("ValidationException", f"{member} {NO_GLOBAL_TABLES}")
    assert table_name not in ddb.list_tables()["TableNames"]


def test_legacy_global_table_operations_answer_as_dynamodb_does_today(ddb: Any, hash_table: str) -> None:
    """Issue 29 replaced Partita's "not implemented" answer with DynamoDB's 2026 refusal of version
    2017.11.29 (tests/test_global_tables_legacy.py has the rest)."""
    with pytest.raises(ClientError) as excinfo:
        ddb.create_global_table(GlobalTableName=hash_table, ReplicationGroup=[{"RegionName": "us-east-1"}])
    assert error_of(excinfo) == (
        "ValidationException",
        "One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not supported. "
        "We recommend using DynamoDB global tables version 2019.11.21, instead of version 2017.11.29 (Legacy).")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_global_table(GlobalTableName=hash_table,
                                ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}])
    assert error_of(excinfo)[0] == "ValidationException"


# -- G1: a new index cannot retype an attribute that is already a key --------------------------


def test_gsi_over_a_gsi_key_with_another_type(ddb: Any, table_name: str) -> None:
    """ScyllaDB Alternator's test_gsi_updatetable.py records this answer of DynamoDB."""
    ddb.create_table(TableName=table_name, KeySchema=[key("p", "HASH")], AttributeDefinitions=[attr("p"), attr("xyz")],
                     BillingMode="PAY_PER_REQUEST",
                     GlobalSecondaryIndexes=[{"IndexName": "index1", "KeySchema": [key("xyz", "HASH")],
                                              "Projection": {"ProjectionType": "ALL"}}])
    before = ddb.describe_table(TableName=table_name)["Table"]
    assert _refused(ddb, TableName=table_name, AttributeDefinitions=[attr("xyz", "N")],
                    GlobalSecondaryIndexUpdates=[_create_gsi("index2", ("xyz", "HASH"))]) == (
        "ValidationException",
        f"{REDEFINED}Schema:[SchemaElement: key{{xyz:S:HASH}}] New schema: Schema:[SchemaElement: key{{xyz:N:HASH}}]",
    )
    assert ddb.describe_table(TableName=table_name)["Table"] == before


#: Attributes of the table below: name -> (type, key type) in the one schema that uses it.
_ROLES = {"p": "HASH", "s": "RANGE", "l": "RANGE", "h": "HASH", "r": "RANGE"}
TYPES = st.sampled_from(["S", "N", "B"])


@_SETTINGS
@given(types=st.fixed_dictionaries({name: TYPES for name in _ROLES}), target=st.sampled_from(sorted(_ROLES)),
       new_type=TYPES, as_range=st.booleans())
def test_new_gsi_keys_keep_their_types(ddb: Any, table_name: str, types: dict[str, str], target: str,
                                       new_type: str, as_range: bool) -> None:
    """Table key, LSI key and GSI key alike: the same type is accepted, another is refused by name."""
    table_name = f"{table_name}-{uuid.uuid4().hex[:8]}"  # one table per example
    ddb.create_table(
        TableName=table_name, KeySchema=[key("p", "HASH"), key("s", "RANGE")],
        AttributeDefinitions=[attr(name, kind) for name, kind in types.items()], BillingMode="PAY_PER_REQUEST",
        LocalSecondaryIndexes=[{"IndexName": "lsi", "KeySchema": [key("p", "HASH"), key("l", "RANGE")],
                                "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": [key("h", "HASH"), key("r", "RANGE")],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}],
    )
    role = "RANGE" if as_range else "HASH"
    elements = [("z", "HASH"), (target, "RANGE")] if as_range else [(target, "HASH")]
    request = {"TableName": table_name, "AttributeDefinitions": [attr("z"), attr(target, new_type)],
               "GlobalSecondaryIndexUpdates": [_create_gsi("new", *elements)]}
    if new_type == types[target]:
        created = ddb.update_table(**request)["TableDescription"]["GlobalSecondaryIndexes"][-1]
        assert (created["IndexName"], created["IndexStatus"]) == ("new", "CREATING")
        return
    assert _refused(ddb, **request) == (
        "ValidationException",
        f"{REDEFINED}Schema:[SchemaElement: key{{{target}:{types[target]}:{_ROLES[target]}}}] "
        f"New schema: Schema:[SchemaElement: key{{{target}:{new_type}:{role}}}]",
    )
    described = ddb.describe_table(TableName=table_name)["Table"]
    assert [d["IndexName"] for d in described["GlobalSecondaryIndexes"]] == ["gsi"]
    assert described["AttributeDefinitions"] == [attr(name, kind) for name, kind in types.items()]


def test_definitions_a_new_index_does_not_use_are_ignored(ddb: Any, table_name: str) -> None:
    """Recorded on the service (2026): a retyped table key beside a new GSI is accepted and ignored,
    and a definition no key uses is not stored."""
    create_table(ddb, table_name)
    ddb.update_table(TableName=table_name,
                     AttributeDefinitions=[attr("pk", "N"), attr("gk"), attr("unused", "B")],
                     GlobalSecondaryIndexUpdates=[_create_gsi("by-gk", ("gk", "HASH"))])
    assert ddb.describe_table(TableName=table_name)["Table"]["AttributeDefinitions"] == [attr("pk"), attr("gk")]
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "gk": {"S": "b"}})


def _vector(name: str, attribute: str, dims: int) -> dict[str, Any]:
    return {"IndexName": name, "VectorAttribute": {"AttributeName": attribute}, "Dimensions": dims,
            "DistanceFunction": "COSINE", "Projection": {"ProjectionType": "ALL"}}


def test_vector_attributes_and_keys_cannot_trade_places(ddb: Any, table_name: str) -> None:
    """The two vector forms of the message, as dynoxide and ExtendDB captured them (August 2026)."""
    create_table(ddb, table_name, VectorIndexes=[_vector("vix", "embedding", 3)])
    assert _refused(ddb, TableName=table_name, AttributeDefinitions=[attr("embedding")],
                    GlobalSecondaryIndexUpdates=[_create_gsi("gsi2", ("embedding", "HASH"))]) == (
        "ValidationException",
        f"{REDEFINED}VectorIndexSchema:[VectorAttribute: key{{embedding:L:3}}] "
        "New schema: Schema:[SchemaElement: key{embedding:S:HASH}]",
    )
    assert _refused(ddb, TableName=table_name, VectorIndexUpdates=[{"Create": _vector("vpk", "pk", 4)}]) == (
        "ValidationException",
        f"{REDEFINED}Schema:[SchemaElement: key{{pk:S:HASH}}] New schema: VectorIndexSchema:[VectorAttribute: "
        "key{pk:L:4}]",
    )
    described = ddb.describe_table(TableName=table_name)["Table"]
    assert [d["IndexName"] for d in described["VectorIndexes"]] == ["vix"]
    assert "GlobalSecondaryIndexes" not in described

"""Point-in-time recovery: restores to instants of the window, on the server clock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from backup_helpers import contents, every_type_item, indexed_table, wait_active, wait_for
from botocore.exceptions import ClientError
from conftest import Server, client_for, create_table, error_of
from test_clock import admin


def _now(server: Server) -> float:
    return float(admin(server.url, "/partita/v1/clock")[1]["now"])


def _advance(server: Server, seconds: float) -> None:
    assert admin(server.url, "/partita/v1/clock", {"advance_seconds": seconds})[0] == 200


def _enable(ddb: Any, name: str, days: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"PointInTimeRecoveryEnabled": True}
    if days is not None:
        spec["RecoveryPeriodInDays"] = days
    out: dict[str, Any] = ddb.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification=spec)
    return out


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_restore_to_instants_between_writes(start_server: Callable[..., Server], tmp_path: Any, store: str) -> None:
    server = start_server("--in-memory") if store == "memory" else start_server("--data-dir", str(tmp_path))
    ddb = client_for(server.url)
    indexed_table(ddb, "src")
    for i in range(30):  # written before recovery is on: they are in the base snapshot
        ddb.put_item(TableName="src", Item=every_type_item(i))
    _enable(ddb, "src")
    ddb.put_item(TableName="src", Item=every_type_item(100))
    first = contents(ddb, "src")
    _advance(server, 3600)
    t1 = _now(server)
    _advance(server, 3600)
    ddb.delete_item(TableName="src", Key={"pk": {"S": "p1"}, "sk": {"N": "1"}})
    ddb.update_item(TableName="src", Key={"pk": {"S": "p2"}, "sk": {"N": "2"}},
                    UpdateExpression="SET g = :g REMOVE l", ExpressionAttributeValues={":g": {"S": "moved"}})
    for i in range(200, 240):
        ddb.put_item(TableName="src", Item=every_type_item(i))
    second = contents(ddb, "src")
    _advance(server, 3600)
    t2 = _now(server)
    _advance(server, 3600)
    ddb.put_item(TableName="src", Item=every_type_item(500))
    ddb.delete_item(TableName="src", Key={"pk": {"S": "p3"}, "sk": {"N": "3"}})
    _advance(server, 600)  # past DynamoDB's five-minute lag of the latest restorable time
    third = contents(ddb, "src")

    pitr = ddb.describe_continuous_backups(TableName="src")["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]
    assert pitr["EarliestRestorableDateTime"].timestamp() < t1 < t2 < pitr["LatestRestorableDateTime"].timestamp()

    for target, when, expected in (("at-t1", t1, first), ("at-t2", t2, second)):
        out = ddb.restore_table_to_point_in_time(SourceTableName="src", TargetTableName=target, RestoreDateTime=when)
        summary = out["TableDescription"]["RestoreSummary"]
        assert summary["RestoreInProgress"] is True and abs(summary["RestoreDateTime"].timestamp() - when) < 0.01
        wait_active(ddb, target)
        assert contents(ddb, target) == expected, target
    ddb.restore_table_to_point_in_time(SourceTableName="src", TargetTableName="latest", UseLatestRestorableTime=True)
    wait_active(ddb, "latest")
    assert contents(ddb, "latest") == third


def test_point_in_time_errors(ddb: Any, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.restore_table_to_point_in_time(SourceTableName=table_name, TargetTableName=table_name + "-x",
                                           UseLatestRestorableTime=True)
    assert error_of(excinfo) == ("SourceTableNotFoundException", f"Source table not found: {table_name}")
    create_table(ddb, table_name)
    with pytest.raises(ClientError) as excinfo:
        ddb.restore_table_to_point_in_time(SourceTableName=table_name, TargetTableName=table_name + "-x",
                                           UseLatestRestorableTime=True)
    assert error_of(excinfo)[0] == "PointInTimeRecoveryUnavailableException"
    _enable(ddb, table_name, days=1)
    with pytest.raises(ClientError) as excinfo:
        ddb.restore_table_to_point_in_time(SourceTableName=table_name, TargetTableName=table_name,
                                           UseLatestRestorableTime=True)
    assert error_of(excinfo) == ("TableAlreadyExistsException", f"Table already exists: {table_name}")
    with pytest.raises(ClientError) as excinfo:
        ddb.restore_table_to_point_in_time(SourceTableName=table_name, TargetTableName=table_name + "-x",
                                           RestoreDateTime=1)
    assert error_of(excinfo)[0] == "InvalidRestoreTimeException"
    with pytest.raises(ClientError) as excinfo:
        ddb.restore_table_to_point_in_time(SourceTableName=table_name, TargetTableName=table_name + "-x")
    assert error_of(excinfo)[0] == "ValidationException"


def test_window_is_trimmed_and_the_base_rolls_forward(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory")
    ddb = client_for(server.url)
    create_table(ddb, "src")
    _enable(ddb, "src", days=1)
    ddb.put_item(TableName="src", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    _advance(server, 2 * 86_400)
    ddb.put_item(TableName="src", Item={"pk": {"S": "a"}, "v": {"N": "2"}})
    ddb.put_item(TableName="src", Item={"pk": {"S": "b"}, "v": {"N": "3"}})
    pitr = ddb.describe_continuous_backups(TableName="src")["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]
    earliest = pitr["EarliestRestorableDateTime"].timestamp()
    assert abs(earliest - (_now(server) - 86_400)) < 5
    with pytest.raises(ClientError) as excinfo:
        ddb.restore_table_to_point_in_time(SourceTableName="src", TargetTableName="old",
                                           RestoreDateTime=earliest - 60)
    assert error_of(excinfo)[0] == "InvalidRestoreTimeException"
    # The first write fell out of the window: folded into the base, the restore at the window's start sees it.
    ddb.restore_table_to_point_in_time(SourceTableName="src", TargetTableName="start", RestoreDateTime=earliest + 1)
    wait_active(ddb, "start")
    assert ddb.scan(TableName="start")["Items"] == [{"pk": {"S": "a"}, "v": {"N": "1"}}]
    wait_for(lambda: ddb.describe_table(TableName="src")["Table"]["ItemCount"] == 2)

"""A partition that stays hot splits at its hottest key's boundary (split for heat), on the server clock."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from capacity_helpers import admin, advance, strict_client, wait_for
from conftest import STORE, Server, create_table, launch

#: 330 write units: three fit in a partition's 1000 a second, a fourth is throttled.
BIG = "h" * (330 * 1024 - 100)


@pytest.fixture(scope="module")
def heat_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    store = ["--data-dir", str(tmp_path_factory.mktemp("heat"))] if STORE == "sqlite" else ["--in-memory"]
    srv = launch(*store, "--emulate-throughput", "--split-heat-seconds", "3")
    yield srv
    srv.stop()


def _heat(url: str, ddb: Any, table: str, key: str) -> None:
    """One server second at the partition's ceiling: writes to `key` until one is throttled."""
    with pytest.raises(ClientError) as excinfo:
        for i in range(6):
            ddb.put_item(TableName=table, Item={"pk": {"S": key}, "v": {"S": BIG}, "i": {"N": str(i)}})
    assert excinfo.value.response["Error"]["Code"] == "ThrottlingException"
    advance(url, 1)


def _layout(url: str, table: str) -> dict[str, Any]:
    return admin(url, f"/partita/v1/tables/{table}/partitions")[1]


def test_a_hot_partition_splits_at_its_hot_key(heat_server: Server, table_name: str) -> None:
    url = heat_server.url
    ddb = strict_client(url)
    create_table(ddb, table_name)
    for i in range(200):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"cool{i}"}})
    for _ in range(2):  # a streak of two hot seconds: not yet
        _heat(url, ddb, table_name, "HOT")
    assert _layout(url, table_name)["partition_count"] == 8
    _heat(url, ddb, table_name, "HOT")  # the third
    layout = wait_for(lambda: (lambda doc: doc if doc["partition_count"] > 8 else None)(_layout(url, table_name)))
    assert layout, "no split for heat within 20 s"
    assert layout["partition_count"] == 9
    assert [s["rule"] for s in layout["splits"]] == ["heat"]
    at = layout["splits"][0]["hash"]
    hot = admin(url, f"/partita/v1/tables/{table_name}/hot-keys")[1]["partition_keys"]["by_consumed_units"][0]
    assert hot["key"] == {"pk": {"S": "HOT"}}
    parts = layout["partitions"]
    holder = next(p for p in parts if p["hash_start"] <= hot["partition_hash"] <= p["hash_end"])
    if at == hot["partition_hash"]:
        assert holder["hash_start"] == at  # the hot key now leads a partition
    else:  # no key below it: it now ends a partition, alone
        assert holder["hash_end"] == at - 1 and holder["item_count"] == 1
    assert sum(p["item_count"] for p in parts) == 201
    # the streak starts again after a split: two more hot seconds split nothing
    for _ in range(2):
        _heat(url, ddb, table_name, "HOT")
    assert _layout(url, table_name)["partition_count"] == 9


def test_a_hot_partition_of_one_key_does_not_split(heat_server: Server, table_name: str) -> None:
    url = heat_server.url
    ddb = strict_client(url)
    create_table(ddb, table_name)
    for _ in range(4):
        _heat(url, ddb, table_name, "ONLY")
    import time

    time.sleep(1.5)  # the splitter looks every second
    layout = _layout(url, table_name)
    assert layout["partition_count"] == 8 and layout["splits"] == []

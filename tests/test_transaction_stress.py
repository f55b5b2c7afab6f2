"""Transactions under concurrency and under `kill -9`.

* Stress: threads move amounts between accounts with TransactWriteItems
  (conditions keep balances non-negative) while other threads read every
  account with TransactGetItems, against two worker processes sharing one
  store. The total never changes, no read sees half a transfer, and the final
  balances are exactly what the acknowledged transfers imply.
* Crash: a stream of transactions, each writing several items (with a GSI)
  and bumping a counter, is cut by `kill -9`. After a restart every
  transaction is entirely present or entirely absent, every acknowledged one
  is present, the counter agrees, and the GSI holds exactly the table's items.

Both are bounded by a few seconds of load.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError
from conftest import Server, client_for, create_table
from test_indexes import attr, gsi, key

ACCOUNTS = [f"acct-{i}" for i in range(8)]
OPENING_BALANCE = 1000
LOAD_SECONDS = 3.0


def S(value: str) -> dict[str, str]:  # noqa: N802 - reads like the wire type
    return {"S": value}


def N(value: int) -> dict[str, str]:  # noqa: N802
    return {"N": str(value)}


def _transfer(source: str, target: str, amount: int, transfer_id: str) -> list[dict[str, Any]]:
    amount_value = {":a": N(amount)}
    return [
        {"Update": {"TableName": "accounts", "Key": {"pk": S(source)}, "UpdateExpression": "SET balance = balance - :a",
                    "ConditionExpression": "balance >= :a", "ExpressionAttributeValues": amount_value}},
        {"Update": {"TableName": "accounts", "Key": {"pk": S(target)}, "UpdateExpression": "SET balance = balance + :a",
                    "ConditionExpression": "attribute_exists(pk)", "ExpressionAttributeValues": amount_value}},
        {"Put": {"TableName": "transfers", "Item": {"pk": S(transfer_id), "amount": N(amount), "source": S(source),
                                                     "target": S(target)},
                 "ConditionExpression": "attribute_not_exists(pk)"}},
    ]


def _scan_all(ddb: Any, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    while True:
        page = ddb.scan(**params)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_transfers_keep_the_total_and_reads_never_see_half(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    server = start_server("--data-dir", str(tmp_path / "data"), "--workers", "2")
    setup = client_for(server.url)
    create_table(setup, "accounts")
    create_table(setup, "transfers")
    setup.batch_write_item(RequestItems={"accounts": [
        {"PutRequest": {"Item": {"pk": S(name), "balance": N(OPENING_BALANCE)}}} for name in ACCOUNTS]})
    total = OPENING_BALANCE * len(ACCOUNTS)
    deadline = time.monotonic() + LOAD_SECONDS
    lock = threading.Lock()
    committed: list[tuple[str, str, int, str]] = []
    cancelled = [0]
    reads: list[int] = []
    problems: list[str] = []

    def writer(seed: int) -> None:
        ddb = client_for(server.url)
        rng = random.Random(seed)
        while time.monotonic() < deadline:
            source, target = rng.sample(ACCOUNTS, 2)
            amount = rng.randint(1, 400)
            transfer_id = str(uuid.uuid4())
            try:
                ddb.transact_write_items(TransactItems=_transfer(source, target, amount, transfer_id))
            except ClientError as error:
                if error.response["Error"]["Code"] != "TransactionCanceledException":
                    problems.append(f"transfer failed: {error.response['Error']}")
                    return
                with lock:
                    cancelled[0] += 1
                continue
            with lock:
                committed.append((source, target, amount, transfer_id))

    def reader() -> None:
        ddb = client_for(server.url)
        gets = [{"Get": {"TableName": "accounts", "Key": {"pk": S(name)}}} for name in ACCOUNTS]
        while time.monotonic() < deadline:
            balances = [int(r["Item"]["balance"]["N"]) for r in ddb.transact_get_items(TransactItems=gets)["Responses"]]
            if sum(balances) != total or min(balances) < 0:
                problems.append(f"read saw a partial state: {balances}")
                return
            with lock:
                reads.append(sum(balances))

    threads = [threading.Thread(target=writer, args=(seed,)) for seed in range(6)]
    threads += [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert problems == []
    assert len(committed) >= 50 and len(reads) >= 20, (len(committed), len(reads))

    expected = dict.fromkeys(ACCOUNTS, OPENING_BALANCE)
    for source, target, amount, _ in committed:
        expected[source] -= amount
        expected[target] += amount
    final = {item["pk"]["S"]: int(item["balance"]["N"]) for item in _scan_all(setup, TableName="accounts")}
    assert final == expected
    ledger = {item["pk"]["S"] for item in _scan_all(setup, TableName="transfers")}
    assert ledger == {transfer_id for *_, transfer_id in committed}


def test_kill_during_transactions_leaves_each_whole_or_absent(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    data = str(tmp_path / "data")
    server = start_server("--data-dir", data)
    setup = client_for(server.url)
    setup.create_table(TableName="events", KeySchema=[key("pk", "HASH")], AttributeDefinitions=[attr("pk"), attr("tx")],
                       BillingMode="PAY_PER_REQUEST", GlobalSecondaryIndexes=[gsi("by-tx", "tx")])
    create_table(setup, "counters")
    per_transaction = 4
    attempted: set[str] = set()
    acknowledged: set[str] = set()
    lock = threading.Lock()
    stop = threading.Event()

    def writer(slot: int) -> None:
        ddb = client_for(server.url)
        n = 0
        while not stop.is_set():
            tx = f"{slot}-{n}"
            n += 1
            items: list[dict[str, Any]] = [
                {"Put": {"TableName": "events", "Item": {"pk": S(f"{tx}/{j}"), "tx": S(tx), "v": N(j)}}}
                for j in range(per_transaction)
            ]
            items.append({"Update": {"TableName": "counters", "Key": {"pk": S("committed")},
                                     "UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": N(1)}}})
            with lock:
                attempted.add(tx)
            try:
                ddb.transact_write_items(TransactItems=items)
            except Exception:
                return
            with lock:
                acknowledged.add(tx)

    threads = [threading.Thread(target=writer, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while len(acknowledged) < 150 and time.monotonic() < deadline:
        time.sleep(0.02)
    server.kill()
    stop.set()
    for thread in threads:
        thread.join(30)
    assert len(acknowledged) >= 150

    ddb = client_for(start_server("--data-dir", data).url)
    in_table: dict[str, set[str]] = defaultdict(set)
    for item in _scan_all(ddb, TableName="events", ConsistentRead=True):
        in_table[item["tx"]["S"]].add(item["pk"]["S"])
    in_index: dict[str, set[str]] = defaultdict(set)
    for item in _scan_all(ddb, TableName="events", IndexName="by-tx"):
        in_index[item["tx"]["S"]].add(item["pk"]["S"])
    assert in_index == in_table
    assert all(len(pks) == per_transaction for pks in in_table.values())
    present = set(in_table)
    assert acknowledged <= present <= attempted
    counter = ddb.get_item(TableName="counters", Key={"pk": S("committed")}, ConsistentRead=True)["Item"]["n"]
    assert int(counter["N"]) == len(present)

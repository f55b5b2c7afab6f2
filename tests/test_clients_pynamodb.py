"""Cross-client check: PynamoDB (its own request building on botocore) runs a short scenario."""

from __future__ import annotations

from typing import Any

import pytest
from pynamodb.attributes import NumberAttribute, UnicodeAttribute, UnicodeSetAttribute
from pynamodb.connection import Connection
from pynamodb.exceptions import PutError, TransactWriteError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite


def _models(endpoint: str, table: str) -> tuple[type[Any], Any]:
    class ByStatus(GlobalSecondaryIndex["Order"]):
        class Meta:
            index_name = "by-status"
            projection = AllProjection()

        status = UnicodeAttribute(hash_key=True)
        total = NumberAttribute(range_key=True)

    class Order(Model):
        class Meta:
            table_name = table
            host = endpoint
            region = "us-east-1"
            aws_access_key_id = "partita"
            aws_secret_access_key = "partita"
            billing_mode = "PAY_PER_REQUEST"
            max_retry_attempts = 0

        customer = UnicodeAttribute(hash_key=True)
        order_id = UnicodeAttribute(range_key=True)
        status = UnicodeAttribute()
        total = NumberAttribute()
        tags = UnicodeSetAttribute(null=True)
        by_status = ByStatus()

    return Order, Order.by_status


def test_pynamodb_scenario(endpoint: str, table_name: str) -> None:
    Order, by_status = _models(endpoint, table_name)
    Order.create_table(wait=True)
    try:
        Order("ada", "o1", status="NEW", total=10, tags={"gift"}).save(Order.customer.does_not_exist())
        with pytest.raises(PutError) as failure:
            Order("ada", "o1", status="NEW", total=99).save(Order.customer.does_not_exist())
        assert failure.value.cause_response_code == "ConditionalCheckFailedException"
        assert failure.value.cause_response_message == "The conditional request failed"

        with Order.batch_write() as batch:
            for n in range(2, 40):
                batch.save(Order("ada" if n % 2 else "bob", f"o{n:02}", status="NEW" if n % 4 else "PAID",
                                 total=n))
        assert Order.count() == 39
        ada = [o.order_id for o in Order.query("ada", Order.order_id.startswith("o0"), scan_index_forward=False)]
        assert ada == ["o09", "o07", "o05", "o03"]
        paid = [o.total for o in by_status.query("PAID", Order.total > 20)]
        assert paid == [24, 28, 32, 36]
        filtered = list(Order.query("bob", filter_condition=Order.total >= 30, limit=100))
        assert [o.order_id for o in filtered] == ["o30", "o32", "o34", "o36", "o38"]

        order = Order.get("ada", "o1")
        assert order.tags == {"gift"} and order.total == 10
        order.update(actions=[Order.total.add(5), Order.tags.add({"rush"})], condition=Order.status == "NEW")
        assert (order.total, order.tags) == (15, {"gift", "rush"})

        items = list(Order.batch_get([("ada", "o1"), ("bob", "o02"), ("nobody", "x")]))
        assert sorted(o.order_id for o in items) == ["o02", "o1"]

        with pytest.raises(TransactWriteError) as cancelled:
            connection = Connection(host=endpoint, region="us-east-1", max_retry_attempts=0)
            with TransactWrite(connection=connection) as transaction:
                transaction.save(Order("carl", "o1", status="NEW", total=1))
                transaction.condition_check(Order, "ada", "o1", condition=Order.status == "PAID")
        assert cancelled.value.cause_response_code == "TransactionCanceledException"
        # PynamoDB sends condition checks before puts: the reasons follow the request's order.
        assert [r.code if r else None for r in cancelled.value.cancellation_reasons] == [
            "ConditionalCheckFailed", None]
        assert Order.count("carl") == 0
    finally:
        Order.delete_table()

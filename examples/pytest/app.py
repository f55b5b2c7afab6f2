"""A tiny application that builds its own boto3 clients, as most do."""

from __future__ import annotations

from typing import Any

import boto3
from boto3.dynamodb.conditions import Key


def register(user_id: str, email: str) -> None:
    """Create a user; fails if the id is taken (a conditional put)."""
    users = boto3.resource("dynamodb").Table("example-users")
    users.put_item(Item={"id": user_id, "email": email}, ConditionExpression="attribute_not_exists(id)")


def place_order(user_id: str, order_id: str, total: int) -> None:
    orders = boto3.resource("dynamodb").Table("example-orders")
    orders.put_item(Item={"user": user_id, "order": order_id, "total": total, "status": "NEW"})


def orders_of(user_id: str) -> list[dict[str, Any]]:
    orders = boto3.resource("dynamodb").Table("example-orders")
    items: list[dict[str, Any]] = orders.query(KeyConditionExpression=Key("user").eq(user_id))["Items"]
    return items


def new_orders() -> list[str]:
    orders = boto3.resource("dynamodb").Table("example-orders")
    found = orders.query(IndexName="by-status", KeyConditionExpression=Key("status").eq("NEW"))["Items"]
    return sorted(str(item["order"]) for item in found)

"""CreateTable's semantic rules: key schema, attribute definitions, billing.

Shape rules (lengths, enums, required members) come from the service model
in shapes.py; these are the cross-member rules the model cannot express, in
the order and words of DynamoDB.
"""

from __future__ import annotations

from typing import Any

from ...errors import ValidationException

INVALID = "One or more parameter values were invalid: "
MAX_CAPACITY = 1_000_000_000_000


def _check_key_schema(key_schema: list[dict[str, Any]], defined: list[str]) -> None:
    keys = [k["AttributeName"] for k in key_schema]
    if len(keys) == 2 and (any(k not in defined for k in keys) or (keys[0] == keys[1] and len(defined) == 1)):
        raise ValidationException("Invalid KeySchema: Some index key attribute have no definition")
    if len(keys) == 1 and keys[0] not in defined:
        raise ValidationException(
            f"{INVALID}Some index key attributes are not defined in AttributeDefinitions. "
            f"Keys: [{', '.join(keys)}], AttributeDefinitions: [{', '.join(defined)}]"
        )
    if len(keys) == 2 and keys[0] == keys[1]:
        raise ValidationException("Both the Hash Key and the Range Key element in the KeySchema have the same name")
    if key_schema[0]["KeyType"] != "HASH":
        raise ValidationException("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
    if len(key_schema) == 2 and key_schema[1]["KeyType"] != "RANGE":
        raise ValidationException("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type")


def _check_billing(request: dict[str, Any]) -> None:
    billing = request.get("BillingMode", "PROVISIONED")
    throughput = request.get("ProvisionedThroughput")
    if billing == "PAY_PER_REQUEST":
        if throughput is not None:
            raise ValidationException(
                f"{INVALID}Neither ReadCapacityUnits nor WriteCapacityUnits can be specified "
                "when BillingMode is PAY_PER_REQUEST"
            )
        return
    if throughput is None:
        raise ValidationException(
            f"{INVALID}ReadCapacityUnits and WriteCapacityUnits must both be specified "
            "when BillingMode is PROVISIONED"
        )
    for member in ("ReadCapacityUnits", "WriteCapacityUnits"):
        if throughput[member] > MAX_CAPACITY:
            raise ValidationException(f"Given value {throughput[member]} for {member} is out of bounds")


def validate_create_table(request: dict[str, Any]) -> None:
    if request.get("LocalSecondaryIndexes") or request.get("GlobalSecondaryIndexes"):
        # Secondary indexes arrive with their own issue; refuse them clearly until then.
        raise ValidationException(f"{INVALID}Secondary indexes are not supported yet by Partita")
    _check_billing(request)
    defined = [d["AttributeName"] for d in request["AttributeDefinitions"]]
    _check_key_schema(request["KeySchema"], defined)
    if len(request["KeySchema"]) != len(defined):
        raise ValidationException(
            f"{INVALID}Number of attributes in KeySchema does not exactly match number of "
            "attributes defined in AttributeDefinitions"
        )
    if len(set(defined)) != len(defined):
        raise ValidationException(f"{INVALID}Duplicate AttributeName in AttributeDefinitions")
    stream = request.get("StreamSpecification")
    if stream and stream.get("StreamEnabled") and not stream.get("StreamViewType"):
        raise ValidationException(f"{INVALID}StreamViewType is required when StreamEnabled is true")

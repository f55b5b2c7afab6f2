"""The exceptions a throttled request gets, with DynamoDB's words and ThrottlingReasons.

Which exception and message: DynamoDB's API reference lists them under the
cancellation reasons of TransactWriteItems/TransactGetItems. A provisioned
table or GSI answers ProvisionedThroughputExceededException ("The level of
configured provisioned throughput for the table was exceeded ..." or "...
for one or more global secondary indexes of the table ..."); an on-demand
one answers ThrottlingException ("Throughput exceeds the current capacity of
your table or index ..." or "... for one or more global secondary indexes
..."). The ThrottlingException shape in botocore's model is synthetic, with
lower-case `message` and `throttlingReasons` members and coral's
availability prefix; ProvisionedThroughputExceededException carries
`ThrottlingReasons`. The message for an exceeded OnDemandThroughput maximum
could not be confirmed against the service (see `MAX_ON_DEMAND`).
"""

from __future__ import annotations

from ...errors import DYNAMODB, DynamoDBError, ProvisionedThroughputExceededException

CORAL_AVAILABILITY = "com.amazon.coral.availability"

PROVISIONED_TABLE = (
    "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API."
)
PROVISIONED_INDEX = (
    "The level of configured provisioned throughput for one or more global secondary indexes of the table "
    "was exceeded. Consider increasing your provisioning level for the under-provisioned global secondary "
    "indexes with the UpdateTable API."
)
ON_DEMAND_TABLE = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your "
    "table or index so please try again shortly. If exceptions persist, check if you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)
ON_DEMAND_INDEX = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is "
    "automatically scaling your index so please try again shortly."
)
#: Unconfirmed wording (not found in DynamoDB's documentation or in recorded answers).
MAX_ON_DEMAND = "Throughput exceeds the maximum OnDemandThroughput configured on table or index"

#: RequestLimitExceeded's message, from DynamoDB's error-handling guide; the service's exact
#: answer to an on-demand table over its per-table quota could not be confirmed.
REQUEST_LIMIT = (
    "Throughput exceeds the current throughput limit for your account. "
    "Please contact AWS Support at https://aws.amazon.com/support request a limit increase"
)

KEY_RANGE = "KeyRangeThroughputExceeded"
ACCOUNT_LIMIT = "AccountLimitExceeded"
PROVISIONED = "ProvisionedThroughputExceeded"
MAX_ON_DEMAND_LIMIT = "MaxOnDemandThroughputExceeded"


class ThrottlingException(DynamoDBError):
    code = "ThrottlingException"
    prefix = CORAL_AVAILABILITY


class RequestLimitExceeded(ThrottlingException):
    """An on-demand table or GSI over the per-table quota DescribeLimits reports.

    A ThrottlingException subclass only so that a transaction names it
    ThrottlingError, as for the other on-demand limits.
    """

    code = "RequestLimitExceeded"
    prefix = DYNAMODB


def throttled(kind: str, dimension: str, limit: str, resource: str, on_demand: bool) -> DynamoDBError:
    """The exception for one exceeded limit: `kind` Table|Index, `dimension` Read|Write."""
    reasons = [{"reason": f"{kind}{dimension}{limit}", "resource": resource}]
    index = kind == "Index"
    if limit == ACCOUNT_LIMIT:
        return RequestLimitExceeded(REQUEST_LIMIT, ThrottlingReasons=reasons)
    if limit == MAX_ON_DEMAND_LIMIT:
        return ThrottlingException(MAX_ON_DEMAND, throttlingReasons=reasons)
    if on_demand:
        return ThrottlingException(ON_DEMAND_INDEX if index else ON_DEMAND_TABLE, throttlingReasons=reasons)
    return ProvisionedThroughputExceededException(
        PROVISIONED_INDEX if index else PROVISIONED_TABLE, ThrottlingReasons=reasons
    )

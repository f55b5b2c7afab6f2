"""What DynamoDB authorizes for each operation: (action, resource ARN, condition keys).

The IAM evaluator (`partita.protocol.auth.policies`) is generic; this module
knows DynamoDB. Each request becomes the list of checks DynamoDB makes:

- one per table (or index, for Query/Scan with IndexName) for single-table
  operations, with the operation's own action;
- BatchGetItem/BatchWriteItem: their own action on each table named;
- TransactGetItems/TransactWriteItems: the item action of each element
  (dynamodb:GetItem, PutItem, UpdateItem, DeleteItem, ConditionCheckItem);
- PartiQL: dynamodb:PartiQLSelect/Insert/Update/Delete per statement;
- ListTables, DescribeLimits, DescribeEndpoints, ListStreams: resource `*`;
- streams: the stream's ARN.

Condition keys of fine-grained access control: dynamodb:LeadingKeys (the
partition key values a request touches), dynamodb:Attributes (the top-level
attribute names it reads or writes), dynamodb:Select, dynamodb:ReturnValues,
dynamodb:ReturnConsumedCapacity. A Select the request leaves out is
SPECIFIC_ATTRIBUTES when it projects and ALL_ATTRIBUTES otherwise (so that
`StringEqualsIfExists dynamodb:Select SPECIFIC_ATTRIBUTES` refuses an
unprojected read, as DynamoDB's documented attribute-level policy expects).
The request has passed shape validation; semantic errors are left to the
operation, so every lookup here tolerates what the operation would refuse.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from ..engine.engine import Engine
from ..engine.expressions import parse_condition, parse_projection, parse_update
from ..engine.expressions.ast import And, Compare, Path, Value
from ..engine.tables.schema import Table
from ..errors import DynamoDBError

Context = dict[str, list[str]]


@dataclass(frozen=True, slots=True)
class Check:
    action: str  # "dynamodb:GetItem"
    resource: str  # an ARN, or "*"
    context: Context
    resource_policy: str | None  # the policy attached to the resource (its table's for an index)


_TABLE_OPS = frozenset(
    {
        "CreateTable", "DescribeTable", "DeleteTable", "UpdateTable", "PutItem", "GetItem",
        "DeleteItem", "UpdateItem", "Query", "Scan", "DescribeContinuousBackups",
        "UpdateContinuousBackups", "UpdateTimeToLive", "DescribeTimeToLive",
    }
)  # fmt: skip
_ARN_OPS = frozenset(
    {"TagResource", "UntagResource", "ListTagsOfResource", "PutResourcePolicy", "GetResourcePolicy",
     "DeleteResourcePolicy"}
)  # fmt: skip
_ANY_RESOURCE = frozenset({"ListTables", "DescribeLimits", "DescribeEndpoints", "ListStreams"})
_TRANSACT_ACTIONS = {
    "Get": "GetItem",
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}
_READS = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})


_INDEXED = frozenset({"Query", "Scan"})


class _All:
    """Every condition key (a table's resource policy may read any)."""

    def __contains__(self, key: object) -> bool:
        return True


_ALL = _All()


def plain_check_key(engine: Engine, operation: str, request: dict[str, Any]) -> tuple[str, str, Any] | None:
    """What a single-table request's one check depends on when no condition key is needed.

    (operation, table, index) when the table has no resource policy: then the
    check is the operation's action on the table's (or index's) ARN and
    nothing of the request beyond these, so a caller whose policies have no
    request-dependent conditions may remember the decision under this key.
    None when the check needs `Requirements` (other operations, a policy).
    """
    if operation not in _TABLE_OPS:
        return None
    name = request["TableName"]
    table = engine.catalog.get(name)
    if table is not None and table.description.get("_Policies"):
        return None
    return operation, name, request.get("IndexName") if operation in _INDEXED else None


class Requirements:
    """The checks of one request, for one principal's account."""

    def __init__(
        self, engine: Engine, account: str, contexts: bool = True, keys: frozenset[str] | None = None
    ) -> None:
        """`contexts` False: the caller's policies have no conditions on the request, so the
        request's condition keys are computed only for tables whose resource policy may need
        them. `keys`: the (lower-case) condition keys the caller's policies read, so that
        the others are not computed (None: all); a table's resource policy may read any."""
        self._engine = engine
        self._contexts = contexts
        self._keys: frozenset[str] | _All = _ALL if keys is None else keys
        self._prefix = f"arn:aws:dynamodb:{engine.region}:{account}:table/"
        self._tables: dict[str, Table | None] = {}

    def _table(self, name: str) -> Table | None:
        if name not in self._tables:
            self._tables[name] = self._engine.catalog.get(name)
        return self._tables[name]

    def _policy(self, name: str, suffix: str = "") -> str | None:
        """The resource policy attached to the table (suffix "") or its stream ("/stream/...").

        Policies are stored under the ARN they were attached by, in the
        server's own account; an index is covered by its table's policy.
        """
        table = self._table(name)
        if table is None:
            return None
        policies = table.description.get("_Policies")
        if not policies:
            return None
        entry = policies.get(table.description["TableArn"] + suffix)
        return None if entry is None else str(entry["Policy"])

    def _local(self, arn: str) -> str:
        """An ARN of this server's account rewritten into the principal's."""
        head = f"arn:aws:dynamodb:{self._engine.region}:"
        if arn.startswith(head):
            rest = arn[len(head):]
            _, _, resource = rest.partition(":")
            return self._prefix[: -len("table/")] + resource
        return arn

    def table_check(self, action: str, name: str, context: Context, index: str | None = None) -> Check:
        arn = self._prefix + name + (f"/index/{index}" if index else "")
        return Check("dynamodb:" + action, arn, context, self._policy(name))

    def arn_check(self, action: str, arn: str, context: Context | None = None) -> Check:
        local = self._local(arn)
        policy = None
        if local.startswith(self._prefix):
            name, _, rest = local[len(self._prefix):].partition("/")
            policy = self._policy(name, "/" + rest if rest.startswith("stream/") else "")
        return Check("dynamodb:" + action, local, context or {}, policy)

    def of(self, operation: str, request: dict[str, Any], streams: bool) -> list[Check]:
        if streams:
            return self._streams(operation, request)
        if operation in _TABLE_OPS:
            name = request["TableName"]
            context = self._context(operation, name, request)
            index = request.get("IndexName") if operation in _INDEXED else None
            return [self.table_check(operation, name, context, index)]
        if operation in _ARN_OPS:
            return [self.arn_check(operation, request["ResourceArn"])]
        if operation in _ANY_RESOURCE:
            return [Check("dynamodb:" + operation, "*", {}, None)]
        if operation in ("BatchGetItem", "BatchWriteItem"):
            return [
                self.table_check(operation, name, self._batch_context(operation, name, body, request))
                for name, body in request["RequestItems"].items()
            ]
        if operation in ("TransactGetItems", "TransactWriteItems"):
            return self._transact(request)
        if operation == "ExecuteStatement":
            return self._statement(request["Statement"], request)
        if operation in ("BatchExecuteStatement", "ExecuteTransaction"):
            member = "Statements" if operation == "BatchExecuteStatement" else "TransactStatements"
            checks: list[Check] = []
            for statement in request[member]:
                checks += self._statement(statement["Statement"], request)
            return checks
        # An operation Partita does not implement answers its own error first.
        return [Check("dynamodb:" + operation, "*", {}, None)]

    # -- condition keys ---------------------------------------------------------------

    def _common(self, operation: str, request: dict[str, Any], wanted: frozenset[str] | _All = _ALL) -> Context:
        context: Context = {}
        for member, key in (
            ("ReturnValues", "dynamodb:returnvalues"),
            ("ReturnConsumedCapacity", "dynamodb:returnconsumedcapacity"),
        ):
            value = request.get(member)
            if isinstance(value, str) and key in wanted:
                context[key] = [value]
        if operation in _READS and "dynamodb:select" in wanted:
            select = request.get("Select")
            if not isinstance(select, str):
                projects = request.get("ProjectionExpression") or request.get("AttributesToGet")
                select = "SPECIFIC_ATTRIBUTES" if projects else "ALL_ATTRIBUTES"
            context["dynamodb:select"] = [select]
        return context

    def _wanted(self, name: str) -> frozenset[str] | _All | None:
        """The condition keys to compute for a check on table `name`; None: none at all."""
        table = self._table(name)
        if table is not None and table.description.get("_Policies"):
            return _ALL
        return self._keys if self._contexts else None

    def _needed(self, name: str) -> bool:
        return self._wanted(name) is not None

    def _context(self, operation: str, name: str, request: dict[str, Any]) -> Context:
        wanted = self._wanted(name)
        if wanted is None:
            return {}
        context = self._common(operation, request, wanted)
        table = self._table(name)
        names = request.get("ExpressionAttributeNames") or {}
        attributes: list[str] = []
        leading: list[str] = []
        hash_name = table.hash_key.name if table is not None and "dynamodb:leadingkeys" in wanted else None
        want_attributes = "dynamodb:attributes" in wanted
        if operation in ("GetItem", "DeleteItem", "UpdateItem"):
            key = request.get("Key") or {}
            if hash_name:
                _leading(leading, hash_name, key)
            if not want_attributes:
                pass
            elif operation == "GetItem":
                attributes = _projected(request, names)
            else:
                attributes = list(key)
                if operation == "UpdateItem":
                    attributes += _updated(request, names)
        elif operation == "PutItem":
            item = request.get("Item") or {}
            if want_attributes:
                attributes = list(item)
            if hash_name:
                _leading(leading, hash_name, item)
        elif operation in ("Query", "Scan"):
            if want_attributes:
                attributes = _projected(request, names)
            if operation == "Query" and hash_name and table is not None:
                _leading_of_query(leading, table, request, names)
        if leading:
            context["dynamodb:leadingkeys"] = leading
        if attributes:
            context["dynamodb:attributes"] = _unique(attributes)
        return context

    def _batch_context(self, operation: str, name: str, body: Any, request: dict[str, Any]) -> Context:
        if not self._needed(name):
            return {}
        context = self._common(operation, request)
        table = self._table(name)
        hash_name = table.hash_key.name if table is not None else None
        leading: list[str] = []
        attributes: list[str] = []
        if operation == "BatchGetItem":
            for key in body.get("Keys") or ():
                if hash_name:
                    _leading(leading, hash_name, key)
            attributes = _projected(body, body.get("ExpressionAttributeNames") or {})
            if "dynamodb:select" in context and (body.get("ProjectionExpression") or body.get("AttributesToGet")):
                context["dynamodb:select"] = ["SPECIFIC_ATTRIBUTES"]
        else:
            for write in body:
                put, delete = write.get("PutRequest"), write.get("DeleteRequest")
                values = (put or {}).get("Item") or (delete or {}).get("Key") or {}
                attributes += list(values)
                if hash_name:
                    _leading(leading, hash_name, values)
        if leading:
            context["dynamodb:leadingkeys"] = _unique(leading)
        if attributes:
            context["dynamodb:attributes"] = _unique(attributes)
        return context

    def _transact(self, request: dict[str, Any]) -> list[Check]:
        checks = []
        for element in request["TransactItems"]:
            for kind, body in element.items():
                action = _TRANSACT_ACTIONS.get(kind)
                if action is None or not isinstance(body, dict):
                    continue
                merged = dict(body)
                for member in ("ReturnConsumedCapacity",):
                    if member in request:
                        merged[member] = request[member]
                name = body["TableName"]
                operation = action if action != "ConditionCheckItem" else "DeleteItem"
                context = self._context(operation, name, merged)
                if action == "ConditionCheckItem":
                    context.pop("dynamodb:attributes", None)
                if action == "GetItem" and context:
                    context["dynamodb:select"] = [
                        "SPECIFIC_ATTRIBUTES" if body.get("ProjectionExpression") else "ALL_ATTRIBUTES"
                    ]
                checks.append(self.table_check(action, name, context))
        return checks

    def _statement(self, text: str, request: dict[str, Any]) -> list[Check]:
        from ..partiql import ast, parse

        try:
            statement = parse(text).statement
        except DynamoDBError:
            return []  # the operation answers the parse error; nothing was touched
        if isinstance(statement, ast.Exists):
            statement = statement.select
        action = {
            ast.Select: "PartiQLSelect",
            ast.Insert: "PartiQLInsert",
            ast.Update: "PartiQLUpdate",
            ast.Delete: "PartiQLDelete",
        }[type(statement)]
        target = statement.target
        context = self._common("", request) if self._needed(target.table) else {}
        return [self.table_check(action, target.table, context, target.index)]

    def _streams(self, operation: str, request: dict[str, Any]) -> list[Check]:
        if operation == "ListStreams":
            return [Check("dynamodb:ListStreams", "*", {}, None)]
        if operation == "GetRecords":
            arn = str(request.get("ShardIterator", "")).rpartition("|1|")[0] or "*"
        else:
            arn = request.get("StreamArn", "*")
        return [self.arn_check(operation, arn)]


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _key_string(value: Any) -> str | None:
    """A key value as IAM sees it: the string of an S or N, the base64 of a B."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (kind, raw), = value.items()
    if kind in ("S", "N") and isinstance(raw, str):
        return raw
    if kind == "B":
        return raw if isinstance(raw, str) else base64.b64encode(raw).decode()
    return None


def _leading(out: list[str], hash_name: str, values: Any) -> None:
    if isinstance(values, dict):
        text = _key_string(values.get(hash_name))
        if text is not None:
            out.append(text)


def _top_name(path: Path, names: dict[str, str]) -> str | None:
    first = path.elements[0] if path.elements else None
    if not isinstance(first, str):
        return None
    return names.get(first) if first.startswith("#") else first


def _projected(request: dict[str, Any], names: dict[str, str]) -> list[str]:
    text = request.get("ProjectionExpression")
    if isinstance(text, str) and text:
        try:
            projection = parse_projection(text)
        except DynamoDBError:
            return []
        return [n for n in (_top_name(p, names) for p in projection.paths) if n is not None]
    return [n for n in request.get("AttributesToGet") or () if isinstance(n, str)]


def _updated(request: dict[str, Any], names: dict[str, str]) -> list[str]:
    text = request.get("UpdateExpression")
    if isinstance(text, str) and text:
        try:
            update = parse_update(text)
        except DynamoDBError:
            return []
        return [n for n in (_top_name(a.path, names) for a in update.actions) if n is not None]
    return list(request.get("AttributeUpdates") or ())


def _leading_of_query(out: list[str], table: Table, request: dict[str, Any], names: dict[str, str]) -> None:
    """The partition key value a Query names (its key condition's equality)."""
    hash_name = table.hash_key.name
    index_name = request.get("IndexName")
    if isinstance(index_name, str):
        index = table.index(index_name)
        if index is None:
            return
        hash_name = index.hash_key.name
    legacy = request.get("KeyConditions")
    if isinstance(legacy, dict):
        condition = legacy.get(hash_name)
        if isinstance(condition, dict):
            for value in condition.get("AttributeValueList") or ():
                text = _key_string(value)
                if text is not None:
                    out.append(text)
        return
    text = request.get("KeyConditionExpression")
    if not isinstance(text, str):
        return
    try:
        parsed = parse_condition(text, "KeyConditionExpression")
    except DynamoDBError:
        return
    values = request.get("ExpressionAttributeValues") or {}
    stack: list[Any] = [parsed.root]
    while stack:
        node = stack.pop()
        if isinstance(node, And):
            stack += [node.left, node.right]
        elif isinstance(node, Compare) and node.op == "=":
            for path, value in ((node.left, node.right), (node.right, node.left)):
                if isinstance(path, Path) and isinstance(value, Value) and _top_name(path, names) == hash_name:
                    key = _key_string(values.get(value.name))
                    if key is not None:
                        out.append(key)

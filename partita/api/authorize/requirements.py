"""The checks one request makes of `--auth`'s policies: (action, resource ARN, condition keys).

The IAM evaluator (`partita.protocol.auth.policies`) is generic; this module
knows DynamoDB through `rules.RULES`, one entry per operation: each request
becomes one check per resource its rule names (a table, an index, a backup,
an export, an import, a stream, a global table), and per element for the
batches, transactions and PartiQL statements:

- BatchGetItem/BatchWriteItem: their own action on each table named;
- TransactGetItems/TransactWriteItems: the item action of each element
  (dynamodb:GetItem, PutItem, UpdateItem, DeleteItem, ConditionCheckItem);
- PartiQL: dynamodb:PartiQLSelect/Insert/Update/Delete per statement, with the
  keys of what the statement compiles to (statements.py).

The request has passed shape validation; semantic errors are left to the
operation, so every lookup here tolerates what the operation would refuse
(a member the operation requires and the request lacks makes no check: the
operation refuses the request before touching anything).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...engine.engine import Engine
from ...engine.tables.schema import Table
from . import rules, statements
from .context import ALL, Context, Wanted, batch_context, context_of
from .rules import RULES, Rule

__all__ = ["Check", "Requirements", "plain_check_key"]


@dataclass(frozen=True, slots=True)
class Check:
    action: str  # "dynamodb:GetItem"
    resource: str  # an ARN, or "*"
    context: Context
    resource_policy: str | None  # the policy attached to the resource (its table's for an index)


_PLAIN = frozenset({rules.TABLE, rules.TABLE_OR_INDEX})


def plain_check_key(engine: Engine, operation: str, request: dict[str, Any]) -> tuple[str, str, Any, str] | None:
    """What a single-table request's one check depends on when no condition key is needed.

    (operation, table, index, region) when the rule is one check on the table (or its
    index) and the table has no resource policy: then the check is the
    operation's action on that ARN and nothing of the request beyond these,
    so a caller whose policies have no request-dependent conditions may
    remember the decision under this key. None when the check needs
    `Requirements` (other operations, a policy).
    """
    rule = RULES.get(operation)
    if rule is None or len(rule.resources) != 1 or rule.resources[0] not in _PLAIN:
        return None
    name = request.get("TableName")
    if not isinstance(name, str):
        return None
    table = engine.catalog.get(name)
    if table is not None and table.description.get("_Policies"):
        return None
    index = request.get("IndexName") if rule.resources[0] == rules.TABLE_OR_INDEX else None
    return operation, name, index, engine.region  # with --regions, one engine (and ARN) per region


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
        self._account = account
        self._contexts = contexts
        self._keys: Wanted = ALL if keys is None else keys
        self._arn_head = f"arn:aws:dynamodb:{engine.region}:"
        self._prefix = f"{self._arn_head}{account}:table/"
        self._tables: dict[str, Table | None] = {}

    # -- resources ------------------------------------------------------------------------

    def _table(self, name: str) -> Table | None:
        if name not in self._tables:
            self._tables[name] = self._engine.catalog.get(name)
        return self._tables[name]

    def _policy(self, name: str, suffix: str = "") -> str | None:
        """The resource policy attached to the table (suffix "") or its stream ("/stream/...").

        Policies are stored under the ARN they were attached by, in the
        server's own account; an index is covered by its table's policy.
        Backups, exports and imports carry no policy of their own.
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
        """An ARN of this server's region rewritten into the principal's account."""
        if arn.startswith(self._arn_head):
            _, _, resource = arn[len(self._arn_head):].partition(":")
            return self._prefix[: -len("table/")] + resource
        return arn

    def table_check(self, action: str, name: str, context: Context, index: str | None = None) -> Check:
        if name.startswith("arn:"):  # a member the ARN resolution leaves alone (SourceTableArn ...)
            return self.arn_check(action, name, context)
        arn = self._prefix + name + (f"/index/{index}" if index else "")
        return Check("dynamodb:" + action, arn, context, self._policy(name))

    def arn_check(self, action: str, arn: str, context: Context | None = None) -> Check:
        local = self._local(arn)
        policy = None
        if local.startswith(self._prefix):
            name, _, rest = local[len(self._prefix):].partition("/")
            if not rest or rest.startswith("index/"):
                policy = self._policy(name)
            elif rest.startswith("stream/"):
                policy = self._policy(name, "/" + rest)
        return Check("dynamodb:" + action, local, context or {}, policy)

    # -- the checks -----------------------------------------------------------------------

    def of(self, operation: str, request: dict[str, Any], streams: bool = False) -> list[Check]:
        rule = RULES.get(operation)
        if rule is None:  # not an operation of the model: the dispatcher answers it first
            return [Check("dynamodb:" + operation, "*", {}, None)]
        kind = rule.resources[0]
        if kind == rules.BATCH:
            return [
                self.table_check(operation, name, self._batch_context(rule, operation, name, body, request))
                for name, body in request["RequestItems"].items()
            ]
        if kind == rules.TRANSACT:
            return self._transact(request)
        if kind == rules.PARTIQL:
            return self._partiql(operation, request)
        action = rule.action or operation
        checks: list[Check] = []
        for kind in rule.resources:
            checks += self._resource(kind, action, rule, operation, request)
        return checks

    def _resource(self, kind: str, action: str, rule: Rule, operation: str, request: dict[str, Any]) -> list[Check]:
        """The checks of one resource kind of a rule (none when the request lacks the member)."""
        if kind == rules.ANY:
            return [Check("dynamodb:" + action, "*", {}, None)]
        if kind in (rules.TABLE, rules.TABLE_OR_INDEX, rules.INDEX):
            name = request.get("TableName")
            if not isinstance(name, str):
                return []
            index = request.get("IndexName") if kind != rules.TABLE else None
            context = self._context(rule, operation, name, request) if rule.keys else {}
            return [self.table_check(action, name, context, index if isinstance(index, str) else None)]
        if kind == rules.SOURCE_TABLE:
            source = request.get("SourceTableArn") or request.get("SourceTableName")
            return [self.table_check(action, source, {})] if isinstance(source, str) else []
        if kind == rules.TARGET_TABLE:
            target = request.get("TargetTableName")
            return [self.table_check(action, target, {})] if isinstance(target, str) else []
        if kind == rules.CREATED_TABLE:
            created = (request.get("TableCreationParameters") or {}).get("TableName")
            return [self.table_check(action, created, {})] if isinstance(created, str) else []
        if kind == rules.TABLE_ARN_OR_ANY:
            arn = request.get("TableArn")
            return [self.arn_check(action, arn) if isinstance(arn, str) else Check("dynamodb:" + action, "*", {}, None)]
        if kind == rules.ITERATOR:
            iterator = request.get("ShardIterator")
            arn = iterator.rpartition("|1|")[0] if isinstance(iterator, str) else ""
            return [self.arn_check(action, arn or "*")]
        if kind == rules.GLOBAL_TABLE:
            name = request.get("GlobalTableName")
            if not isinstance(name, str):
                return []
            return [Check("dynamodb:" + action, f"arn:aws:dynamodb::{self._account}:global-table/{name}", {}, None)]
        if kind == rules.REPLICA_TABLES:
            return self._replica_tables(action, request)
        # BackupArn, ExportArn, ImportArn, BulkOperationArn, ResourceArn, StreamArn, TableArn.
        arn = request.get(kind)
        return [self.arn_check(action, arn)] if isinstance(arn, str) else []

    def _replica_tables(self, action: str, request: dict[str, Any]) -> list[Check]:
        """The table GlobalTableName in each region a global-table request names (this one when none)."""
        name = request.get("GlobalTableName")
        if not isinstance(name, str):
            return []
        regions: list[str] = []
        for member, inner in (("ReplicationGroup", None), ("ReplicaUpdates", "Create"), ("ReplicaUpdates", "Delete"),
                              ("ReplicaSettingsUpdate", None)):
            for entry in request.get(member) or ():
                body = entry.get(inner) if inner and isinstance(entry, dict) else entry
                region = body.get("RegionName") if isinstance(body, dict) else None
                if isinstance(region, str) and region not in regions:
                    regions.append(region)
        if not regions:
            regions = [self._engine.region]
        return [Check("dynamodb:" + action, f"arn:aws:dynamodb:{region}:{self._account}:table/{name}", {},
                      self._policy(name) if region == self._engine.region else None) for region in regions]

    # -- condition keys -------------------------------------------------------------------

    def _wanted(self, name: str, keys: frozenset[str]) -> Wanted | None:
        """The condition keys to compute for a check on table `name`; None: none at all."""
        table = self._table(name)
        if table is not None and table.description.get("_Policies"):
            return keys
        if not self._contexts:
            return None
        wanted = keys & self._keys if isinstance(self._keys, frozenset) else keys
        return wanted or None

    def _context(self, rule: Rule, operation: str, name: str, request: dict[str, Any]) -> Context:
        wanted = self._wanted(name, rule.keys)
        if wanted is None:
            return {}
        return context_of(operation, self._table(name), request, wanted)

    def _batch_context(self, rule: Rule, operation: str, name: str, body: Any, request: dict[str, Any]) -> Context:
        wanted = self._wanted(name, rule.keys)
        if wanted is None:
            return {}
        return batch_context(operation, self._table(name), body, request, wanted)

    def _transact(self, request: dict[str, Any]) -> list[Check]:
        checks = []
        for element in request["TransactItems"]:
            for kind, body in element.items():
                entry = rules.TRANSACT_ACTIONS.get(kind)
                if entry is None or not isinstance(body, dict):
                    continue
                action, operation = entry
                merged = dict(body)
                if "ReturnConsumedCapacity" in request:
                    merged["ReturnConsumedCapacity"] = request["ReturnConsumedCapacity"]
                name = body["TableName"]
                keys = rules.CONDITION_CHECK_KEYS if kind == "ConditionCheck" else RULES[action].keys
                wanted = self._wanted(name, keys)
                context = {} if wanted is None else context_of(operation, self._table(name), merged, wanted)
                if kind == "ConditionCheck":
                    context.pop(rules.ATTRIBUTES, None)
                checks.append(self.table_check(action, name, context))
        return checks

    def _partiql(self, operation: str, request: dict[str, Any]) -> list[Check]:
        if operation == statements.STATEMENT:
            entries = [request]
        else:
            entries = request["Statements" if operation == statements.BATCH else "TransactStatements"]
        checks: list[Check] = []
        for entry in entries:
            target = statements.target(entry["Statement"])
            if target is None:
                continue  # the operation answers the parse error; nothing was touched
            wanted = self._wanted(target.table, rules.PARTIQL_KEYS[target.action])
            context = {} if wanted is None else statements.keys_of(self._engine, operation, entry, target.action, wanted)
            checks.append(self.table_check(target.action, target.table, context, target.index))
        return checks

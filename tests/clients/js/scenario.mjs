// A short scenario with the AWS SDK for JavaScript v3 against a DynamoDB endpoint.
// Usage: node scenario.mjs ENDPOINT TABLE. Prints one JSON line per step; the
// pytest side (tests/test_clients_js.py) asserts them.
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  BatchWriteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand,
  TransactWriteCommand, UpdateCommand, paginateScan,
} from "@aws-sdk/lib-dynamodb";

const [endpoint, table] = process.argv.slice(2);
const client = new DynamoDBClient({
  endpoint, region: "us-east-1", maxAttempts: 1,
  credentials: { accessKeyId: "partita", secretAccessKey: "partita" },
});
const doc = DynamoDBDocumentClient.from(client);
const out = (step, value) => console.log(JSON.stringify({ step, value }));
const failure = async (promise) => {
  try { await promise; return null; } catch (e) { return { name: e.name, message: e.message, status: e.$metadata?.httpStatusCode }; }
};

await client.send(new CreateTableCommand({
  TableName: table, BillingMode: "PAY_PER_REQUEST",
  AttributeDefinitions: [
    { AttributeName: "user", AttributeType: "S" }, { AttributeName: "ts", AttributeType: "N" },
    { AttributeName: "kind", AttributeType: "S" },
  ],
  KeySchema: [{ AttributeName: "user", KeyType: "HASH" }, { AttributeName: "ts", KeyType: "RANGE" }],
  GlobalSecondaryIndexes: [{ IndexName: "by-kind", KeySchema: [{ AttributeName: "kind", KeyType: "HASH" }],
    Projection: { ProjectionType: "ALL" } }],
}));
out("status", (await client.send(new DescribeTableCommand({ TableName: table }))).Table.TableStatus);

await doc.send(new PutCommand({ TableName: table, Item: { user: "ada", ts: 1, kind: "login", tags: new Set(["a", "b"]), n: 1.5 } }));
out("conditional", await failure(doc.send(new PutCommand({
  TableName: table, Item: { user: "ada", ts: 1, kind: "x" }, ConditionExpression: "attribute_not_exists(#u)",
  ExpressionAttributeNames: { "#u": "user" },
}))));
const got = (await doc.send(new GetCommand({ TableName: table, Key: { user: "ada", ts: 1 } }))).Item;
out("get", { ...got, tags: [...got.tags].sort() });

const batch = [];
for (let i = 2; i <= 30; i++) batch.push({ PutRequest: { Item: { user: i % 2 ? "ada" : "bob", ts: i, kind: i % 3 ? "click" : "login" } } });
for (let i = 0; i < batch.length; i += 25) {
  const res = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: batch.slice(i, i + 25) } }));
  out("unprocessed", Object.keys(res.UnprocessedItems ?? {}).length);
}

const query = await doc.send(new QueryCommand({
  TableName: table, KeyConditionExpression: "#u = :u AND ts BETWEEN :a AND :b",
  ExpressionAttributeNames: { "#u": "user" }, ExpressionAttributeValues: { ":u": "ada", ":a": 1, ":b": 9 },
  ScanIndexForward: false, ReturnConsumedCapacity: "TOTAL",
}));
out("query", { ts: query.Items.map((i) => i.ts), capacity: query.ConsumedCapacity.CapacityUnits });
const logins = await doc.send(new QueryCommand({ TableName: table, IndexName: "by-kind",
  KeyConditionExpression: "kind = :k", ExpressionAttributeValues: { ":k": "login" }, Select: "COUNT" }));
out("index", logins.Count);

const updated = await doc.send(new UpdateCommand({
  TableName: table, Key: { user: "ada", ts: 1 }, UpdateExpression: "ADD n :one SET seen = list_append(if_not_exists(seen, :e), :v)",
  ExpressionAttributeValues: { ":one": 1, ":e": [], ":v": ["web"] }, ReturnValues: "UPDATED_NEW",
}));
out("update", updated.Attributes);

out("transaction", await failure(doc.send(new TransactWriteCommand({ TransactItems: [
  { Put: { TableName: table, Item: { user: "carl", ts: 1, kind: "login" } } },
  { ConditionCheck: { TableName: table, Key: { user: "bob", ts: 2 }, ConditionExpression: "attribute_not_exists(ts)" } },
] }))));

let pages = 0, items = 0;
for await (const page of paginateScan({ client: doc, pageSize: 7 }, { TableName: table })) { pages++; items += page.Items.length; }
out("scan", { pages, items });

out("validation", await failure(doc.send(new GetCommand({ TableName: table, Key: { user: "ada" } }))));
await client.send(new DeleteTableCommand({ TableName: table }));
out("missing", await failure(client.send(new DescribeTableCommand({ TableName: table }))));

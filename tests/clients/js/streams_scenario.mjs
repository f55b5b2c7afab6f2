// DynamoDB Streams with the AWS SDK for JavaScript v3 against a DynamoDB endpoint.
// Usage: node streams_scenario.mjs ENDPOINT TABLE. Writes an item's insert, modify and
// remove, reads them back through the streams client, pages a wider stream's shards and
// provokes two validation errors, and prints one JSON line per step; the pytest side
// (tests/test_clients_js.py) asserts them.
import {
  CreateTableCommand, DeleteItemCommand, DeleteTableCommand, DynamoDBClient, PutItemCommand, UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, ListStreamsCommand,
} from "@aws-sdk/client-dynamodb-streams";

const [endpoint, table] = process.argv.slice(2);
const config = {
  endpoint, region: "us-east-1", maxAttempts: 1,
  credentials: { accessKeyId: "partita", secretAccessKey: "partita" },
};
const client = new DynamoDBClient(config);
const streams = new DynamoDBStreamsClient(config);
const out = (step, value) => console.log(JSON.stringify({ step, value }));
const failure = async (promise) => {
  try { await promise; return null; } catch (e) { return { name: e.name, message: e.message, status: e.$metadata?.httpStatusCode }; }
};

// One partition (provisioned, 5/5), so the stream has one shard, as in tests/test_streams.py.
const created = await client.send(new CreateTableCommand({
  TableName: table, BillingMode: "PROVISIONED", ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 },
  AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
  KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
  StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" },
}));
const arn = created.TableDescription.LatestStreamArn;
await client.send(new PutItemCommand({ TableName: table, Item: { pk: { S: "a" }, v: { N: "1" } } }));
await client.send(new UpdateItemCommand({
  TableName: table, Key: { pk: { S: "a" } }, UpdateExpression: "SET v = :v", ExpressionAttributeValues: { ":v": { N: "2" } },
}));
await client.send(new DeleteItemCommand({ TableName: table, Key: { pk: { S: "a" } } }));

const listed = (await streams.send(new ListStreamsCommand({ TableName: table }))).Streams;
out("list", listed.map((s) => ({ arn: s.StreamArn === arn, table: s.TableName, labelInArn: s.StreamArn.endsWith(`/stream/${s.StreamLabel}`) })));
const description = (await streams.send(new DescribeStreamCommand({ StreamArn: arn }))).StreamDescription;
out("describe", {
  status: description.StreamStatus, view: description.StreamViewType, table: description.TableName,
  keys: description.KeySchema, shards: description.Shards.length,
});

const records = [];
for (const shard of description.Shards) {
  let iterator = (await streams.send(new GetShardIteratorCommand({
    StreamArn: arn, ShardId: shard.ShardId, ShardIteratorType: "TRIM_HORIZON",
  }))).ShardIterator;
  for (let i = 0; i < 1000 && iterator; i++) {
    const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
    records.push(...page.Records);
    iterator = page.NextShardIterator;
    if (page.Records.length === 0) break;
  }
}
out("events", records.map((r) => r.eventName));
out("records", records.map((r) => ({
  keys: r.dynamodb.Keys, newImage: r.dynamodb.NewImage ?? null, oldImage: r.dynamodb.OldImage ?? null,
  view: r.dynamodb.StreamViewType, source: r.eventSource, version: r.eventVersion, region: r.awsRegion,
})));
const sequence = records.map((r) => BigInt(r.dynamodb.SequenceNumber));
out("increasing", sequence.every((n, i) => i === 0 || n > sequence[i - 1]));

out("forged", await failure(streams.send(new GetRecordsCommand({ ShardIterator: "nonsense" }))));

// An on-demand table has eight partitions, so eight shards: paged three at a time, in ShardId order.
const wide = `${table}-wide`;
const wideArn = (await client.send(new CreateTableCommand({
  TableName: wide, BillingMode: "PAY_PER_REQUEST",
  AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
  KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
  StreamSpecification: { StreamEnabled: true, StreamViewType: "KEYS_ONLY" },
}))).TableDescription.LatestStreamArn;
const pages = [];
let start;
do {
  const page = (await streams.send(new DescribeStreamCommand({
    StreamArn: wideArn, Limit: 3, ExclusiveStartShardId: start,
  }))).StreamDescription;
  pages.push(page);
  start = page.LastEvaluatedShardId;
} while (start);
const ids = pages.flatMap((p) => p.Shards.map((s) => s.ShardId));
const byteOrder = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
out("shardOrder", {
  sizes: pages.map((p) => p.Shards.length),
  lastEvaluatedIsLastOfPage: pages.every((p) => p.LastEvaluatedShardId === undefined
    || p.LastEvaluatedShardId === p.Shards[p.Shards.length - 1].ShardId),
  ascending: ids.every((id, i) => id === byteOrder[i]),
  distinct: new Set(ids).size === ids.length,
});
const afterLast = (await streams.send(new DescribeStreamCommand({
  StreamArn: wideArn, ExclusiveStartShardId: ids[ids.length - 1],
}))).StreamDescription;
out("afterLast", { shards: afterLast.Shards.length, lastEvaluated: afterLast.LastEvaluatedShardId ?? null });

// The JavaScript SDK sends what it is given: DynamoDB's answers to a StreamArn that is no ARN and
// to LATEST with a SequenceNumber.
out("invalidArn", await failure(streams.send(new DescribeStreamCommand({ StreamArn: "fake-stream" }))));
const first = description.Shards[0];
out("latestWithSequence", await failure(streams.send(new GetShardIteratorCommand({
  StreamArn: arn, ShardId: first.ShardId, ShardIteratorType: "LATEST",
  SequenceNumber: first.SequenceNumberRange.StartingSequenceNumber,
}))));
await client.send(new DeleteTableCommand({ TableName: wide }));
await client.send(new DeleteTableCommand({ TableName: table }));

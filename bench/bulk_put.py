"""Throughput of a bulk put: N items from S3 objects under --s3-dir into a table, timed by the operation.

Starts `partita serve --data-dir TMP --s3-dir TMP/s3`, writes the input as
ten gzip DynamoDB JSON objects, creates the table (with one GSI, as a
typical target has), starts StartBulkPutItems and polls DescribeBulkOperation
until it ends; prints items per second from the operation's own StartTime and
EndTime, and the server's peak RSS:

    .venv/bin/python bench/bulk_put.py --items 100000
    .venv/bin/python bench/bulk_put.py --items 100000 --in-memory
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3
from botocore.config import Config


def peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--in-memory", action="store_true", help="the in-memory store instead of SQLite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "s3"
        folder = root / "input" / "load"
        folder.mkdir(parents=True)
        per = -(-args.items // 10)
        for part in range(10):
            lines = [json.dumps({"Item": {"pk": {"S": f"user#{i:08d}"}, "sk": {"N": str(i % 97)},
                                          "g": {"S": f"group#{i % 50}"}, "payload": {"S": "x" * 200}}})
                     for i in range(part * per, min(args.items, (part + 1) * per))]
            (folder / f"part-{part:02d}.json.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
        store = ["--in-memory"] if args.in_memory else ["--data-dir", str(Path(tmp) / "data")]
        process = subprocess.Popen([sys.executable, "-m", "partita", "serve", "--port", "0", *store,
                                    "--s3-dir", str(root)], stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        url = process.stdout.readline().strip().split()[-1]
        try:
            ddb = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                               aws_access_key_id="x", aws_secret_access_key="y", config=Config(retries={"max_attempts": 1}))
            ddb.create_table(
                TableName="load", BillingMode="PAY_PER_REQUEST",
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                      {"AttributeName": "sk", "AttributeType": "N"},
                                      {"AttributeName": "g", "AttributeType": "S"}],
                GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                         "Projection": {"ProjectionType": "KEYS_ONLY"}}])
            arn = ddb.start_bulk_put_items(
                TableName="load", InputS3Configuration={"S3Bucket": "input", "S3KeyPrefix": "load/",
                                                        "InputFormat": "DYNAMODB_JSON", "InputCompressionType": "GZIP"},
                OutputS3Configuration={"S3Bucket": "output", "OutputType": ["ERROR"]},
            )["BulkOperationDescription"]["BulkOperationArn"]
            while True:
                doc = ddb.describe_bulk_operation(BulkOperationArn=arn)["BulkOperationDescription"]
                if doc["BulkOperationStatus"] not in ("IN_PROGRESS", "CANCELLING"):
                    break
                time.sleep(0.5)
            seconds = (doc["EndTime"] - doc["StartTime"]).total_seconds()
            print(f"{doc['BulkOperationStatus']}: {doc['ProcessedItemCount']} items "
                  f"({doc['FailedItemCount']} failed) in {seconds:.1f} s = {doc['ProcessedItemCount'] / seconds:,.0f} items/s; "
                  f"{doc['TotalInputBytes']:,} input bytes; server peak RSS {peak_kb(process.pid) / 1024:.0f} MB")
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()

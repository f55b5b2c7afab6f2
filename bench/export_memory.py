"""Peak memory of a 100,000-item ExportTableToPointInTime: the server's RSS must stay flat.

Starts `partita serve --data-dir TMP`, fills a table through ImportTable (the
quickest way in: one gzip file, no 4,000 BatchWriteItem round trips), turns
point-in-time recovery on (its base snapshot copies the table), then resets
the server's peak RSS (`/proc/PID/clear_refs` 5) and exports. It prints
VmRSS before, VmHWM (the peak) during the export and the time taken, for
each size given, so a growing peak shows at once:

    .venv/bin/python bench/export_memory.py --items 10000 100000
    .venv/bin/python bench/export_memory.py --s3 --items 100000   # through moto's S3 server (--s3-endpoint)

With `--s3` the import reads and the export writes a real S3-compatible service
(moto's server mode, run in this process, so its memory is not the server's).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config


def status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of `pid` in kB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = int(value.split()[0])
    return out


def wait(check: Any, timeout: float = 1800) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.2)
    return value


def item(i: int) -> dict[str, Any]:
    return {"pk": {"S": f"user#{i:07d}"}, "sk": {"N": str(i % 97)}, "name": {"S": f"name {i}" * 4},
            "tags": {"SS": ["a", "b", f"t{i % 13}"]}, "n": {"N": str(i * 7)}, "m": {"M": {"x": {"BOOL": True}}}}


def s3_service(root: Path) -> list[str]:
    """moto's S3 server on a free port, buckets `in` (holding the source file) and `out`; the serve flags."""
    import socket

    from moto.server import ThreadedMotoServer

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False).start()
    endpoint = f"http://127.0.0.1:{port}"
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                      aws_secret_access_key="x", config=Config(s3={"addressing_style": "path"}))
    for name in ("bench-in", "bench-out"):
        s3.create_bucket(Bucket=name)
    s3.upload_file(str(root / "s3" / "bench-in" / "items" / "part.json.gz"), "bench-in", "items/part.json.gz")
    return ["--s3-endpoint", endpoint]


def run(items: int, use_s3: bool) -> None:
    root = Path(tempfile.mkdtemp(prefix="partita-export-bench-"))
    source = root / "s3" / "bench-in" / "items"
    source.mkdir(parents=True)
    with gzip.open(source / "part.json.gz", "wb") as out:
        for i in range(items):
            out.write(json.dumps({"Item": item(i)}).encode() + b"\n")
    where = s3_service(root) if use_s3 else ["--s3-dir", str(root / "s3")]
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}
    server = subprocess.Popen([sys.executable, "-m", "partita", "serve", "--port", "0", "--data-dir",
                               str(root / "data"), *where], stdout=subprocess.PIPE, text=True, env=env)
    assert server.stdout is not None
    url = server.stdout.readline().strip().split()[-1]
    ddb = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1", aws_access_key_id="x",
                       aws_secret_access_key="x", config=Config(retries={"max_attempts": 1}))
    try:
        keys = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
        defs = [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]
        arn = ddb.import_table(S3BucketSource={"S3Bucket": "bench-in", "S3KeyPrefix": "items/"}, InputFormat="DYNAMODB_JSON",
                               InputCompressionType="GZIP",
                               TableCreationParameters={"TableName": "big", "KeySchema": keys, "AttributeDefinitions": defs,
                                                        "BillingMode": "PAY_PER_REQUEST"})["ImportTableDescription"]["ImportArn"]
        wait(lambda: ddb.describe_import(ImportArn=arn)["ImportTableDescription"]["ImportStatus"] == "COMPLETED")
        table = ddb.describe_table(TableName="big")["Table"]
        ddb.update_continuous_backups(TableName="big",
                                      PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
        loaded = status(server.pid)
        Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        started = time.monotonic()
        export = ddb.export_table_to_point_in_time(TableArn=table["TableArn"], S3Bucket="bench-out")["ExportDescription"]
        doc = wait(lambda: (d := ddb.describe_export(ExportArn=export["ExportArn"])["ExportDescription"])
                   ["ExportStatus"] != "IN_PROGRESS" and d)
        took = time.monotonic() - started
        after = status(server.pid)
        print(f"items={items} target={'s3' if use_s3 else 'dir'} status={doc['ExportStatus']} exported={doc.get('ItemCount')} "
              f"rss_before={loaded['VmRSS'] / 1024:.1f}MB peak_during_export={after['VmHWM'] / 1024:.1f}MB "
              f"rss_after={after['VmRSS'] / 1024:.1f}MB seconds={took:.1f} (base snapshot + export)")
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--s3", action="store_true", help="import from and export to moto's S3 server")
    args = parser.parse_args()
    for items in args.items:
        run(items, args.s3)


if __name__ == "__main__":
    main()

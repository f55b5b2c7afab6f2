"""Progress of backup, export and import jobs in `GET /metrics` and on the console's jobs page."""

from __future__ import annotations

import re
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from backup_helpers import every_type_item, indexed_table, wait_for
from conftest import Server, client_for

sys.path.insert(0, str(Path(__file__).parent / "console"))
from console_helpers import request  # noqa: E402

ITEMS = 120


def _metrics(url: str) -> str:
    with urllib.request.urlopen(url + "/metrics") as answer:
        text: str = answer.read().decode()
        return text


def _samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    out = []
    for line in text.splitlines():
        match = re.match(rf"{name}\{{(.*)\}} (\S+)$", line)
        if match:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
            out.append((labels, float(match.group(2))))
    return out


@pytest.fixture
def slow(start_server: Callable[..., Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Server:
    monkeypatch.setenv("PARTITA_JOB_BATCH", "5")
    monkeypatch.setenv("PARTITA_JOB_PAUSE", "0.03")
    return start_server("--in-memory", "--s3-dir", str(tmp_path / "s3"))


def test_export_progress_in_metrics_and_console(slow: Server) -> None:
    ddb: Any = client_for(slow.url)
    indexed_table(ddb, "src")
    arn = ddb.describe_table(TableName="src")["Table"]["TableArn"]
    ddb.update_continuous_backups(TableName="src", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    items = [every_type_item(i) for i in range(ITEMS)]
    for start in range(0, ITEMS, 25):
        ddb.batch_write_item(RequestItems={"src": [{"PutRequest": {"Item": it}} for it in items[start:start + 25]]})
    export_arn = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket")["ExportDescription"]["ExportArn"]

    def midway() -> list[tuple[dict[str, str], float]] | None:
        found = [s for s in _samples(_metrics(slow.url), "partita_backup_job_items")
                 if s[0]["kind"] == "export" and s[0]["phase"] == "write" and 0 < s[1] < ITEMS]
        return found or None

    (labels, value), = wait_for(midway, 60)
    assert labels["resource"] == export_arn and labels["table"] == "src"
    page = request(slow.url, "/console/jobs")
    assert page.status == 200
    row = re.search(r'<tr class="job" data-kind="export">(.*?)</tr>', page.text, re.S)
    assert row is not None and export_arn in row.group(1) and "write" in row.group(1)

    def finished() -> bool:
        doc = ddb.describe_export(ExportArn=export_arn)["ExportDescription"]
        return doc["ExportStatus"] == "COMPLETED"

    wait_for(finished, 60)
    text = _metrics(slow.url)
    assert not [s for s in _samples(text, "partita_backup_job_items") if s[0]["kind"] == "export"]
    assert ({"kind": "export", "status": "COMPLETED"}, 1.0) in _samples(text, "partita_backup_jobs")
    page = request(slow.url, "/console/jobs")
    assert 'data-kind="export" data-status="COMPLETED"' in page.text and "No job is running." in page.text


def test_backup_progress_counts_copied_items(slow: Server) -> None:
    ddb: Any = client_for(slow.url)
    indexed_table(ddb, "src")
    items = [every_type_item(i) for i in range(ITEMS)]
    for start in range(0, ITEMS, 25):
        ddb.batch_write_item(RequestItems={"src": [{"PutRequest": {"Item": it}} for it in items[start:start + 25]]})
    backup = ddb.create_backup(TableName="src", BackupName="progress")["BackupDetails"]["BackupArn"]

    def copying() -> list[tuple[dict[str, str], float]] | None:
        found = [s for s in _samples(_metrics(slow.url), "partita_backup_job_items")
                 if s[0]["kind"] == "backup" and 0 < s[1] < ITEMS]
        return found or None

    (labels, _), = wait_for(copying, 60)
    assert labels["resource"] == backup and labels["phase"] == "copy"
    wait_for(lambda: ({"kind": "backup", "status": "AVAILABLE"}, 1.0)
             in _samples(_metrics(slow.url), "partita_backup_jobs"), 60)

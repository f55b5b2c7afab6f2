"""Terraform's aws_dynamodb_table with two replica {} blocks: apply, a second plan with no changes, destroy.

Runs when the `terraform` command and a local mirror of the AWS provider (a
folder named registry.terraform.io holding hashicorp/aws) are present: this
machine kind has both and no network. PARTITA_TF_MIRROR names the folder
that holds registry.terraform.io when it is elsewhere. The provider talks
to one Partita endpoint for every region; each request goes to the region it
signs for, as a global table's replicas need.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Server
from region_helpers import client, store_args

_CANDIDATES = ("/opt/tf-plugins", "/usr/share/terraform/plugins", "/usr/local/share/terraform/plugins",
               str(Path.home() / ".terraform.d" / "plugins"), str(Path.home() / ".local/share/terraform/plugins"))


def _mirror() -> tuple[Path, str] | None:
    """(the folder holding registry.terraform.io, the AWS provider version in it), or None."""
    roots = [os.environ["PARTITA_TF_MIRROR"]] if os.environ.get("PARTITA_TF_MIRROR") else list(_CANDIDATES)
    for root in roots:
        aws = Path(root) / "registry.terraform.io" / "hashicorp" / "aws"
        if aws.is_dir():
            versions = sorted(p.name for p in aws.iterdir() if p.is_dir())
            if versions:
                return Path(root), versions[-1]
    return None


MIRROR = _mirror()
pytestmark = [
    pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not installed"),
    pytest.mark.skipif(MIRROR is None, reason="no local mirror of the AWS provider (a registry.terraform.io folder)"),
]

MAIN = """
terraform {{
  required_providers {{
    aws = {{ source = "hashicorp/aws", version = "{version}" }}
  }}
}}
provider "aws" {{
  region                      = "us-east-1"
  access_key                  = "partita"
  secret_key                  = "partita"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  endpoints {{
    dynamodb = "{url}"
  }}
}}
resource "aws_dynamodb_table" "orders" {{
  name             = "tf-orders"
  billing_mode     = "PAY_PER_REQUEST"
  hash_key         = "pk"
  stream_enabled   = true
  stream_view_type = "NEW_AND_OLD_IMAGES"
  attribute {{
    name = "pk"
    type = "S"
  }}
  replica {{
    region_name = "eu-west-1"
  }}
  replica {{
    region_name = "ap-south-1"
  }}
}}
"""


def _terraform(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert MIRROR is not None
    rc = folder / "terraformrc"
    rc.write_text('provider_installation {\n  filesystem_mirror {\n'
                  f'    path    = "{MIRROR[0]}"\n    include = ["registry.terraform.io/hashicorp/aws"]\n  }}\n}}\n')
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(rc), "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1",
           "TF_DATA_DIR": str(folder / ".terraform")}
    return subprocess.run(["terraform", f"-chdir={folder}", *args, "-input=false", "-no-color"],
                          env=env, capture_output=True, text=True, timeout=600)


def test_a_table_with_two_replica_blocks(start_server: Callable[..., Server], tmp_path: Path) -> None:
    assert MIRROR is not None
    srv = start_server(*store_args(tmp_path / "store"), "--regions", "us-east-1,eu-west-1,ap-south-1",
                       "--replica-phase-ms", "0", "--replication-lag-ms", "0")
    work = tmp_path / "tf"
    work.mkdir()
    (work / "main.tf").write_text(MAIN.format(version=MIRROR[1], url=srv.url))
    assert _terraform(work, "init").returncode == 0
    applied = _terraform(work, "apply", "-auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    for region in ("us-east-1", "eu-west-1", "ap-south-1"):
        table = client(srv.url, region).describe_table(TableName="tf-orders")["Table"]
        assert table["TableStatus"] == "ACTIVE"
        assert sorted(r["RegionName"] for r in table["Replicas"]) == sorted(
            {"us-east-1", "eu-west-1", "ap-south-1"} - {region})
    client(srv.url, "us-east-1").put_item(TableName="tf-orders", Item={"pk": {"S": "a"}})
    assert client(srv.url, "ap-south-1").get_item(TableName="tf-orders", Key={"pk": {"S": "a"}})["Item"] == {
        "pk": {"S": "a"}}
    planned = _terraform(work, "plan", "-detailed-exitcode")
    assert planned.returncode == 0, planned.stdout + planned.stderr  # 0: no changes (2 would be a diff)
    destroyed = _terraform(work, "destroy", "-auto-approve")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    for region in ("us-east-1", "eu-west-1", "ap-south-1"):
        assert client(srv.url, region).list_tables()["TableNames"] == []

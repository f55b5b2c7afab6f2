"""Findings as text: what `partita advise` prints and the pytest plugin reports.

One block per finding: the kind and where, the lesson, the evidence on one
line, the fix and each of its inputs as compact JSON (ready to paste into a
`boto3` call or `aws dynamodb ... --cli-input-json`).
"""

from __future__ import annotations

import json
from typing import Any


def _value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def finding_text(finding: dict[str, Any]) -> str:
    where = finding["table"] + ("" if finding["index"] is None else f" (index {finding['index']})")
    lines = [f"{finding['kind']}: {where}", f"  {finding['lesson']}"]
    evidence = ", ".join(f"{k}={_value(v)}" for k, v in finding["evidence"].items())
    lines.append(f"  evidence: {evidence}")
    lines.append(f"  fix: {finding['fix']['text']}")
    for step in finding["fix"]["inputs"]:
        lines.append(f"    {step['operation']} ({step['why']}): "
                     f"{json.dumps(step['input'], ensure_ascii=False, separators=(',', ':'))}")
    return "\n".join(lines)


def as_text(findings: list[dict[str, Any]]) -> str:
    if not findings:
        return "No findings: the recorded traffic shows none of the advisor's patterns."
    count = len(findings)
    head = f"{count} finding{'s' if count != 1 else ''}:"
    return "\n\n".join([head, *(finding_text(f) for f in findings)])

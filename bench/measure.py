"""One server through the whole bench: cold starts, preload, every workload.

A BenchError (no start, a failed set-up) is recorded in the ServerResult
rather than raised, so that one failing server still leaves the others'
numbers and a report saying what failed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common import BenchError, Json, indent, say
from servers import RunningServer, ServerDef, rss_mib, wait_idle
from tables import create_table, make_tables, preload
from workloads import Workload
from wrk import WrkResult, run_wrk, write_pool


@dataclass
class ServerResult:
    name: str
    ok: bool = False
    reason: str = ""
    cold_start_s: float | None = None  # median of cold_starts_s
    cold_starts_s: list[float] = field(default_factory=list)
    first_status: int | None = None
    rss_idle_start_mib: float | None = None
    rss_preloaded_mib: float | None = None
    rss_idle_end_mib: float | None = None
    preload: dict[str, Json] = field(default_factory=dict)
    workloads: dict[str, WrkResult] = field(default_factory=dict)
    log: str = ""


def bench_server(
    definition: ServerDef, workloads: Sequence[Workload], opts: argparse.Namespace, out_dir: Path
) -> ServerResult:
    result = ServerResult(definition.name)
    missing = definition.missing()
    if missing:
        result.reason = f"not available: {missing}"
        return result
    log_path = out_dir / f"{definition.name}.log"
    result.log = str(log_path)
    wrk_log = out_dir / f"{definition.name}.wrk.log"
    tables = make_tables(opts.items, opts.collection_items)
    # extra start/stop cycles only to time the cold start; the last start is benchmarked
    for attempt in range(opts.cold_starts - 1):
        probe = RunningServer(definition, out_dir / f"{definition.name}.start{attempt + 1}.log")
        try:
            seconds, _ = probe.wait_first_answer(opts.start_timeout)
            result.cold_starts_s.append(seconds)
        except BenchError:
            break  # the benchmarked start below reports the failure
        finally:
            probe.stop()
    server = RunningServer(definition, log_path)
    try:
        say(f"[{definition.name}] started pid {server.pid} on 127.0.0.1:{server.port}")
        try:
            seconds, result.first_status = server.wait_first_answer(opts.start_timeout)
        except BenchError as exc:
            result.reason = f"did not start: {exc}"
            tail = server.log_tail()
            if tail:
                result.reason += "\n" + indent(tail)
            return result
        result.cold_starts_s.append(seconds)
        result.cold_start_s = statistics.median(result.cold_starts_s)
        say(
            f"[{definition.name}] first answer after {seconds * 1000:.0f} ms (HTTP {result.first_status}); "
            f"cold start median of {len(result.cold_starts_s)}: {result.cold_start_s * 1000:.0f} ms"
        )
        time.sleep(1.0)
        result.rss_idle_start_mib = rss_mib(server.pid)

        for table_key in dict.fromkeys(w.table for w in workloads):
            table = tables[table_key]
            create_table(server.client, table, options=definition.table_options)
            mode, seconds, note = preload(server.client, table, opts.preload, opts.preload_threads)
            result.preload[table.name] = {
                "items": table.count,
                "mode": mode,
                "seconds": round(seconds, 3),
                "items_per_s": round(table.count / seconds, 1),
                "note": note,
            }
            say(
                f"[{definition.name}] preloaded {table.count} items into {table.name} in {seconds:.1f} s "
                f"({table.count / seconds:.0f}/s, {mode}){' - ' + note if note else ''}"
            )
        result.rss_preloaded_mib = rss_mib(server.pid)

        with tempfile.TemporaryDirectory(prefix="partita-bench-") as tmp:
            for index, workload in enumerate(workloads):
                table = tables[workload.table]
                pool_path = Path(tmp) / f"{workload.name}.pool"
                build, per_op = None, None
                if workload.prepare is not None:
                    build, per_op = workload.prepare(server.client, table)
                # signed just before use: signatures carry a timestamp
                write_pool(
                    pool_path, server.client, table, workload, opts.pool, seed=1000 + index, build=build
                )
                warm = run_wrk(server, workload, pool_path, opts.warmup, True, wrk_log)
                if not warm.ok:
                    warm.reason = f"warm-up (every response checked) failed: {warm.reason}"
                    warm.phase = "warm-up"
                    result.workloads[workload.name] = warm
                    say(f"[{definition.name}] {workload.name}: {warm.reason}")
                    if not server.alive():
                        break
                    continue
                measured = run_wrk(
                    server, workload, pool_path, opts.duration, opts.check_all, wrk_log
                )
                measured.rss_after_mib = rss_mib(server.pid)
                measured.items_per_op = per_op
                result.workloads[workload.name] = measured
                status = "ok" if measured.ok else f"INVALID: {measured.reason}"
                say(
                    f"[{definition.name}] {workload.name}: {measured.ops_per_s:,.0f} ops/s, "
                    f"p50 {measured.p50_ms:.2f} ms, p99 {measured.p99_ms:.2f} ms, {status}"
                )
                if not server.alive():
                    break
        if server.alive():
            wait_idle(server.pid)
            time.sleep(1.0)
            result.rss_idle_end_mib = rss_mib(server.pid)
        result.ok = server.alive() and all(w.ok for w in result.workloads.values())
        if not server.alive():
            result.reason = (
                f"server exited with code {server.proc.returncode} during the run\n"
                + indent(server.log_tail())
            )
    except BenchError as exc:
        result.reason = f"failed: {exc}"
        tail = server.log_tail()
        if tail:
            result.reason += "\n" + indent(tail)
    finally:
        server.stop()
    return result

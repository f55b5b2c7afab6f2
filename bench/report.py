"""The tables run.py prints: per server, per workload, the ratios, and rounds.

Ratios are taken only between valid runs; the Partita/peer and variant
tables show a pair lacking one as n/a rather than leaving it out, so that a
reader sees what was not compared.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace

from measure import ServerResult
from workloads import Workload


def fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def report(results: list[ServerResult], workloads: Sequence[Workload]) -> str:
    lines: list[str] = []
    lines.append("Servers")
    lines.append(
        f"  {'server':<9} {'cold start':>10} {'RSS start':>10} {'preloaded':>10} {'RSS end':>9}  preload"
    )
    for r in results:
        if r.cold_start_s is None:
            lines.append(f"  {r.name:<9} {r.reason.splitlines()[0] if r.reason else 'not run'}")
            continue
        preload = ", ".join(
            f"{v['items_per_s']:.0f} items/s ({v['mode']})" for v in r.preload.values()
        )
        lines.append(
            f"  {r.name:<9} {r.cold_start_s * 1000:>8.0f}ms {fmt(r.rss_idle_start_mib):>7}MiB "
            f"{fmt(r.rss_preloaded_mib):>7}MiB {fmt(r.rss_idle_end_mib):>6}MiB  {preload}"
        )
    lines.append("")
    lines.append(
        "Workloads (measured run; latency in ms; CPU = server CPU share of the run, of 200%)"
    )
    lines.append(
        f"  {'server':<9} {'workload':<8} {'conns':>5} {'ops/s':>9} {'p50':>8} {'p99':>8} {'p99.9':>8} "
        f"{'non200':>6} {'CPU%':>5} {'us/op':>7} {'RSS MiB':>8}  status"
    )
    for r in results:
        for w in workloads:
            res = r.workloads.get(w.name)
            if res is None:
                continue
            status = "ok" if res.ok else "INVALID: " + res.reason
            if res.phase != "measured":
                lines.append(
                    f"  {r.name:<9} {w.name:<8} {w.connections:>5} {'-':>9}  not measured: {res.reason}"
                )
                continue
            lines.append(
                f"  {r.name:<9} {w.name:<8} {w.connections:>5} {res.ops_per_s:>9,.0f} {res.p50_ms:>8.2f} "
                f"{res.p99_ms:>8.2f} {res.p999_ms:>8.2f} {res.non200 + res.socket_errors:>6} "
                f"{res.server_cpu_pct:>5.0f} {res.server_cpu_us_per_op:>7.0f} {res.rss_after_mib:>8.1f}  {status}"
            )
    paged = [
        (r, w, r.workloads[w.name])
        for r in results
        for w in workloads
        if w.name in r.workloads and r.workloads[w.name].items_per_op and r.workloads[w.name].ok
    ]
    if paged:
        lines.append("")
        lines.append("Items read per second (each request reads one page)")
        for r, w, res in paged:
            assert res.items_per_op is not None
            lines.append(
                f"  {r.name:<9} {w.name:<8} {res.items_per_op:>9,.0f} items/page "
                f"{res.ops_per_s * res.items_per_op:>12,.0f} items/s"
            )
    by_name = {r.name: r for r in results}
    partita = by_name.get("partita")
    peers = [by_name[n] for n in ("dynalite", "moto") if n in by_name]
    if partita is not None and peers:
        lines.append("")
        lines.append("Ratios (Partita / peer): throughput higher is better, p99 lower is better")
        for peer in peers:
            for w in workloads:
                a, b = partita.workloads.get(w.name), peer.workloads.get(w.name)
                if a and b and a.ok and b.ok and b.ops_per_s and b.p99_ms:
                    lines.append(
                        f"  Partita/{peer.name:<9} {w.name:<8} ops/s x{a.ops_per_s / b.ops_per_s:.2f}   "
                        f"p99 x{a.p99_ms / b.p99_ms:.2f}"
                    )
                    if a.items_per_op and b.items_per_op:
                        ratio = (a.ops_per_s * a.items_per_op) / (b.ops_per_s * b.items_per_op)
                        lines.append(f"  Partita/{peer.name:<9} {w.name:<8} items/s x{ratio:.2f}")
                else:
                    lines.append(
                        f"  Partita/{peer.name:<9} {w.name:<8} n/a (a run missing or invalid)"
                    )
    variants = [r for r in results if r.name.startswith("partita-")]
    if partita is not None and variants:
        lines.append("")
        lines.append("Variants / partita, same run: throughput (1.00 = no cost), p99")
        for variant in variants:
            for w in workloads:
                a, b = variant.workloads.get(w.name), partita.workloads.get(w.name)
                if a and b and a.ok and b.ok and b.ops_per_s and b.p99_ms:
                    lines.append(
                        f"  {variant.name:<17} {w.name:<8} ops/s x{a.ops_per_s / b.ops_per_s:.3f}   "
                        f"p99 x{a.p99_ms / b.p99_ms:.2f}"
                    )
                else:
                    lines.append(f"  {variant.name:<17} {w.name:<8} n/a (a run missing or invalid)")
    failures = [r for r in results if r.reason]
    if failures:
        lines.append("")
        lines.append("Problems")
        for r in failures:
            lines.append(f"  {r.name}: {r.reason}")
            if r.log:
                lines.append(f"    (server log: {r.log})")
    return "\n".join(lines)


def median_results(
    rounds: list[list[ServerResult]], workloads: Sequence[Workload]
) -> list[ServerResult]:
    """One result per server: the first round's, with each workload's median-throughput run.

    The machine this runs on is a shared VM whose speed swings by tens of percent between
    runs a minute apart; interleaving servers over rounds and taking medians keeps one slow
    spell from deciding a ratio.
    """
    if len(rounds) == 1:
        return rounds[0]
    merged: list[ServerResult] = []
    for index, first in enumerate(rounds[0]):
        runs = [r[index] for r in rounds]
        result = replace(first, workloads=dict(first.workloads))
        result.ok = all(r.ok for r in runs)
        result.reason = "; ".join(r.reason for r in runs if r.reason)
        for w in workloads:
            done = sorted(
                (r.workloads[w.name] for r in runs if w.name in r.workloads and r.workloads[w.name].ok),
                key=lambda res: res.ops_per_s,
            )
            if done:
                result.workloads[w.name] = done[(len(done) - 1) // 2]
        merged.append(result)
    return merged


def rounds_report(rounds: list[list[ServerResult]], workloads: Sequence[Workload]) -> str:
    """Every round's throughput, and ratios paired within a round (median, min-max).

    A ratio of two runs in the same round shares that round's machine speed, so the
    median of per-round ratios is steadier than the ratio of medians.
    """
    lines = ["", f"Rounds ({len(rounds)}, interleaved): ops/s per round"]
    names = [r.name for r in rounds[0]]
    for index, name in enumerate(names):
        for w in workloads:
            values = [
                f"{r[index].workloads[w.name].ops_per_s:,.0f}"
                if w.name in r[index].workloads and r[index].workloads[w.name].ok
                else "-"
                for r in rounds
            ]
            lines.append(f"  {name:<17} {w.name:<8} {' '.join(f'{v:>8}' for v in values)}")
    bases = [n for n in ("partita", "dynalite") if n in names]
    lines.append("Paired ratios (same round): median [min-max]")
    for base in bases:
        b = names.index(base)
        for index, name in enumerate(names):
            if name == base or (base == "dynalite" and not name.startswith("partita")):
                continue
            if base == "partita" and not name.startswith("partita-"):
                continue
            for w in workloads:
                ratios = []
                for r in rounds:
                    x, y = r[index].workloads.get(w.name), r[b].workloads.get(w.name)
                    if x and y and x.ok and y.ok and y.ops_per_s:
                        ratios.append(x.ops_per_s / y.ops_per_s)
                if ratios:
                    lines.append(
                        f"  {name + '/' + base:<26} {w.name:<8} x{statistics.median(ratios):.3f} "
                        f"[{min(ratios):.3f}-{max(ratios):.3f}]"
                    )
    return "\n".join(lines)


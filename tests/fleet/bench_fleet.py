#!/usr/bin/env python3
"""The fleet's growth curve: site.yml's first run on 8, 16, 32, 64 hosts, per stage.

    bench_fleet.py                 print the recorded table (tests/fleet/growth.json) and
                                   write its plot (tests/fleet/growth.svg)
    bench_fleet.py --run 8 16      measure these sizes (fleet.py all N, quick verify), fold
                                   them into growth.json, then print and plot
    bench_fleet.py --tasks .cache/fleet/stages-second.json
                                   the run's costliest tasks: controller and containers' CPU

Figures per stage: wall seconds and controller CPU seconds (ansible-playbook and its
workers: tests/fleet/callback_plugins/fleet_stages.py), and CPU per host; the commit they
were measured on is kept with each size. A 2-core machine shared with other jobs: wall
time moves with the load, controller CPU much less; compare CPU per host across sizes.
No matplotlib in the venv: the SVG is drawn here (one line per stage, CPU per host).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GROWTH = HERE / "growth.json"
SVG = HERE / "growth.svg"

# site.yml's plays -> stages (a stage's plays are summed).
STAGES = [
    ("preflight", "Check the inventory"),
    ("rdma_stack+nic", "Install the RDMA stack"),
    ("ib_fabric", ("subnet manager", "UFM")),
    ("soft_roce", "Soft-RoCE"),
    ("rdma_rails", "Address the rails"),
    ("roce_host_qos", "on every RoCE host"),
    ("roce_switch_qos", "on every managed switch"),
    ("verify", "Verify the RDMA fabric"),
]


def stage_of(play: str) -> str:
    for stage, keys in STAGES:
        if any(key in play for key in ((keys,) if isinstance(keys, str) else keys)):
            return stage
    return "other"


def per_stage(run: dict) -> dict:
    stages: dict = {}
    for play in run.get("plays", []):
        entry = stages.setdefault(stage_of(play["play"]), {"wall": 0.0, "cpu": 0.0})
        entry["wall"] = round(entry["wall"] + play["wall"], 2)
        entry["cpu"] = round(entry["cpu"] + play["cpu"], 2)
        for key in ("main_cpu", "hosts_cpu", "machine_cpu"):
            if key in play:
                entry[key] = round(entry.get(key, 0.0) + play[key], 2)
    return stages


def measure(count: int, mode: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        argv = [sys.executable, str(HERE / "fleet.py"), "all", str(count), "--verify-mode", mode]
        subprocess.run([*argv, "--out", str(out)], check=False, stdout=subprocess.DEVNULL)
        return summarise(json.loads(out.read_text()))


def summarise(figures: dict) -> dict:
    """One row of growth.json from fleet.py's figures (fleet.py all N --out FILE)."""
    first = figures.get("first", {})
    return {
        "count": figures["count"],
        "commit": figures.get("commit"),
        "verify_mode": figures.get("verify_mode"),
        "up_s": figures.get("up"),
        "rc": [figures.get(k, {}).get("rc") for k in ("first", "second", "check")],
        "second_changed": figures.get("second", {}).get("totals", {}).get("changed"),
        "wall_s": first.get("wall"),
        "cpu_s": first.get("controller_cpu"),
        "main_cpu_s": first.get("controller_main_cpu"),
        "hosts_cpu_s": first.get("hosts_cpu"),
        "machine_cpu_s": first.get("machine_cpu"),
        "maxrss_kib": first.get("controller_maxrss_kib"),
        "memory_mib": round(figures.get("memory", {}).get("usage", 0) / 2**20),
        "stages": per_stage(first),
    }


def costliest(run: dict, top: int = 15) -> str:
    """The run's tasks by the CPU they cost the machine (controller + containers), with
    the share of the run's; a task name seen in several plays or includes is summed."""
    tasks: dict = {}
    for t in run.get("tasks", []):
        entry = tasks.setdefault(t["task"], {"cpu": 0.0, "hosts_cpu": 0.0, "results": 0})
        entry["cpu"] += t["cpu"]
        entry["hosts_cpu"] += t.get("hosts_cpu", 0.0)
        entry["results"] += t["results"]
    cpu = sum(e["cpu"] for e in tasks.values())
    hosts_cpu = sum(e["hosts_cpu"] for e in tasks.values())
    total = (cpu + hosts_cpu) or 1.0
    ranked = sorted(tasks.items(), key=lambda kv: -(kv[1]["cpu"] + kv[1]["hosts_cpu"]))
    lines = [
        "| task | host results | controller CPU s | hosts' CPU s | share |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, e in ranked[:top]:
        share = (e["cpu"] + e["hosts_cpu"]) / total
        lines.append(
            f"| {name} | {e['results']} | {e['cpu']:.2f} | {e['hosts_cpu']:.2f} | {share:.1%} |"
        )
    lines.append(
        f"| all {len(tasks)} tasks | {sum(e['results'] for e in tasks.values())} | "
        f"{cpu:.2f} | {hosts_cpu:.2f} | 100.0% |"
    )
    return "\n".join(lines)


def _figure(value) -> str:
    """A figure of the table; '-' for a size measured before it was recorded."""
    return "-" if value is None else f"{value}"


def table(growth: list[dict]) -> str:
    lines = [
        "| hosts | commit | verify | first run wall s | controller CPU s | CPU s/host "
        "| hosts' CPU s | machine CPU s "
        "| controller RSS MiB | fleet memory MiB | runs rc (first, second, check) "
        "| second run changed |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for g in growth:
        lines.append(
            f"| {g['count']} | {g['commit']} | {g['verify_mode']} | {g['wall_s']} | {g['cpu_s']} | "
            f"{g['cpu_s'] / g['count']:.2f} | {_figure(g.get('hosts_cpu_s'))} | "
            f"{_figure(g.get('machine_cpu_s'))} | {(g['maxrss_kib'] or 0) // 1024} | "
            f"{g['memory_mib']} | "
            f"{', '.join(str(r) for r in g['rc'])} | {g['second_changed']} |"
        )
    names = [s for s, _ in STAGES if s not in ("ib_fabric", "soft_roce", "preflight")]
    lines += ["", "Controller CPU s per host, per stage (wall s in brackets):", ""]
    lines.append("| hosts | " + " | ".join(names) + " |")
    lines.append("| ---: |" + " ---: |" * len(names))
    for g in growth:
        cells = []
        for name in names:
            s = g["stages"].get(name, {"cpu": 0, "wall": 0})
            cells.append(f"{s['cpu'] / g['count']:.2f} ({s['wall']:.0f})")
        lines.append(f"| {g['count']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def svg(growth: list[dict]) -> str:
    """CPU s per host per stage against hosts: one polyline per stage."""
    width, height, left, bottom, top, right = 640, 360, 60, 40, 20, 150
    counts = [g["count"] for g in growth]
    names = [s for s, _ in STAGES if s not in ("ib_fabric", "soft_roce", "preflight")]
    series = {
        n: [g["stages"].get(n, {"cpu": 0})["cpu"] / g["count"] for g in growth] for n in names
    }
    ymax = max([v for vs in series.values() for v in vs] + [0.1]) * 1.1
    xmin, xmax = min(counts), max(counts)

    def x(count):
        return left + (width - left - right) * ((count - xmin) / ((xmax - xmin) or 1))

    def y(value):
        return height - bottom - (height - bottom - top) * value / ymax

    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        ' font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{left}" y="14">site.yml first run on the fleet:'
        " controller CPU s per host, per stage</text>",
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}"'
        f' y2="{height - bottom}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
        f'<text x="{(width - right) / 2}" y="{height - 8}">hosts</text>',
    ]
    for count in counts:
        parts.append(f'<text x="{x(count) - 6:.0f}" y="{height - bottom + 14}">{count}</text>')
    for tick in range(5):
        value = ymax * tick / 4
        parts.append(f'<text x="8" y="{y(value) + 4:.0f}">{value:.2f}</text>')
    for i, (name, values) in enumerate(series.items()):
        colour = colours[i % len(colours)]
        points = " ".join(f"{x(c):.1f},{y(v):.1f}" for c, v in zip(counts, values, strict=True))
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>'
        )
        parts.append(
            f'<text x="{width - right + 8}" y="{top + 14 * (i + 1)}" fill="{colour}">{name}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", nargs="*", type=int, default=[], metavar="N")
    parser.add_argument("--verify-mode", default="quick", choices=["full", "quick"])
    parser.add_argument(
        "--ingest",
        nargs="*",
        type=Path,
        default=[],
        metavar="FIGURES",
        help="fold figures that fleet.py all --out (or make fleet) wrote",
    )
    parser.add_argument(
        "--tasks", type=Path, metavar="STAGES", help="print the costliest tasks of one run"
    )
    args = parser.parse_args()
    if args.tasks:
        print(costliest(json.loads(args.tasks.read_text())))
        return 0
    growth = json.loads(GROWTH.read_text()) if GROWTH.exists() else []
    rows = [summarise(json.loads(path.read_text())) for path in args.ingest]
    rows += [measure(count, args.verify_mode) for count in args.run]
    for row in rows:
        growth = [g for g in growth if g["count"] != row["count"]] + [row]
        growth.sort(key=lambda g: g["count"])
        GROWTH.write_text(json.dumps(growth, indent=1) + "\n")
    if not growth:
        print("no fleet figures recorded yet: bench_fleet.py --run 8 16")
        return 0
    print(table(growth))
    SVG.write_text(svg(growth))
    print(f"\nplot: {SVG}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

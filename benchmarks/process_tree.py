"""CPU time and resident memory of a process and its descendants, from ``/proc`` (Linux).

The service benchmark charges a server (its workers included) with what it used, whatever else
the machine runs.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["tree_cpu_s", "tree_rss_kib"]


def _processes() -> tuple[dict[int, list[int]], dict[int, float]]:
    """Children of every process, and CPU seconds (user + system) of every process."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    return children, cpu


def _tree(pid: int, children: dict[int, list[int]]) -> list[int]:
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack += children.get(current, [])
    return found


def tree_cpu_s(pid: int) -> float:
    """CPU seconds used so far by a process and its descendants."""
    children, cpu = _processes()
    return sum(cpu.get(member, 0.0) for member in _tree(pid, children))


def tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and its descendants, in KiB."""
    children, _ = _processes()
    total = 0
    for member in _tree(pid, children):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total

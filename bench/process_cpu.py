"""CPU time of this process and every process it started, for benches of runs whose work is
spread over worker processes (``executor: processes``).

Workers come from a fork server, so they are not this process's children: ``RUSAGE_CHILDREN``
never sees them. On Linux the live descendants are read from /proc (each one's own time and
that of its ended children, which is where the fork server keeps the ended workers'); elsewhere
only this process and its ended children count.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path


def cpu_seconds(leave_out: int | None = None) -> float:
    """CPU seconds so far, user + system, of this process (every thread) and its descendants,
    without the process ``leave_out`` and what runs under it (e.g. a loopback server)."""
    mine = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    total = sum(u.ru_utime + u.ru_stime for u in mine)
    if not Path("/proc/self/stat").exists():
        return total
    return total + sum(live_descendants_cpu(os.getpid(), leave_out).values())


def live_descendants_cpu(root: int, leave_out: int | None = None) -> dict[int, float]:
    """CPU seconds (own and ended children's) of each live descendant of ``root``."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = entry.read_text()
        except OSError:
            continue  # ended meanwhile
        fields = text[text.rindex(")") + 2 :].split()  # after "pid (name) "
        pid = int(entry.parent.name)
        parents[pid] = int(fields[1])
        cpu[pid] = sum(int(v) for v in fields[11:15]) / tick  # utime stime cutime cstime
    found: dict[int, float] = {}
    for pid, seconds in cpu.items():
        walk = pid
        for _ in range(64):  # up the parent chain
            if walk == leave_out or walk not in parents:
                break
            walk = parents[walk]
            if walk == root:
                found[pid] = seconds
                break
    return found

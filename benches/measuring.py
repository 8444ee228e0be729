"""Running a command several times: wall times and peak memory, for benches/compare.py."""

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass


def measure(argv, runs):
    """Median wall seconds, peak RSS (MiB) over the runs, and the last output."""
    runs = measure_all(argv, runs)
    return statistics.median(runs.wall), runs.peak_mib, runs.output


@dataclass
class Runs:
    wall: list
    # CPU seconds (user + system) of each run: on a loaded machine a steadier measure of work
    # than wall time, which includes waiting for a core.
    cpu: list
    peak_mib: float
    # The last run's standard output.
    output: bytes


def measure_all(argv, runs, env=None):
    """Every run's wall and CPU seconds, peak RSS (MiB) over the runs, and the last output.

    Peak memory comes from GNU time: a child's own rusage would count the pages of this
    Python process it was forked from. CPU time is this process's children's rusage before and
    after the run (GNU time reports it in 10 ms steps), so it includes GNU time's own ~1 ms.
    """
    times, cpus, peaks = [], [], []
    # Files, not pipes: nothing is read while the process runs, and output may be large.
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile() as rss:
        for _ in range(runs):
            out.seek(0)
            out.truncate()
            before = children_cpu()
            start = time.perf_counter()
            done = subprocess.run(
                ["/usr/bin/time", "-f", "%M", "-o", rss.name, *argv],
                stdout=out,
                stderr=subprocess.PIPE,
                env=env,
            )
            times.append(time.perf_counter() - start)
            cpus.append(children_cpu() - before)
            if done.returncode != 0:
                sys.exit(f"{' '.join(argv)} failed: {done.stderr.decode()}")
            with open(rss.name) as f:
                peaks.append(int(f.read().split()[-1]) / 1024)
        out.seek(0)
        return Runs(times, cpus, max(peaks), out.read())


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def spread(times):
    """min / median / max of seconds, in milliseconds, as printed in the tables."""
    return f"{min(times)*1e3:.1f} / {statistics.median(times)*1e3:.1f} / {max(times)*1e3:.1f}"

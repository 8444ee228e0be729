"""Running a command several times: wall times and peak memory, for benches/compare.py."""

import statistics
import subprocess
import sys
import tempfile
import time


def measure(argv, runs):
    """Median wall seconds, peak RSS (MiB) over the runs, and the last output."""
    times, peak, out = measure_all(argv, runs)
    return statistics.median(times), peak, out


def measure_all(argv, runs, env=None):
    """Every run's wall seconds, peak RSS (MiB) over the runs, and the last output.

    Peak memory comes from GNU time: a child's own rusage would count the pages of this
    Python process it was forked from.
    """
    times, peaks = [], []
    # Files, not pipes: nothing is read while the process runs, and output may be large.
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile() as rss:
        for _ in range(runs):
            out.seek(0)
            out.truncate()
            start = time.perf_counter()
            done = subprocess.run(
                ["/usr/bin/time", "-f", "%M", "-o", rss.name, *argv],
                stdout=out,
                stderr=subprocess.PIPE,
                env=env,
            )
            times.append(time.perf_counter() - start)
            if done.returncode != 0:
                sys.exit(f"{' '.join(argv)} failed: {done.stderr.decode()}")
            with open(rss.name) as f:
                peaks.append(int(f.read().split()[-1]) / 1024)
        out.seek(0)
        return times, max(peaks), out.read()


def spread(times):
    """min / median / max of seconds, in milliseconds, as printed in the tables."""
    return f"{min(times)*1e3:.1f} / {statistics.median(times)*1e3:.1f} / {max(times)*1e3:.1f}"

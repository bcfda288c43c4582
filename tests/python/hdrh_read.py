"""Reads every interval log of a latlab recording with the HdrHistogram package from PyPI
(`hdrh`) and prints, per log, its tag's series and the merged histogram's count, p50, p90, p99 and
max in microseconds, as JSON: what the ecosystem's own tools see in a recording."""

import glob
import json
import os
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

LOWEST, HIGHEST, DIGITS = 1, 3600 * 1000 * 1000, 3

out = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "hlog", "*.hlog"))):
    reader = HistogramLogReader(path, HdrHistogram(LOWEST, HIGHEST, DIGITS))
    merged = HdrHistogram(LOWEST, HIGHEST, DIGITS)
    intervals = 0
    while True:
        h = reader.get_next_interval_histogram()
        if h is None:
            break
        merged.add(h)
        intervals += 1
    out[os.path.basename(path)[: -len(".hlog")]] = {
        "intervals": intervals,
        "count": merged.get_total_count(),
        "p50": merged.get_value_at_percentile(50),
        "p90": merged.get_value_at_percentile(90),
        "p99": merged.get_value_at_percentile(99),
        "max": merged.get_max_value(),
    }
print(json.dumps(out))

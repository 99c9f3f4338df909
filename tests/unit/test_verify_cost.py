"""The controller's cost of a verify run grows linearly with its tests, so a rack of 1,024
hosts stays within reach of one controller: results.json bytes and peak memory per test
the same at 24 x 8 and 48 x 8 full (2,208 and 9,024 tests), and small enough per test
that 1,024 x 8 full (4,190,208 tests) stays within the bounds set for it: results.json.gz
under 300 MB, the compression said by the file's name, and under 4 GB of the controller's
Python allocations at their peak. The synthetic run is the bench's
(tests/support/verify_synthetic.py: the fabric step, plan, judge, isolation, report, the
report step's writers: results, report.html, report.md, junit.xml); make bench prints the
figures at 128 and 256 x 8 and extrapolates.
"""

from __future__ import annotations

import tracemalloc

import verify_synthetic
from ansible_collections.rdma.fabric.plugins.action.verify_step import junit_file, results_file

FULL_1024 = 1024 * 1023 // 2 * 8


def _measured(count):
    tracemalloc.start()
    try:
        figures = verify_synthetic.run(count, 8, "full", gzip_bytes=True)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return dict(figures, peak=peak)


def test_bytes_and_memory_per_test_are_constant_and_1024_x_8_full_is_bounded():
    small, large = _measured(24), _measured(48)
    assert (small["tests"], large["tests"]) == (2208, 9024)
    per = {
        key: (small[key] / small["tests"], large[key] / large["tests"])
        for key in ("plain_bytes", "gzip_bytes", "junit_bytes", "peak")
    }
    # Linear: the same bytes a test at 4x the tests (a term growing faster would show).
    for key in ("plain_bytes", "gzip_bytes", "junit_bytes"):
        one, four = per[key]
        assert abs(four - one) / one < 0.1, (key, per[key])
    # Memory: fixed costs weigh more in the smaller run, never less.
    assert per["peak"][1] <= per["peak"][0] * 1.05, per["peak"]
    # 1,024 x 8 full is written compressed, and under 300 MB (about 180 MB measured at
    # 256 x 8 by make bench: 43 B a test); plain JSON it would be about 2.5 GB.
    assert results_file(FULL_1024) == "results.json.gz"
    assert per["gzip_bytes"][1] * FULL_1024 < 300e6, per["gzip_bytes"]
    # Python's own allocations at their peak: the judged records (verify_record.Record,
    # about 0.45 kB a test), the heat-maps' cells and fixed costs, about 0.7 kB a test
    # at 48 x 8 (the plan is read once, test by test; report.html and junit.xml are
    # streamed to their files). It was 4.5 kB, ~20 GB at 1,024 x 8 full, when the judge
    # step held the plan, every outcome and the records as dicts at once. A regression
    # past 0.9 kB fails here: 1,024 x 8 full stays under 4 GB of Python's allocations.
    assert per["peak"][1] < 900, per["peak"]
    assert per["peak"][1] * FULL_1024 < 4e9, per["peak"]
    # junit.xml (about 190 bytes a test) is compressed where results.json is.
    assert junit_file(FULL_1024) == "junit.xml.gz"

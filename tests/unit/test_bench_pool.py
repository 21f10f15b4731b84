"""The client loop the benchmarks' worker processes share (`memory_bench.common.timed_loop`): what it
times and what it counts. No timing is asserted."""

from __future__ import annotations

import time

from memory_bench import common as c


def test_the_loop_times_each_successful_call_and_counts_the_ones_that_raise():
    # Given requests that alternately succeed and raise
    made, ran = [0], [0]

    def prepare():
        made[0] += 1
        n = made[0]

        def call():
            ran[0] += 1
            if n % 2 == 0:
                raise RuntimeError("refused")

        return call

    # When the loop runs for a moment from now
    lat, errors, cpu = c.timed_loop(prepare, time.time(), 0.05)
    # Then every call that ran is either a latency or an error, both kinds occurred,
    # and the request prepared when the time was up was not sent
    assert ran[0] == len(lat) + errors and made[0] == ran[0] + 1
    assert errors >= 1 and len(lat) >= 1 and abs(len(lat) - errors) <= 1
    assert all(x >= 0 for x in lat) and cpu >= 0


def test_a_loop_whose_time_is_over_sends_nothing():
    # Given a start an hour ago, for one second
    ran = []
    lat, errors, _ = c.timed_loop(lambda: lambda: ran.append(1), time.time() - 3600, 1.0)
    # Then nothing is sent
    assert (lat, errors, ran) == ([], 0, [])

"""What the test scripts share: JSON lines on stdout, a bounded receive loop, a sensor's
schedule of ticks, and DDS match counts."""

import json
import sys
import time


def emit(obj) -> None:
    """Prints one JSON line and flushes it, so that a test reading the pipe sees it at once."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def match_count(entity) -> int:
    """How many readers a cyclonedds DataWriter (or writers a DataReader) matches now.

    cyclonedds counts the matches, then lists them: a match made or lost between the two
    raises IndexError, so it is asked again (a few times; 0 if it keeps moving)."""
    ask = getattr(entity, "get_matched_subscriptions", None) or entity.get_matched_publications
    for _ in range(20):
        try:
            return len(ask())
        except IndexError:
            time.sleep(0.005)
    return 0


def receive(take, count: int, idle: float, timeout: float):
    """Yields what `take()` returns (a list of items, possibly empty) item by item, until `count`
    items came, `idle` seconds passed without one after the first, or `timeout` seconds in all.
    """
    started = time.monotonic()
    last = None
    received = 0
    while received < count:
        now = time.monotonic()
        if now - started > timeout or (last is not None and now - last > idle):
            return
        items = take()
        if not items:
            time.sleep(0.0005)
            continue
        last = time.monotonic()
        for item in items:
            received += 1
            yield item


class Ticks:
    """Ticks at `rate` per second on an absolute schedule (tick k at the start + k / rate), at
    most `count` of them, as a sensor driver keeps time: iterating waits for each tick's time
    and yields its number. When the caller falls a whole period behind (Python cannot keep
    up, or the machine stalled it), the ticks already past are skipped (counted in
    `skipped`) rather than sent in a burst that no subscriber's queue would hold."""

    def __init__(self, rate: float, count=None):
        self.period = 1.0 / rate
        self.count = count
        self.skipped = 0
        self.started = time.monotonic()

    def elapsed(self) -> float:
        """Seconds since the schedule started."""
        return time.monotonic() - self.started

    def __iter__(self):
        tick = 0
        while self.count is None or tick < self.count:
            delay = self.started + tick * self.period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            yield tick
            tick += 1
            due = int(self.elapsed() / self.period)
            if due > tick:
                self.skipped += (due if self.count is None else min(due, self.count)) - tick
                tick = due

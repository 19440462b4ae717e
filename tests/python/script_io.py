"""What the test scripts share: JSON lines on stdout, and a bounded receive loop."""

import json
import sys
import time


def emit(obj) -> None:
    """Prints one JSON line and flushes it, so that a test reading the pipe sees it at once."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


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

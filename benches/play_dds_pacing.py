"""Compares the arrivals at a DDS subscriber of a session played back by `rec play` with the
session's recording (scripts/bench-play-dds): the interval between consecutive arrivals
against the same interval in the recording, samples missing, and CPU."""
import glob, json, sys
from mcap.reader import make_reader
d = sys.argv[1]
recorded = []
for f in sorted(glob.glob(f"{d}/data/src/*.mcap")):
    with open(f, "rb") as s:
        recorded += [m.log_time / 1e9 for _, _, m in make_reader(s).iter_messages(log_time_order=False)]
lines = [json.loads(l) for l in open(f"{d}/received.jsonl") if l.strip()]
arrived = [l["t"] for l in lines if "t" in l]
n = min(len(recorded), len(arrived))
errs = sorted(abs((arrived[i] - arrived[i-1]) - (recorded[i] - recorded[i-1])) * 1e3 for i in range(1, n))
p = lambda q: errs[min(len(errs) - 1, int(q * len(errs)))]
u, s_, e = map(float, open(f"{d}/play.time").read().split())
ru, rs, re_ = map(float, open(f"{d}/ddsperf.time").read().split()[-3:])
print(f"recorded {len(recorded)}, received {len(arrived)}, interval error p50 {p(0.5):.3f} ms p99 {p(0.99):.3f} ms, "
      f"play cpu {u+s_:.2f} s over {e:.2f} s, ddsperf pub cpu {ru+rs:.2f} s over {re_:.2f} s")

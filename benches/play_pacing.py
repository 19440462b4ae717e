"""Compares a session played back by `rec play` (recorded again as session `copy`) with the
session it came from (`src`): per topic, the interval between consecutive messages in the
copy against the same interval in the source (scripts/bench-play)."""
import glob, json, sys, statistics
from mcap.reader import make_reader
d = sys.argv[1]
def times(session):
    out = {}
    for f in sorted(glob.glob(f"{d}/data/{session}/*.mcap")):
        with open(f, "rb") as s:
            for _, ch, m in make_reader(s).iter_messages(log_time_order=False):
                out.setdefault(ch.topic, []).append(m.log_time)
    return out
src, copy = times("src"), times("copy")
errs = []
for topic, ts in src.items():
    cs = copy.get(topic, [])
    n = min(len(ts), len(cs))
    for i in range(1, n):
        errs.append(abs((cs[i] - cs[i-1]) - (ts[i] - ts[i-1])) / 1e6)
errs.sort()
p = lambda q: errs[min(len(errs) - 1, int(q * len(errs)))]
report = json.load(open(f"{d}/play.json"))
sent = sum(t["sent"] for t in report["topics"]); late = sum(t["late"] for t in report["topics"])
missing = sum(len(v) for v in src.values()) - sum(len(v) for v in copy.values())
u, s_, e = map(float, open(f"{d}/play.time").read().split())
rows = [list(map(float, l.split())) for l in open(f"{d}/read.time") if l.strip()]
ru, rs = sum(r[0] for r in rows), sum(r[1] for r in rows)
size = sum(__import__("os").path.getsize(f) for f in glob.glob(f"{d}/data/src/*.mcap")) / 1e6
print(f"{size:.0f} MB, sent {sent}, late {late}, missing in copy {missing}, interval error p50 {p(0.5):.3f} ms p99 {p(0.99):.3f} ms, play cpu {u+s_:.2f} s over {e:.2f} s, plain read (dd) cpu {ru+rs:.2f} s")

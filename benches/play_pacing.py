"""Compares a session played back by `rec play` (recorded again as session `copy`) with the
session it came from (`src`) for scripts/bench-play: per topic, the interval between
consecutive messages in the copy against the same interval in the source; what the copy is
missing; rec play's report (sent, late, dropped, lateness quantiles of the worst topic),
throughput and CPU against a plain read (dd) of the same files."""
import glob, json, os, sys
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
p = lambda q: errs[min(len(errs) - 1, int(q * len(errs)))] if errs else float("nan")
report = json.load(open(f"{d}/play.json"))
topics = report["topics"]
sent = sum(t["sent"] for t in topics); late = sum(t["late"] for t in topics)
dropped = sum(t.get("dropped", 0) for t in topics)
worst = lambda key: max(t[key] for t in topics) / 1e3
missing = sum(len(v) for v in src.values()) - sum(len(v) for v in copy.values())
u, s_, e = map(float, open(f"{d}/play.time").read().split())
def timed(name):
    rows = [list(map(float, l.split())) for l in open(f"{d}/{name}") if l.strip()]
    return tuple(sum(r[i] for r in rows) for i in range(3))
ru, rs, re_ = timed("read.time")
ru6, rs6, re6 = timed("read6.time")
size = sum(os.path.getsize(f) for f in glob.glob(f"{d}/data/src/*.mcap")) / 1e6
span = max(v[-1] for v in src.values()) / 1e9 - min(v[0] for v in src.values()) / 1e9
print(f"{size:.0f} MB over {span:.1f} s ({size / span:.0f} MB/s recorded); "
      f"plain read (dd 1M): {size / re_:.0f} MB/s, cpu {ru + rs:.2f} s; (dd 6M): {size / re6:.0f} MB/s, cpu {ru6 + rs6:.2f} s; "
      f"rec play ({report.get('on_late', 'keep')}): {size / e:.0f} MB/s over {e:.2f} s, cpu {u + s_:.2f} s "
      f"({(u + s_) / max(ru + rs, 1e-3):.2f}x dd 1M, {(u + s_) / max(ru6 + rs6, 1e-3):.2f}x dd 6M), sent {sent}, late {late}, dropped {dropped}, "
      f"lateness p50/p99/max (worst topic) {worst('lateness_p50_us'):.2f}/{worst('lateness_p99_us'):.2f}/{worst('lateness_max_us'):.1f} ms, "
      f"stretch x{report.get('stretch_factor', 1):.3f}; "
      f"subscriber missing {missing} of {sum(len(v) for v in src.values())}, "
      f"interval error p50 {p(0.5):.3f} ms p99 {p(0.99):.3f} ms")

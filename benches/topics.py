"""What a topic costs recd (scripts/bench-topics): recd records N iceoryx2 topics of small
messages at RATE Hz each from recd-load, and, in the same round, one topic carrying the same
total rate (N x RATE Hz) as the reference. For each N and each round:

- CPU: recd's utime + stime from `rec start` to `rec stop`, per message written, and its
  ratio to the one-topic reference's of the same round;
- memory: recd's RssAnon (private memory: heap, stacks, the spill pool) while recording,
  sampled every 0.5 s, the highest taken; the heap a topic costs is that less the reference's
  highest, over N - 1 topics;
- after the stop: RssAnon once the session's file was finished, against recd's before the
  session (idle);
- messages sent, written and lost (counted) by topic count.

    .venv/bin/python benches/topics.py ROUNDS [--topics 100,500,2000] [--rate 10]
        [--seconds 20] [--notify] [--max-poll-interval 4ms] [--json OUT]

Run as root after `cargo build --release --workspace`.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from iceoryx2_files import remove_domain

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# RECD_BENCH_BIN names another folder holding recd, rec and recd-load, to compare builds.
RELEASE = os.environ.get("RECD_BENCH_BIN") or os.path.join(ROOT, "target", "release")
TICK = os.sysconf("SC_CLK_TCK")
# What recd.service grants (LimitNOFILE): iceoryx2 keeps a few descriptors per port, so 5,000
# topics need more than a login shell's limit, in recd and in recd-load alike.
OPEN_FILES = 65536


def raise_open_files():
    """In a child before exec: the open-file limit recd.service sets, or the hard limit
    where that is lower and cannot be raised (a container without CAP_SYS_RESOURCE)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def open_files(pid):
    """How many descriptors a process holds."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_of(pid):
    """utime + stime of a process in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_anon_mib(pid):
    """RssAnon of a process in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no RssAnon")


class Sampler:
    """Every 0.5 s until stopped: the highest RssAnon of a process, and the last CPU time
    seen of each of its threads (those of a session end with it)."""

    def __init__(self, pid):
        self.pid = pid
        self.peak = 0.0
        self.threads = {}
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopping.wait(0.5):
            self.peak = max(self.peak, rss_anon_mib(self.pid))
            task_dir = f"/proc/{self.pid}/task"
            for tid in os.listdir(task_dir):
                try:
                    with open(f"{task_dir}/{tid}/comm") as f:
                        comm = f.read().strip()
                    with open(f"{task_dir}/{tid}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                self.threads[(comm, tid)] = (int(fields[11]) + int(fields[12])) / TICK

    def stop(self):
        """The peak RssAnon (MiB) and the CPU seconds by thread name (those over 0.1 s)."""
        self.stopping.set()
        self.thread.join()
        by_name = {}
        for (comm, _), cpu in self.threads.items():
            by_name[comm] = by_name.get(comm, 0.0) + cpu
        return self.peak, {k: round(v, 2) for k, v in by_name.items() if v >= 0.1}


def rec(socket, *args, accept=(0,)):
    """rec's output; `accept` are the exit codes that are no failure (`rec stop` says 4
    for a topic with unknown loss, which the report shows)."""
    env = dict(os.environ, RECD_SOCKET=socket)
    out = subprocess.run([os.path.join(RELEASE, "rec"), *args], env=env,
                         capture_output=True, text=True, timeout=120)
    if out.returncode not in accept:
        raise RuntimeError(f"rec {' '.join(args)}: exit {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


def finished(socket):
    """True when every file of every session is finished (indexed, say)."""
    sessions = json.loads(rec(socket, "list", "--json"))
    return all(f["state"] not in ("recording", "complete")
               for s in sessions for f in s["files"])


def steady_cpu(pid, socket, topics, until):
    """recd's CPU seconds per second of recording once every topic is recorded, until
    `until` (monotonic): the cost without discovery's, and the descriptors recd then holds.
    None if the topics came too late."""
    def recorded():
        status = json.loads(rec(socket, "status", "t", "--json"))
        return len(status[0]["topics"]) >= topics
    try:
        wait_for(recorded, until - time.monotonic() - 3, "every topic")
    except RuntimeError:
        return None, None
    time.sleep(0.5)
    cpu0, t0 = cpu_of(pid), time.monotonic()
    descriptors = open_files(pid)
    time.sleep(max(until - t0, 1))
    return (cpu_of(pid) - cpu0) / (time.monotonic() - t0), descriptors


def one_run(topics, rate, seconds, tag, notify=False, max_poll_interval=None):
    """Records `topics` topics at `rate` Hz each for `seconds`; what it cost."""
    work = tempfile.mkdtemp(prefix="recd-topics-")
    prefix = f"bt{os.getpid()}{tag}_"
    config = os.path.join(work, "recd.toml")
    with open(config, "w") as f:
        f.write(f'[recording]\niceoryx2_prefix = "{prefix}"\n')
        if max_poll_interval:
            f.write(f'max_poll_interval = "{max_poll_interval}"\n')
    socket = os.path.join(work, "recd.sock")
    log = open(os.path.join(work, "recd.log"), "w")
    recd = subprocess.Popen(
        [os.path.join(RELEASE, "recd"), "--config", config, "--socket", socket,
         "--data-dir", os.path.join(work, "data"), "--state-dir", os.path.join(work, "state")],
        stdout=log, stderr=subprocess.STDOUT, preexec_fn=raise_open_files)
    try:
        wait_for(lambda: os.path.exists(socket), 10, "recd's socket")
        time.sleep(1)
        idle = rss_anon_mib(recd.pid)
        cpu_before = cpu_of(recd.pid)
        rec(socket, "start", "--name", "t")
        sampler = Sampler(recd.pid)
        started = time.monotonic()
        load = subprocess.Popen(
            [os.path.join(RELEASE, "recd-load"), "--iceoryx2-prefix", prefix, "--cameras", "0",
             "--small-topics", str(topics), "--small-rate", str(rate),
             "--duration", f"{seconds}s", "--name-prefix", "bench/", "--json"]
            + (["--notify"] if notify else []),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            preexec_fn=raise_open_files)
        steady, descriptors = steady_cpu(recd.pid, socket, topics, started + seconds - 1)
        out, _ = load.communicate(timeout=seconds + 300)
        sent = sum(t["sent"] for t in json.loads(out)["topics"])
        time.sleep(1)
        stop = json.loads(rec(socket, "stop", "t", "--json", accept=(0, 4)))[0]
        cpu = cpu_of(recd.pid) - cpu_before
        peak, threads = sampler.stop()
        wait_for(lambda: finished(socket), 120, "the file finished")
        time.sleep(1)
        after = rss_anon_mib(recd.pid)
    finally:
        recd.terminate()
        recd.wait(timeout=60)
        log.close()
        shutil.rmtree(work, ignore_errors=True)
        remove_domain(prefix)
    written = sum(t["written"] for t in stop["topics"])
    return {
        "topics": topics,
        "recorded_topics": len(stop["topics"]),
        "rate": rate,
        "sent": sent,
        "written": written,
        "lost": sum(t["lost"] for t in stop["topics"]),
        "unknown_loss": sum(1 for t in stop["topics"] if t["unknown_loss"]),
        "cpu_s": round(cpu, 2),
        "cpu_us_per_message": round(cpu / max(written, 1) * 1e6, 2),
        "cpu_by_thread": threads,
        "steady_cpu_us_per_message": steady and round(steady / (topics * rate) * 1e6, 2),
        "open_files": descriptors,
        "idle_mib": round(idle, 1),
        "recording_mib": round(peak, 1),
        "after_stop_mib": round(after, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", type=int)
    parser.add_argument("--topics", default="100,500,2000")
    parser.add_argument("--rate", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--notify", action="store_true",
                        help="publishers notify a same-named event service after each sample")
    parser.add_argument("--max-poll-interval",
                        help="recd's [recording] max_poll_interval (4ms by default)")
    parser.add_argument("--json")
    args = parser.parse_args()
    counts = [int(n) for n in args.topics.split(",")]
    runs = []
    for round_ in range(args.rounds):
        for n in counts:
            many = one_run(n, args.rate, args.seconds, f"m{round_}", args.notify,
                           args.max_poll_interval)
            one = one_run(1, n * args.rate, args.seconds, f"o{round_}", args.notify,
                          args.max_poll_interval)
            many["cpu_ratio"] = round(many["cpu_us_per_message"] / one["cpu_us_per_message"], 2)
            many["heap_kib_per_topic"] = round(
                (many["recording_mib"] - one["recording_mib"]) * 1024 / max(n - 1, 1), 1)
            many["reference"] = one
            runs.append(many)
            print(json.dumps(many), flush=True)
    print("\ntopics  cpu ratio min/median  us/msg (1 topic)  steady us/msg (1 topic)  "
          "heap KiB/topic min/median  after stop - idle MiB max  lost  unknown-loss topics")
    for n in counts:
        of_n = [r for r in runs if r["topics"] == n]
        ratios = sorted(r["cpu_ratio"] for r in of_n)
        heaps = sorted(r["heap_kib_per_topic"] for r in of_n)
        kept = max(r["after_stop_mib"] - r["idle_mib"] for r in of_n)
        us = statistics.median(r["cpu_us_per_message"] for r in of_n)
        us_one = statistics.median(r["reference"]["cpu_us_per_message"] for r in of_n)
        steady = [r["steady_cpu_us_per_message"] for r in of_n if r["steady_cpu_us_per_message"]]
        steady_one = [r["reference"]["steady_cpu_us_per_message"] for r in of_n
                      if r["reference"]["steady_cpu_us_per_message"]]
        steady_text = (f"{statistics.median(steady):.1f} ({statistics.median(steady_one):.1f})"
                       if steady and steady_one else "n/a")
        print(f"{n:6}  {ratios[0]:.2f} / {statistics.median(ratios):.2f}"
              f"          {us:.1f} ({us_one:.1f})"
              f"        {steady_text}"
              f"       {heaps[0]:.0f} / {statistics.median(heaps):.0f}"
              f"                  {kept:.1f}"
              f"             {sum(r['lost'] for r in of_n)}"
              f"     {sum(r['unknown_loss'] for r in of_n)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())

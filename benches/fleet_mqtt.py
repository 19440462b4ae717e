#!/usr/bin/env python3
"""What the fleet link ([fleet], MQTT 5) costs: bytes on the broker, request latency, CPU.

Runs Debian's Mosquitto (plain MQTT on 127.0.0.1, anonymous), the release binaries
target/release/{recd,rec,recd-load}, and Mosquitto's own clients (mosquitto_sub,
mosquitto_pub) as the cloud. Python stdlib only. Everything lives in a temp dir that is
removed at the end (--keep keeps it).

  1. bytes: one recd with [fleet] (holdings_period left at its default), a logger
     subscribed to `recd/#` counting topic + payload bytes of what recd publishes:
     idle with an empty catalog, while recording --topics small topics, idle again after
     that session stopped (its holdings now list every topic). Also the broker's own
     `$SYS/broker/bytes/received` over each window (wire bytes from all clients:
     MQTT framing, PINGREQs; the logger's pings are in it too, a few bytes).
  2. latency: --requests unsigned `status` requests, one at a time, each with an MQTT 5
     response topic; publish (the line handed to mosquitto_pub -l) -> reply (mosquitto_sub's
     receive timestamp), idle and while recording.
  3. cpu: recd's utime+stime (/proc/PID/stat) over --cpu-s while recording the same load,
     with [fleet] and without, alternating, --runs times each; with [fleet] also the
     `recd-fleet` thread's own share.

Usage: python3 benches/fleet_mqtt.py [--quick] [--json OUT] [...]   (see --help)
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from iceoryx2_files import remove_domain

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HZ = os.sysconf("SC_CLK_TCK")
VEHICLE = "car-1"
REPLIES = "recd/replies/bench"


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, condition, limit=30.0, every=0.05):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise RuntimeError(f"timed out waiting for {what}")


def cpu_ticks(pid, task=None):
    path = f"/proc/{pid}/task/{task}/stat" if task else f"/proc/{pid}/stat"
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def thread_named(pid, name):
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                if f.read().strip() == name:
                    return task
        except FileNotFoundError:
            pass
    return None


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(p / 100 * len(values)) - 1))]


class Bench:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin_dir)
        self.tmp = tempfile.mkdtemp(prefix="recd-fleet-bench-")
        self.port = free_port()
        self.procs = []
        self.iox2_prefix = f"recdfb{os.getpid()}_"

    # --- processes -----------------------------------------------------------------

    def spawn(self, argv, **kw):
        proc = subprocess.Popen(argv, **kw)
        self.procs.append(proc)
        return proc

    def stop(self, proc, sig=signal.SIGTERM, limit=40):
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(limit)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc in self.procs:
            self.procs.remove(proc)

    def cleanup(self):
        for proc in reversed(list(self.procs)):
            self.stop(proc, limit=10)
        remove_domain(self.iox2_prefix)
        if self.args.keep:
            log("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def start_broker(self):
        conf = os.path.join(self.tmp, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(
                f"user root\nlistener {self.port} 127.0.0.1\nallow_anonymous true\n"
                f"persistence false\nsys_interval 1\n"
                f"log_dest file {self.tmp}/mosquitto.log\n"
            )
        self.spawn(["/usr/sbin/mosquitto", "-c", conf])

        def up():
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return True
            except OSError:
                return False

        wait_for("mosquitto", up)

    def mqtt(self, tool, *args):
        return [f"/usr/bin/{tool}", "-V", "5", "-h", "127.0.0.1", "-p", str(self.port), *args]

    def sys_bytes_received(self):
        out = subprocess.run(
            self.mqtt("mosquitto_sub", "-t", "$SYS/broker/bytes/received", "-C", "1", "-W", "5"),
            capture_output=True, text=True,
        ).stdout
        return int(out.split()[0])

    def start_recd(self, name, fleet, vehicle=VEHICLE):
        root = os.path.join(self.tmp, name)
        os.makedirs(root, exist_ok=True)
        sock = os.path.join(root, "recd.sock")
        config = (
            f'socket = "{sock}"\ndata_dir = "{root}/data"\nstate_dir = "{root}/state"\n'
            f'stop_timeout = "30s"\n\n[recording]\niceoryx2_prefix = "{self.iox2_prefix}"\n'
            f'finish = "none"\n'
        )
        if fleet:
            config += (
                f'\n[fleet]\nbroker = "mqtt://127.0.0.1:{self.port}"\nvehicle = "{vehicle}"\n'
                f"allow_unsigned = true\n"
            )
        with open(os.path.join(root, "recd.toml"), "w") as f:
            f.write(config)
        logf = open(os.path.join(root, "recd.log"), "ab")
        proc = self.spawn(
            [f"{self.bin}/recd", "--config", f"{root}/recd.toml"],
            stdout=subprocess.DEVNULL, stderr=logf,
        )

        def listening():
            if proc.poll() is not None:
                raise RuntimeError(f"recd exited; see {root}/recd.log")
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(sock)
                s.close()
                return True
            except OSError:
                return False

        wait_for("recd's socket", listening)
        proc.sock = sock
        return proc

    def rec(self, recd, *args):
        out = subprocess.run(
            [f"{self.bin}/rec", *args], env={**os.environ, "RECD_SOCKET": recd.sock},
            capture_output=True, text=True,
        )
        if out.returncode != 0:
            raise RuntimeError(f"rec {' '.join(args)}: {out.stderr}")
        return out.stdout

    def start_recording(self, recd, seconds):
        self.rec(recd, "start", "--name", "drive", "--topic", "fb/*")
        a = self.args
        return self.spawn(
            [
                f"{self.bin}/recd-load", "--iceoryx2-prefix", self.iox2_prefix,
                "--name-prefix", "fb/", "--cameras", "0", "--small-topics", str(a.topics),
                "--small-rate", str(a.rate), "--small-size", str(a.size),
                "--duration", f"{int(seconds)}s", "--wait-subscribers", "1",
            ],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    # --- the logger of everything under recd/# ---------------------------------------

    def start_logger(self):
        self.log_path = os.path.join(self.tmp, "broker.log")
        self.log_file = open(self.log_path, "wb")
        self.spawn(
            ["stdbuf", "-oL"]
            + self.mqtt("mosquitto_sub", "-t", "recd/#", "-F", r"%U\t%r\t%l\t%t\t%p"),
            stdout=self.log_file,
        )
        time.sleep(0.5)

    def logged(self):
        self.log_file.flush()
        rows = []
        with open(self.log_path, "rb") as f:
            for line in f:
                parts = line.rstrip(b"\n").split(b"\t", 4)
                if len(parts) < 5:
                    continue
                ts, retained, length, topic, payload = parts
                rows.append(
                    (float(ts), retained == b"1", int(length), topic.decode(), payload)
                )
        return rows

    def window(self, start, end, vehicle=VEHICLE):
        """recd's own publishes (presence, holdings, replies) logged in [start, end)."""
        rows = [
            r for r in self.logged()
            if start <= r[0] < end and r[3].startswith(("recd/", ))
            and not r[3].endswith("/requests")
            and (r[3].startswith(f"recd/{vehicle}/") or r[3].startswith("recd/replies/"))
        ]
        out = {"seconds": end - start, "messages": len(rows),
               "bytes": sum(r[2] + len(r[3].encode()) for r in rows), "by_topic": {}}
        for r in rows:
            t = out["by_topic"].setdefault(r[3], {"messages": 0, "bytes": 0})
            t["messages"] += 1
            t["bytes"] += r[2] + len(r[3].encode())
        out["bytes_per_hour"] = round(out["bytes"] * 3600 / out["seconds"])
        return out

    def last_holdings(self, vehicle=VEHICLE):
        rows = [r for r in self.logged() if r[3] == f"recd/{vehicle}/holdings"]
        return rows[-1] if rows else None

    # --- phases ------------------------------------------------------------------------

    def measure_window(self, label, seconds):
        before = self.sys_bytes_received()
        start = time.time()
        time.sleep(seconds)
        end = time.time()
        time.sleep(1.5)  # $SYS is published every second
        after = self.sys_bytes_received()
        result = self.window(start, end)
        result["broker_bytes_received"] = after - before
        log(f"{label}: {result['messages']} messages, {result['bytes']} B in {seconds:.0f} s"
            f" -> {result['bytes_per_hour']} B/h; broker received {after - before} B")
        return result

    def latency(self, label, n):
        sub = self.spawn(
            ["stdbuf", "-oL"] + self.mqtt("mosquitto_sub", "-t", REPLIES, "-F", r"%U\t%p"),
            stdout=subprocess.PIPE,
        )
        time.sleep(0.5)
        pub = self.spawn(
            self.mqtt("mosquitto_pub", "-q", "1", "-l", "-t", f"recd/{VEHICLE}/requests",
                      "-D", "publish", "response-topic", REPLIES,
                      "-D", "publish", "correlation-data", "bench"),
            stdin=subprocess.PIPE,
        )
        time.sleep(0.5)
        times, sizes, states = [], [], {}
        for i in range(n):
            rid = f"lat-{label}-{os.getpid()}-{i}"
            request = json.dumps({"id": rid, "vehicle": VEHICLE, "issued_ns": time.time_ns(),
                                  "kind": "status"}, separators=(",", ":"))
            line = json.dumps({"request": request, "signature": None}) + "\n"
            sent = time.time()
            pub.stdin.write(line.encode())
            pub.stdin.flush()
            while True:
                reply_line = sub.stdout.readline()
                if not reply_line:
                    raise RuntimeError("reply subscriber ended")
                ts, payload = reply_line.rstrip(b"\n").split(b"\t", 1)
                reply = json.loads(payload)
                if reply.get("id") == rid:
                    break
            times.append((float(ts) - sent) * 1000)
            sizes.append(len(payload) + len(REPLIES))
            states[reply.get("state")] = states.get(reply.get("state"), 0) + 1
        self.stop(pub)
        self.stop(sub)
        result = {
            "requests": n, "states": states,
            "median_ms": round(statistics.median(times), 2),
            "p99_ms": round(pct(times, 99), 2), "min_ms": round(min(times), 2),
            "max_ms": round(max(times), 2), "reply_bytes": round(statistics.median(sizes)),
        }
        log(f"latency {label}: {result}")
        return result

    def run_bytes_and_latency(self):
        a = self.args
        out = {}
        recd = self.start_recd("fleet", fleet=True)
        wait_for("holdings", self.last_holdings)
        time.sleep(2)
        out["idle_empty"] = self.measure_window("idle, empty catalog", a.idle_s)
        out["latency_idle_empty"] = self.latency("idle", a.requests)

        load = self.start_recording(recd, a.record_s + 15 + a.requests * 0.1 + 60)
        time.sleep(10)  # the load is found and recorded
        out["recording"] = self.measure_window(f"recording {a.topics} topics", a.record_s)
        recording = [
            r for r in self.logged() if r[3] == f"recd/{VEHICLE}/holdings"
            and any(s.get("recording") for s in json.loads(r[4]).get("sessions", []))
        ]
        out["holdings_recording_bytes"] = (
            recording[-1][2] + len(recording[-1][3]) if recording else None)
        out["latency_recording"] = self.latency("recording", a.requests)
        self.rec(recd, "stop", "drive")
        self.stop(load, signal.SIGINT)

        def stopped_holdings():
            h = self.last_holdings()
            if not h:
                return None
            sessions = json.loads(h[4]).get("sessions", [])
            return h if any(len(s.get("topics", [])) >= a.topics for s in sessions) else None

        h = wait_for("holdings with every topic", stopped_holdings, limit=a.holdings_wait)
        out["holdings_stopped_bytes"] = h[2] + len(h[3])
        out["holdings_stopped_topics"] = sum(
            len(s.get("topics", [])) for s in json.loads(h[4])["sessions"])
        log(f"holdings with a stopped {a.topics}-topic session: {out['holdings_stopped_bytes']} B")
        time.sleep(2)
        out["idle_after"] = self.measure_window("idle, one stopped session", a.idle_s)
        out["latency_idle_after"] = self.latency("idle-after", a.requests)
        online = [r for r in self.logged() if r[3] == f"recd/{VEHICLE}/online"]
        out["presence_bytes"] = online[0][2] + len(online[0][3]) if online else None
        self.stop(recd)
        return out

    def run_cpu(self):
        a = self.args
        runs = {"with_fleet": [], "without_fleet": [], "fleet_thread": []}
        for i in range(a.runs):
            for fleet in ([False, True] if i % 2 == 0 else [True, False]):
                name = f"cpu{i}{'f' if fleet else 'n'}"
                recd = self.start_recd(name, fleet=fleet, vehicle=f"cpu-{i}")
                load = self.start_recording(recd, a.warmup_s + a.cpu_s + 15)
                time.sleep(a.warmup_s)
                task = thread_named(recd.pid, "recd-fleet") if fleet else None
                t0, c0 = time.monotonic(), cpu_ticks(recd.pid)
                f0 = cpu_ticks(recd.pid, task) if task else 0
                time.sleep(a.cpu_s)
                c1, t1 = cpu_ticks(recd.pid), time.monotonic()
                f1 = cpu_ticks(recd.pid, task) if task else 0
                cores = (c1 - c0) / HZ / (t1 - t0)
                runs["with_fleet" if fleet else "without_fleet"].append(cores)
                if task:
                    runs["fleet_thread"].append((f1 - f0) / HZ / (t1 - t0))
                log(f"cpu run {i} fleet={fleet}: recd {cores * 100:.2f} % of a core"
                    + (f", recd-fleet thread {(f1 - f0) / HZ / (t1 - t0) * 100:.3f} %" if task else ""))
                self.rec(recd, "stop", "drive")
                self.stop(load, signal.SIGINT)
                self.stop(recd)
        summary = {}
        for key, values in runs.items():
            summary[key] = {"runs_pct": [round(v * 100, 3) for v in values],
                            "min_pct": round(min(values) * 100, 3),
                            "median_pct": round(statistics.median(values) * 100, 3)}
        summary["fleet_share_median_pct"] = round(
            summary["with_fleet"]["median_pct"] - summary["without_fleet"]["median_pct"], 3)
        summary["fleet_share_min_pct"] = round(
            summary["with_fleet"]["min_pct"] - summary["without_fleet"]["min_pct"], 3)
        return summary


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin-dir", default=os.path.join(REPO, "target", "release"))
    p.add_argument("--topics", type=int, default=200)
    p.add_argument("--rate", type=int, default=10, help="Hz per topic")
    p.add_argument("--size", type=int, default=100, help="bytes per message")
    p.add_argument("--idle-s", type=float, default=180)
    p.add_argument("--record-s", type=float, default=180)
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--holdings-wait", type=float, default=75,
                   help="how long to wait for the holdings after a stop (> holdings_period)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cpu-s", type=float, default=60)
    p.add_argument("--warmup-s", type=float, default=10)
    p.add_argument("--skip", action="append", default=[], choices=["bytes", "cpu"])
    p.add_argument("--quick", action="store_true", help="short windows, to try the harness")
    p.add_argument("--json", help="write the results here too")
    p.add_argument("--keep", action="store_true", help="keep the temp dir")
    a = p.parse_args()
    if a.quick:
        a.idle_s, a.record_s, a.requests, a.runs, a.cpu_s = 10, 10, 20, 1, 10
    bench = Bench(a)
    results = {"topics": a.topics, "rate_hz": a.rate, "size_bytes": a.size}
    try:
        bench.start_broker()
        bench.start_logger()
        if "bytes" not in a.skip:
            results.update(bench.run_bytes_and_latency())
        if "cpu" not in a.skip:
            results["cpu"] = bench.run_cpu()
    finally:
        bench.cleanup()
    text = json.dumps(results, indent=1)
    print(text)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()

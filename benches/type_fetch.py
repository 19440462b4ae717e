"""What asking the network for message definitions costs recd (scripts/bench-type-fetch):
recd records a real ROS 2 node (rclpy over rmw_fastrtps_cpp, tests/python/rclpy_types_node.py)
publishing small messages on several topics, with no .msg files anywhere, once with
`dds_fetch_types = true` and once with `false`, alternately, ROUNDS times.

For each run: recd's CPU over the session (utime + stime of the whole process, from before
`rec start` to after `rec stop`), that of its DDS receive thread, discovery thread and type
fetching thread (sampled from /proc/PID/task while the session runs, as threads end at the
stop), the messages recorded and the topics recorded without a definition.

    .venv/bin/python benches/type_fetch.py ROUNDS [--topics 6] [--rate 300] [--seconds 15]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, "target", "release")
PYTHON = sys.executable
TICK = os.sysconf("SC_CLK_TCK")
KINDS = ["string", "pose", "imu"]
THREADS = {"recd-dds-receiv": "receive", "recd-dds-discov": "discovery", "recd-dds-types": "fetch"}
DOMAIN = 97


def cpu_of(stat_path):
    """utime + stime in seconds, from a /proc stat file (None once it is gone)."""
    try:
        with open(stat_path) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


class ThreadSampler:
    """Keeps the last CPU time seen of each of recd's named threads, every 100 ms."""

    def __init__(self, pid):
        self.pid = pid
        self.last = {}
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopping.wait(0.1):
            self.sample()

    def sample(self):
        task_dir = f"/proc/{self.pid}/task"
        for tid in os.listdir(task_dir) if os.path.isdir(task_dir) else []:
            try:
                with open(f"{task_dir}/{tid}/comm") as f:
                    comm = f.read().strip()
            except OSError:
                continue
            cpu = cpu_of(f"{task_dir}/{tid}/stat")
            if cpu is not None:
                self.last[(comm, tid)] = cpu

    def stop(self):
        self.stopping.set()
        self.thread.join()
        totals = {name: 0.0 for name in THREADS.values()}
        by_name = {}
        for (comm, _), cpu in self.last.items():
            if comm in THREADS:
                totals[THREADS[comm]] += cpu
            by_name[comm] = round(by_name.get(comm, 0.0) + cpu, 2)
        return totals, by_name


def rec(socket, *args):
    out = subprocess.run([f"{RELEASE}/rec", *args, "--json"], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ, RECD_SOCKET=socket))
    if out.returncode != 0:
        sys.exit(f"rec {' '.join(args)} failed: {out.stderr}")
    return json.loads(out.stdout)


def one_run(work, fetch, args):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    config = os.path.join(work, "recd.toml")
    with open(config, "w") as f:
        f.write("[recording]\n")
        f.write(f'iceoryx2_prefix = "btf{os.getpid()}_"\n')
        f.write('dds_interfaces = ["127.0.0.1"]\n')
        f.write(f"dds_fetch_types = {'true' if fetch else 'false'}\n")
    socket = os.path.join(work, "s.sock")
    env = dict(os.environ, AMENT_PREFIX_PATH="")
    log = open(os.path.join(work, "recd.log"), "w")
    recd = subprocess.Popen([f"{RELEASE}/recd", "--config", config, "--socket", socket,
                             "--data-dir", f"{work}/data", "--state-dir", f"{work}/state"],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(socket) and time.monotonic() < deadline:
            time.sleep(0.05)
        topics = [f"/t{i}" for i in range(args.topics)]
        before = cpu_of(f"/proc/{recd.pid}/stat")
        sampler = ThreadSampler(recd.pid)
        start = ["start", "--name", "fetch", "--no-iceoryx2", "--dds-domain", str(DOMAIN)]
        for topic in topics:
            start += ["--topic", topic]
        rec(socket, *start)
        node = [PYTHON, os.path.join(ROOT, "tests/python/rclpy_types_node.py"),
                "--domain", str(DOMAIN), "--node", "bench", "--count",
                str(int(args.rate * args.seconds)), "--rate", str(args.rate), "--linger", "1",
                "--wait-match", "20"]
        for i, topic in enumerate(topics):
            node += ["--topic", f"{topic}:{KINDS[i % len(KINDS)]}"]
        published = subprocess.run(node, capture_output=True, text=True, timeout=args.seconds * 4 + 60,
                                   env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests/python")))
        done = [json.loads(l) for l in published.stdout.splitlines() if '"done"' in l]
        if not done or not done[0]["matched"]:
            sys.exit(f"the node did not publish to recd: {published.stdout}{published.stderr}")
        time.sleep(0.5)
        threads, by_name = sampler.stop()
        stopped = rec(socket, "stop", "fetch")
        after = cpu_of(f"/proc/{recd.pid}/stat")
        report = stopped[0] if isinstance(stopped, list) else stopped
        files = [f["path"] for f in report["files"]]
        recorded, undefined = 0, 0
        for path in files:
            info = subprocess.run([f"{RELEASE}/rec", "info", path, "--json"], capture_output=True,
                                  text=True, timeout=60)
            described = json.loads(info.stdout)
            for file in described if isinstance(described, list) else [described]:
                recorded += file["message_count"]
                undefined += sum(1 for c in file["channels"] if c["schema_bytes"] == 0)
        return {"fetch": fetch, "cpu_s": after - before, **{f"{k}_s": v for k, v in threads.items()},
                "sent": sum(done[0]["sent"].values()), "recorded": recorded, "undefined": undefined,
                "threads": by_name}
    finally:
        recd.terminate()
        recd.wait(timeout=30)
        log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", type=int)
    parser.add_argument("--topics", type=int, default=6)
    parser.add_argument("--rate", type=float, default=300.0)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--work", default="/tmp/recd-bench-type-fetch")
    args = parser.parse_args()
    runs = []
    for round_ in range(args.rounds):
        for fetch in (True, False) if round_ % 2 == 0 else (False, True):
            run = one_run(args.work, fetch, args)
            print(json.dumps(run), flush=True)
            runs.append(run)
    for fetch in (True, False):
        mine = [r for r in runs if r["fetch"] == fetch]
        line = f"fetch {'on ' if fetch else 'off'}:"
        for key in ("cpu_s", "receive_s", "discovery_s", "fetch_s"):
            values = sorted(r[key] for r in mine)
            line += f" {key} min {values[0]:.2f} median {statistics.median(values):.2f};"
        line += f" recorded {[r['recorded'] for r in mine]} of {[r['sent'] for r in mine]},"
        line += f" without definitions {[r['undefined'] for r in mine]}"
        print(line)


if __name__ == "__main__":
    main()

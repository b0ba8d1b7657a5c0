#!/usr/bin/env python3
"""hiops kv serve against redis-server under redis-benchmark, alternating.

Each pair runs the same redis-benchmark command against hiops and against
redis-server, in turn, for --pairs pairs; prints requests per second and
p50/p99 per round, and the median hiops/redis ratio. Configurations:

  memory   hiops --durability buffered  vs  redis --save '' --appendonly no
  durable  hiops --durability sync      vs  redis --appendonly yes --appendfsync always

and the idle-clients check: N idle connections to each server, then each
server's resident memory and thread count from /proc.

  python3 bench/kv_vs_redis.py --pairs 5 --clients 50
  python3 bench/kv_vs_redis.py --pairs 5 --clients 1000
  python3 bench/kv_vs_redis.py --idle 5000
  python3 bench/kv_vs_redis.py --model threads   # the thread-per-connection server
  python3 bench/kv_vs_redis.py --workers 1       # one runtime thread (the client keeps a CPU)

Needs redis-server and redis-benchmark (apt-get install redis-server).
"""
import argparse
import csv
import io
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

EXE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "hiops")


def wait_port(port, proc):
    for _ in range(300):
        if proc.poll() is not None:
            sys.exit(f"server on port {port} exited: {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {port}")


def start_hiops(a, durable, port, tmp):
    path = os.path.join(tmp, "kv.dat")
    cmd = [EXE, "kv", "serve", "--path", path, "--size", "2g", "--port", str(port),
           "--durability", "sync" if durable else "buffered", "--model", a.model,
           "--max-clients", "100000"] + (["--workers", str(a.workers)] if a.workers else [])
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, p)
    return p


def start_redis(durable, port, tmp):
    cmd = ["redis-server", "--port", str(port), "--save", "", "--dir", tmp,
           "--maxclients", "100000"]
    cmd += ["--appendonly", "yes", "--appendfsync", "always"] if durable else ["--appendonly", "no"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, p)
    return p


def bench(port, a):
    cmd = ["redis-benchmark", "-p", str(port), "-t", "set,get", "-n", str(a.requests),
           "-c", str(a.clients), "-d", "100", "-r", str(a.keys), "--csv"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = {r["test"]: r for r in csv.DictReader(io.StringIO(out))}
    return {t: (float(rows[t]["rps"]), float(rows[t]["p50_latency_ms"]),
                float(rows[t]["p99_latency_ms"])) for t in ("SET", "GET")}


def proc_status(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def idle_check(a, tmp):
    """N idle clients on each server: resident MiB and threads."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    for name, start in (("hiops", lambda p: start_hiops(a, False, p, tmp)),
                        ("redis", lambda p: start_redis(False, p, tmp))):
        port = 7400 if name == "hiops" else 7401
        proc = start(port)
        began = time.time()
        socks = []
        for _ in range(a.idle):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"PING\r\n")
            socks.append(s)
        for s in socks:
            s.recv(16)
        took = time.time() - began
        rss = proc_status(proc.pid, "VmRSS") / 1024
        threads = proc_status(proc.pid, "Threads")
        print(f"{name}: {a.idle} idle clients in {took:.1f} s: {rss:.0f} MiB resident, {threads} threads")
        for s in socks:
            s.close()
        proc.terminate()
        proc.wait()


def pairs(a, durable, tmp):
    label = "durable" if durable else "memory"
    ratios = {"SET": [], "GET": []}
    print(f"\n{label}: redis-benchmark -t set,get -n {a.requests} -c {a.clients} -d 100 -r {a.keys}")
    print("| round | hiops SET/s | redis SET/s | hiops GET/s | redis GET/s | hiops GET p50/p99 ms | redis GET p50/p99 ms |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for i in range(a.pairs):
        res = {}
        order = ("hiops", "redis") if i % 2 == 0 else ("redis", "hiops")
        for who in order:
            d = tempfile.mkdtemp(dir=tmp)
            proc = start_hiops(a, durable, 7410, d) if who == "hiops" else start_redis(durable, 7411, d)
            try:
                res[who] = bench(7410 if who == "hiops" else 7411, a)
            finally:
                proc.terminate()
                proc.wait()
                shutil.rmtree(d, ignore_errors=True)
        h, r = res["hiops"], res["redis"]
        for t in ratios:
            ratios[t].append(h[t][0] / r[t][0])
        print(f"| {i + 1} | {h['SET'][0]:,.0f} | {r['SET'][0]:,.0f} | {h['GET'][0]:,.0f} | {r['GET'][0]:,.0f} "
              f"| {h['GET'][1]:.3f}/{h['GET'][2]:.3f} | {r['GET'][1]:.3f}/{r['GET'][2]:.3f} |")
    print(f"median hiops/redis ({a.model} model, workers {a.workers or 'per CPU'}, {label}): SET {statistics.median(ratios['SET']):.2f}, "
          f"GET {statistics.median(ratios['GET']):.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--keys", type=int, default=100000, help="redis-benchmark -r: random keys")
    ap.add_argument("--model", default="tasks", choices=["tasks", "threads"])
    ap.add_argument("--workers", type=int, default=0,
                    help="hiops' runtime threads (0: one per CPU); 1 leaves redis-benchmark a CPU, as single-threaded redis does")
    ap.add_argument("--idle", type=int, default=0, help="only the idle-clients check, with N clients")
    ap.add_argument("--only", choices=["memory", "durable"], help="one configuration only")
    a = ap.parse_args()
    for tool in ("redis-server", "redis-benchmark"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: apt-get install redis-server")
    if not os.path.exists(EXE):
        subprocess.run(["cargo", "build", "--release", "-q"], check=True,
                       cwd=os.path.join(os.path.dirname(EXE), "..", ".."))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        if a.idle:
            return idle_check(a, tmp)
        for durable in (False, True):
            if a.only and a.only != ("durable" if durable else "memory"):
                continue
            pairs(a, durable, tmp)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How much of Fig 10's fall from 128 to 1,024 clients is the server's.

The same YCSB-C task clients (`hiops kv ycsb --server --tasks`) against
`hiops kv serve --model tasks` (RAM cache off: every GET reads the store's
file) and against redis-server (RAM), at --low and --high clients,
alternating servers and client counts for --pairs rounds. Each server's
high/low throughput ratio is printed per round, and the medians: if
redis-server, which holds its data in RAM and is not on hiops' I/O path,
falls as far as hiops, the fall belongs to the clients and the machine
they share (loopback TCP, the 2 CPUs), not to the server.

  python3 bench/kv_clients_scaling.py --store /var/tmp/hk/kv.dat --records 200000

The store must hold --records YCSB records (as `hiops kv fig10` or
`hiops kv ycsb` leave it); redis-server is loaded here.
Needs redis-server (apt-get install redis-server).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kv_vs_redis import EXE, wait_port  # noqa: E402


def ycsb(port, clients, a, seed, load=False):
    cmd = [EXE, "kv", "ycsb", "--server", f"127.0.0.1:{port}", "--workload", "C",
           "--records", str(a.records), "--clients", str(clients), "--seed", str(seed),
           "--tasks", "--output-format", "json"]
    if load:
        cmd += ["--operations", "1"]
    else:
        cmd += ["--no-load", "--operations", str(2**64 - 1), "--time", f"{a.seconds}s"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["phases"][-1]["throughput"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True, help="a loaded hiops kv store (file)")
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--low", type=int, default=128)
    ap.add_argument("--high", type=int, default=1024)
    a = ap.parse_args()
    if not shutil.which("redis-server"):
        sys.exit("redis-server not found: apt-get install redis-server")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        hiops = subprocess.Popen([EXE, "kv", "serve", "--path", a.store, "--port", "7440",
                                  "--model", "tasks", "--cache-size", "0", "--max-clients", "10000"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        redis = subprocess.Popen(["redis-server", "--port", "7441", "--save", "", "--appendonly", "no",
                                  "--dir", tmp, "--maxclients", "10000"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(7440, hiops)
            wait_port(7441, redis)
            ycsb(7441, 16, a, 0, load=True)
            ratios = {"hiops": [], "redis": []}
            print(f"| round | server | {a.low} clients ops/s | {a.high} clients ops/s | {a.high}/{a.low} |")
            print("| ---: | --- | ---: | ---: | ---: |")
            for i in range(a.pairs):
                servers = [("hiops", 7440), ("redis", 7441)]
                for name, port in servers if i % 2 == 0 else servers[::-1]:
                    counts = (a.low, a.high) if i % 2 == 0 else (a.high, a.low)
                    got = {c: ycsb(port, c, a, i + 1) for c in counts}
                    r = got[a.high] / got[a.low]
                    ratios[name].append(r)
                    print(f"| {i + 1} | {name} | {got[a.low]:,.0f} | {got[a.high]:,.0f} | {r:.2f} |")
            h, r = statistics.median(ratios["hiops"]), statistics.median(ratios["redis"])
            print(f"median {a.high}/{a.low}: hiops {h:.2f}, redis-server {r:.2f}; hiops/redis {h / r:.2f}")
        finally:
            for p in (hiops, redis):
                p.terminate()
                p.wait()


if __name__ == "__main__":
    main()

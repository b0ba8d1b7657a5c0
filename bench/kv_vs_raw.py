#!/usr/bin/env python3
"""YCSB-C through the key-value store against raw 4 KiB random reads of the
same file, at the same concurrency, alternating A and B for several pairs.

One GET is one device read of the pages holding the record (a 1000-byte
record spans one or two 4 KiB pages), so the store's ceiling is the raw
random-read IOPS that `hiops run` measures with the same strategy and the
same number of threads. Prints both per pair and the median ratio.

  python3 bench/kv_vs_raw.py --clients 32 --pairs 5
  python3 bench/kv_vs_raw.py --clients 128 --pairs 5 --tasks   # the task path:
      # YCSB-C with `--tasks` against `hiops run --strategy=coop --tasks=N`
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

EXE = os.path.join(os.path.dirname(__file__), "..", "target", "release", "hiops")


def ycsb(path, a):
    out = subprocess.run(
        [EXE, "kv", "ycsb", "--path", path, "--no-load", "--workload", "C",
         "--records", str(a.records), "--operations", str(10**12), "--time", f"{a.runtime}s",
         "--clients", str(a.clients), "--strategy", a.strategy, "--output-format", "json",
         # Every GET from the device, as the raw reads are.
         "--cache-size", "0"]
        + (["--tasks"] if a.tasks else []),
        check=True, capture_output=True, text=True).stdout
    run = json.loads(out)["phases"][0]
    read = run["ops"][0]
    return run["throughput"], read["p50_us"], read["p99_us"]


def raw(path, a, size):
    out = subprocess.run(
        [EXE, "run", f"--filename={path}", "--rw=randread", "--bs=4k", "--direct=1",
         f"--strategy={a.strategy}", f"--size={size}"]
        + ([f"--tasks={a.clients}"] if a.tasks else [f"--numjobs={a.clients}"])
        + [
         f"--runtime={a.runtime}", "--time_based", "--group_reporting",
         "--output-format=json", "--no-progress"],
        check=True, capture_output=True, text=True).stdout
    job = json.loads(out)["jobs"][0]["read"]
    return job["iops"], job["clat_ns"]["percentile"]["50.000000"] / 1e3, \
        job["clat_ns"]["percentile"]["99.000000"] / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--strategy", default="coop")
    ap.add_argument("--tasks", action="store_true", help="clients as tasks on the task path, both sides")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    a = ap.parse_args()
    path = os.path.join(a.dir, "hiops-kv-bench.dat")
    if os.path.exists(path):
        os.remove(path)
    subprocess.run([EXE, "kv", "ycsb", "--path", path, "--size", "2g", "--workload", "C",
                    "--records", str(a.records), "--operations", "1", "--clients", "32"],
                   check=True, capture_output=True)
    # Raw reads over the span the records occupy (blocks after the first).
    used = (a.records * 1056 // (1 << 20) + 2) << 20
    ratios = []
    who = "tasks (task path)" if a.tasks else f"threads, strategy {a.strategy}"
    print(f"YCSB-C vs raw 4 KiB random reads, {a.clients} {who}, "
          f"{a.records} records, {a.runtime} s each")
    print("| pair | YCSB-C ops/s | p50/p99 us | raw IOPS | p50/p99 us | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for i in range(a.pairs):
        y = ycsb(path, a)
        r = raw(path, a, used)
        ratios.append(y[0] / r[0])
        print(f"| {i + 1} | {y[0]:.0f} | {y[1]:.0f}/{y[2]:.0f} | {r[0]:.0f} | {r[1]:.0f}/{r[2]:.0f} | {y[0] / r[0]:.2f} |")
    print(f"median ratio YCSB-C / raw: {statistics.median(ratios):.2f}")
    os.remove(path)


if __name__ == "__main__":
    main()

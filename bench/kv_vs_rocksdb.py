#!/usr/bin/env python3
"""YCSB A and C on hiops kv against RocksDB's db_bench, alternating, in one run.

Same record count, ~1000-byte values, same thread count, both on files of
the same disk with direct reads and the same small RAM cache (8 MiB: hiops'
record cache, RocksDB's block cache). Workload C is 100% reads; A is 50% reads,
50% updates, run twice: durable writes (hiops --durability sync, db_bench
--sync=1) and buffered (hiops --durability buffered, db_bench --sync=0).

RocksDB is filled, flushed and compacted first, so reads come from its
files, not its memtable. Differences that stay: YCSB picks keys by scrambled zipfian (hiops), db_bench
uniformly; hiops writes a whole record per update, as YCSB does.

  python3 bench/kv_vs_rocksdb.py --records 200000 --threads 32 --pairs 3 --time 10
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile


# Both stores get the same RAM for what they read: without it hiops' cache
# (by default 1/16 of the memory) would hold the whole data set.
CACHE_BYTES = 8 << 20


def hiops_bin():
    if os.environ.get("HIOPS_BIN"):
        return os.environ["HIOPS_BIN"]
    here = os.path.dirname(os.path.abspath(__file__))
    exe = os.path.join(here, "..", "target", "release", "hiops")
    if not os.path.exists(exe):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=os.path.join(here, ".."), check=True)
    return exe


def hiops_run(exe, path, workload, a, durability, load):
    cmd = [exe, "kv", "ycsb", "--path", path, "--size", a.store_size, "--workload", workload,
           "--records", str(a.records), "--clients", str(a.threads), "--time", f"{a.time}s",
           "--operations", str(10**12), "--durability", durability, "--cache-size", str(CACHE_BYTES),
           "--output-format", "json"]
    if not load:
        cmd.append("--no-load")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: {out.stderr.strip()}")
    doc = json.loads(out.stdout)
    run = [p for p in doc["phases"] if p["phase"] == "run"][0]
    return run["throughput"]


def db_bench(db, a, benchmark, extra):
    cmd = ["db_bench", f"--db={db}", f"--num={a.records}", "--value_size=1000", "--key_size=24",
           "--use_direct_reads=1", "--use_direct_io_for_flush_and_compaction=1",
           f"--cache_size={CACHE_BYTES}", "--compression_type=none", f"--benchmarks={benchmark}"] + extra
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: {out.stderr.strip()}")
    last = benchmark.split(",")[0]
    m = re.search(rf"^{last}\s*:\s*[\d.]+ micros/op (\d+) ops/sec", out.stdout, re.M)
    if not m:
        sys.exit(f"no result in db_bench output:\n{out.stdout}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--threads", type=int, default=32)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--store-size", default="2g")
    a = ap.parse_args()
    if not shutil.which("db_bench"):
        sys.exit("db_bench is missing: apt-get install rocksdb-tools")
    exe = hiops_bin()
    tmp = tempfile.mkdtemp(dir=os.environ.get("HIOPS_BENCH_DIR", "/var/tmp"))
    store = os.path.join(tmp, "kv.dat")
    db = os.path.join(tmp, "rocksdb")
    try:
        print("loading both stores", file=sys.stderr)
        hiops_run(exe, store, "C", argparse.Namespace(**{**vars(a), "time": 1}), "sync", True)
        db_bench(db, a, "fillrandom,flush,compactall", ["--threads=1"])
        common = [f"--threads={a.threads}", f"--duration={a.time}", "--use_existing_db=1"]
        cases = [
            ("C (100% read)", lambda: hiops_run(exe, store, "C", a, "sync", False),
             lambda: db_bench(db, a, "readrandom", common)),
            ("A (50/50), durable", lambda: hiops_run(exe, store, "A", a, "sync", False),
             lambda: db_bench(db, a, "readrandomwriterandom", common + ["--readwritepercent=50", "--sync=1"])),
            ("A (50/50), buffered", lambda: hiops_run(exe, store, "A", a, "buffered", False),
             lambda: db_bench(db, a, "readrandomwriterandom", common + ["--readwritepercent=50", "--sync=0"])),
        ]
        rows = []
        for name, h, r in cases:
            hs, rs = [], []
            for i in range(a.pairs):
                # Alternate which goes first.
                if i % 2 == 0:
                    hs.append(h()); rs.append(r())
                else:
                    rs.append(r()); hs.append(h())
                print(f"{name} pair {i + 1}: hiops {hs[-1]:.0f} ops/s, RocksDB {rs[-1]:.0f} ops/s", file=sys.stderr)
            ratio = statistics.median(x / y for x, y in zip(hs, rs))
            rows.append((name, statistics.median(hs), statistics.median(rs), ratio))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{a.records} records x ~1000 B, {a.threads} threads, {a.time} s per run, {a.pairs} alternating pairs, medians")
    print("| workload | hiops kv ops/s | RocksDB ops/s | hiops / RocksDB |")
    print("| --- | ---: | ---: | ---: |")
    for name, h, r, ratio in rows:
        print(f"| {name} | {h:.0f} | {r:.0f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()

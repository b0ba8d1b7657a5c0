#!/usr/bin/env python3
"""HIOPS path strategies side by side, in one run.

Runs `hiops run --strategy=S` for every strategy, in rounds whose order
rotates, so a noisy neighbour hurts every strategy alike; prints the median
IOPS, machine clocks per I/O, context switches per I/O and hand-off delay of
each strategy, and its median per-round ratio against `pread`.

  python3 bench/path_strategies.py --threads 128 --rounds 5
  python3 bench/path_strategies.py --threads 1 --rounds 5
  python3 bench/path_strategies.py --zram --threads 128   # needs root

"tasks" is the task path (`--strategy=coop --tasks=N`, N = --threads).
"coop:issue", "coop:lazy" and "coop:all" are coop with only some of its parts
on (`--coop_parts`, HIOPS Fig 8's ablation); "coop:own" and "coop:doorbell"
choose how coop's threads sleep (`--coop_wait`); any other "name=value" part
is passed as `--name=value` to that strategy alone ("coop:rings=128"):

  python3 bench/path_strategies.py --threads 128 --rounds 5 \
      --strategies pread,coop:issue,coop:lazy,coop:all
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

STRATEGIES = ["pread", "completion-thread", "per-thread-ring", "coop", "coop-shared", "poll", "hybrid", "tasks"]


def hiops_bin():
    here = os.path.dirname(os.path.abspath(__file__))
    exe = os.path.join(here, "..", "target", "release", "hiops")
    if not os.path.exists(exe):
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=os.path.join(here, ".."), check=True)
    return exe


def make_zram(size="1G"):
    n = open("/sys/class/zram-control/hot_add").read().strip()
    open(f"/sys/block/zram{n}/disksize", "w").write(size)
    return n


def one(exe, target, args, strategy, extra):
    extra = list(extra)
    strategy, *parts = strategy.split(":")
    for part in parts:
        if part in ("own", "doorbell"):
            extra.append(f"--coop_wait={part}")
        elif "=" in part:
            extra.append(f"--{part}")  # e.g. coop:rings=128
        else:
            extra.append(f"--coop_parts={part}")
    if strategy == "tasks":
        # The task path: as many tasks as the others have threads.
        n = next(x for x in args if x.startswith("--numjobs=")).split("=")[1]
        args = [x for x in args if not x.startswith("--numjobs=")] + [f"--tasks={n}"]
        strategy = "coop"
    cmd = [exe, "run", f"--filename={target}", f"--strategy={strategy}",
           "--output-format=json", "--no-progress"] + args + extra
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {out.stderr.strip()}")
    d = json.loads(out.stdout)
    j = d["jobs"][0]
    p = j["hiops"]["path"] or {}
    h = p.get("handoff_ns") or {}
    c = p.get("completion_pass_ns") or {}
    return {
        "pass_p99_us": c.get("p99", 0) / 1e3,
        "pass_max_us": c.get("max", 0) / 1e3,
        "iops": j["read"]["iops"] + j["write"]["iops"],
        "clocks": d["hiops"]["machine"]["clocks_per_io"],
        "ctx": d["hiops"]["process"]["context_switches_per_io"],
        "handoff_p50_us": h.get("p50", 0) / 1e3,
        "handoff_p99_us": h.get("p99", 0) / 1e3,
        "handoff_max_us": h.get("max", 0) / 1e3,
        "wakeups": p.get("wakeups_per_io", 0),
        "p50_us": (j["read"]["clat_ns"].get("percentile") or {}).get("50.000000", 0) / 1e3,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", default="3")
    ap.add_argument("--bs", default="4k")
    ap.add_argument("--rw", default="randread")
    ap.add_argument("--ioengine", default="io_uring")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--zram", action="store_true", help="a fresh zram device instead of a disk file")
    ap.add_argument("--extra", default="", help="more hiops flags, space separated")
    a = ap.parse_args()
    exe = hiops_bin()
    strategies = a.strategies.split(",")
    zram = None
    tmp = None
    if a.zram:
        zram = make_zram()
        target = f"/dev/zram{zram}"
        args = ["--allow-write-device", target]
    else:
        tmp = tempfile.mkdtemp(dir=os.environ.get("HIOPS_BENCH_DIR", "/var/tmp"))
        target = os.path.join(tmp, "path.dat")
        args = ["--size=1g"]
    args += [f"--numjobs={a.threads}", f"--runtime={a.runtime}", "--ramp_time=1",
             f"--bs={a.bs}", f"--rw={a.rw}", f"--ioengine={a.ioengine}"]
    extra = a.extra.split() if a.extra else []
    results = {s: [] for s in strategies}
    try:
        for r in range(a.rounds):
            order = strategies[r % len(strategies):] + strategies[: r % len(strategies)]
            for s in order:
                results[s].append(one(exe, target, args, s, extra))
                print(f"round {r + 1}/{a.rounds} {s}: {results[s][-1]['iops']:.0f} IOPS", file=sys.stderr)
    finally:
        if zram is not None:
            open("/sys/class/zram-control/hot_remove", "w").write(zram)
        if tmp:
            for f in os.listdir(tmp):
                os.unlink(os.path.join(tmp, f))
            os.rmdir(tmp)
    base = results.get("pread")
    where = f"zram" if a.zram else "disk file (vda)"
    print(f"\n{a.rw} {a.bs}, {a.threads} threads, {where}, {a.ioengine} for shared/per-thread rings, "
          f"{a.rounds} rounds of {a.runtime}s, medians")
    print("| strategy | IOPS | clocks/IO | ctx/IO | clat p50 us | hand-off p50/p99/max us | completion pass p99/max us | IOPS vs pread | clocks vs pread | p50 vs pread |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |")
    for s in strategies:
        rs = results[s]
        med = lambda k: statistics.median(x[k] for x in rs)
        if base:
            ri = statistics.median(x["iops"] / b["iops"] for x, b in zip(rs, base))
            rc = statistics.median(x["clocks"] / b["clocks"] for x, b in zip(rs, base))
            rp = statistics.median(x["p50_us"] / max(b["p50_us"], 1e-9) for x, b in zip(rs, base))
            ratios = f"{ri:.2f} | {rc:.2f} | {rp:.2f}"
        else:
            ratios = "- | - | -"
        print(f"| {s} | {med('iops'):.0f} | {med('clocks'):.0f} | {med('ctx'):.2f} | {med('p50_us'):.1f} | "
              f"{med('handoff_p50_us'):.1f}/{med('handoff_p99_us'):.0f}/{med('handoff_max_us'):.0f} | "
              f"{med('pass_p99_us'):.1f}/{med('pass_max_us'):.0f} | {ratios} |")


if __name__ == "__main__":
    main()

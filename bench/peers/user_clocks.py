#!/usr/bin/env python3
"""The task path's own user-space work per I/O against a peer runtime's:
labelled commands alternated in rounds on one file, each run's process
user time (getrusage over its measured window) x TSC / I/Os of that window.

A COMMAND is a hiops binary, `run` and flags (4 KiB random O_DIRECT reads
by default; its JSON gives `hiops.process.user_clocks_per_io` over its
window), or `bench/peers/target/release/hiops-peers MODEL READERS` (its
JSON line gives `user_clocks_per_io` over its window, taken the same way).
Every round runs every spec once, the order turned by one each round; the
table gives medians and the median of per-round ratios against the first.
The process's CPU time is sampled by the 250 Hz tick on many kernels: use
windows of several seconds and >= 5 rounds.

  python3 bench/peers/user_clocks.py --rounds 5 --runtime 8 \\
      "tasks=target/release/hiops run --strategy=coop --tasks=128" \\
      "monoio=bench/peers/target/release/hiops-peers monoio 128"
"""
import argparse, json, os, shlex, statistics, subprocess, sys

COMMON = ["--rw=randread", "--bs=4k", "--direct=1", "--output-format=json", "--no-progress"]


def is_peer(words):
    return os.path.basename(words[0]) == "hiops-peers"


def peer(words, args):
    exe, model, readers = words[:3]
    out = subprocess.run([exe, model, args.file, readers, args.runtime], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(words)} failed: {out.stderr.strip()}")
    d = json.loads(out.stdout.strip().splitlines()[-1])
    if "error" in d:
        sys.exit(f"{' '.join(words)}: {d['error']}")
    return {"iops": d["iops"], "user": d["user_clocks_per_io"], "kernel": d["kernel_clocks_per_io"],
            "p50": d["p50_us"]}


def hiops(words, args):
    full = words[:2] + [f"--filename={args.file}", f"--runtime={args.runtime}", f"--ramp_time={args.ramp}"] \
        + COMMON + words[2:]
    out = subprocess.run(full, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(full)} failed: {out.stderr.strip()}")
    d = json.loads(out.stdout[out.stdout.index("{"):])
    j, own = d["jobs"][0], d["hiops"]["process"]
    pct = j["read"]["clat_ns"].get("percentile") or {}
    return {"iops": j["read"]["iops"] + j["write"]["iops"], "user": own["user_clocks_per_io"],
            "kernel": own["kernel_clocks_per_io"], "p50": pct.get("50.000000", 0) / 1e3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+", help="LABEL=COMMAND")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--file", default="/var/tmp/hb/path.dat")
    ap.add_argument("--runtime", default="8", help="seconds measured (the peers warm up 1 s)")
    ap.add_argument("--ramp", default="1")
    args = ap.parse_args()
    specs = [(label, shlex.split(cmd)) for label, cmd in (s.split("=", 1) for s in args.specs)]
    runs = {label: [] for label, _ in specs}
    for r in range(args.rounds):
        turn = r % len(specs)
        for label, words in specs[turn:] + specs[:turn]:
            x = (peer if is_peer(words) else hiops)(words, args)
            runs[label].append(x)
            print(f"# round {r + 1} {label}: {x['iops']:.0f} IOPS, user {x['user']:.0f} clocks/IO, "
                  f"kernel {x['kernel']:.0f}, p50 {x['p50']:.1f} us", flush=True)
    base = specs[0][0]
    med = statistics.median
    print(f"| {args.rounds} rounds of {args.runtime} s | IOPS | user clocks/IO | kernel clocks/IO | p50 us "
          f"| IOPS vs {base} | user vs {base} | p50 vs {base} |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, _ in specs:
        xs, bs = runs[label], runs[base]
        ratio = lambda k: med(a[k] / b[k] for a, b in zip(xs, bs) if b[k])
        print(f"| {label} | {med(x['iops'] for x in xs):,.0f} | {med(x['user'] for x in xs):,.0f} "
              f"| {med(x['kernel'] for x in xs):,.0f} | {med(x['p50'] for x in xs):.1f} "
              f"| {ratio('iops'):.2f} | {ratio('user'):.2f} | {ratio('p50'):.2f} |")


if __name__ == "__main__":
    main()

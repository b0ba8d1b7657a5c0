#!/usr/bin/env python3
"""Labelled `hiops run` commands alternated in rounds, on one file.

Each spec is LABEL=COMMAND: a hiops binary, `run`, and flags that
override the defaults (4 KiB random reads); two builds can be compared,
an old one built in a worktree with its own target dir.
Every round runs every spec once, in order; the table gives medians and
the median of per-round ratios against the first spec.

  python3 bench/alternate.py --rounds 5 \
      "pread=target/release/hiops run --strategy=pread --numjobs=128" \
      "tasks=target/release/hiops run --strategy=coop --tasks=128"
"""
import argparse, json, shlex, statistics, subprocess, sys

COMMON = ["--rw=randread", "--bs=4k", "--output-format=json", "--no-progress"]


def one(cmd, args):
    # The spec's own flags come last, so they override the defaults.
    words = shlex.split(cmd)
    full = words[:2] + [f"--filename={args.file}", f"--runtime={args.runtime}",
                        f"--ramp_time={args.ramp}"] + COMMON + words[2:]
    out = subprocess.run(full, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(full)} failed: {out.stderr.strip()}")
    d = json.loads(out.stdout)
    j = d["jobs"][0]
    pct = j["read"]["clat_ns"].get("percentile") or {}
    return {
        "iops": j["read"]["iops"] + j["write"]["iops"],
        "clocks": d["hiops"]["machine"]["clocks_per_io"],
        "ctx": d["hiops"]["process"]["context_switches_per_io"],
        "p50": pct.get("50.000000", 0) / 1e3,
        "p99": pct.get("99.000000", 0) / 1e3,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+", help="LABEL=COMMAND")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--file", default="/var/tmp/hb/path.dat")
    ap.add_argument("--runtime", default="3")
    ap.add_argument("--ramp", default="1")
    args = ap.parse_args()
    specs = [s.split("=", 1) for s in args.specs]
    runs = {label: [] for label, _ in specs}
    for r in range(args.rounds):
        for label, cmd in specs:
            x = one(cmd, args)
            runs[label].append(x)
            print(f"# round {r + 1} {label}: {x['iops']:.0f} IOPS, {x['clocks']:.0f} clocks/IO, "
                  f"p50 {x['p50']:.1f} us", flush=True)
    base = specs[0][0]
    med = statistics.median
    print(f"| {args.rounds} rounds | IOPS | clocks/IO | ctx/IO | p50 us | p99 us | IOPS vs {base} | clocks vs {base} | p50 vs {base} |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, _ in specs:
        xs, bs = runs[label], runs[base]
        ratio = lambda k: med(a[k] / b[k] for a, b in zip(xs, bs) if b[k])
        print(f"| {label} | {med(x['iops'] for x in xs):,.0f} | {med(x['clocks'] for x in xs):,.0f} "
              f"| {med(x['ctx'] for x in xs):.3f} | {med(x['p50'] for x in xs):.1f} "
              f"| {med(x['p99'] for x in xs):.1f} | {ratio('iops'):.2f} | {ratio('clocks'):.2f} | {ratio('p50'):.2f} |")


if __name__ == "__main__":
    main()

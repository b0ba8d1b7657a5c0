#!/usr/bin/env python3
"""Labelled `hiops run` commands alternated in rounds, on one file.

Each spec is LABEL=COMMAND: a hiops binary, `run`, and flags that
override the defaults (4 KiB random reads); two builds can be compared,
an old one built in a worktree with its own target dir. A COMMAND that
starts with `fio` runs fio on the same file and workload instead
(threads, not processes, as hiops runs them; its flags follow). A
COMMAND `bench/peers/target/release/hiops-peers MODEL READERS` runs one of
bench/peers' reader models (monoio, compio, glommio, ...) on the same file
for the same window.
Every round runs every spec once, in order; the table gives medians and
the median of per-round ratios against the first spec.

Machine clocks per I/O are hiops' own figure (its measured window), or,
once a fio spec is among them, for every spec the machine's busy time
from /proc/stat (elapsed x CPUs - idle - iowait - steal) over the whole
run, as a rate, x TSC / IOPS: one definition for both tools, ramp and
start-up counted alike (as bench/vs_fio.py does).

  python3 bench/alternate.py --rounds 5 \
      "pread=target/release/hiops run --strategy=pread --numjobs=128" \
      "tasks=target/release/hiops run --strategy=coop --tasks=128"
"""
import argparse, json, os, shlex, statistics, subprocess, sys, time

COMMON = ["--rw=randread", "--bs=4k", "--output-format=json"]
FIO = ["--name=alternate", "--group_reporting", "--thread", "--time_based"]


def is_fio(cmd):
    return os.path.basename(shlex.split(cmd)[0]) == "fio"


def is_peer(cmd):
    """bench/peers' program: `hiops-peers MODEL READERS` (bench/peers.py)."""
    return os.path.basename(shlex.split(cmd)[0]) == "hiops-peers"


def foreign(cmd):
    return is_fio(cmd) or is_peer(cmd)


def one_peer(cmd, args, tsc):
    """A peer reader model on the same file for the same window (it warms up
    1 s itself); machine clocks as for fio, over the whole run."""
    exe, model, readers = shlex.split(cmd)[:3]
    b0, t0 = machine_busy_s(), time.monotonic()
    out = subprocess.run([exe, model, args.file, readers, args.runtime], capture_output=True, text=True)
    busy_per_s = (machine_busy_s() - b0) / (time.monotonic() - t0)
    if out.returncode != 0:
        sys.exit(f"{cmd} failed: {out.stderr.strip()}")
    d = json.loads(out.stdout.strip().splitlines()[-1])
    if "error" in d:
        sys.exit(f"{cmd}: {d['error']}")
    return {"iops": d["iops"], "clocks": busy_per_s * tsc / max(d["iops"], 1), "ctx": d["ctx_per_io"],
            "p50": d["p50_us"], "p99": d["p99_us"]}


def machine_busy_s():
    """Busy CPU seconds of the whole machine so far: all - idle - iowait - steal."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle, iowait, steal = f[3], f[4], f[7] if len(f) > 7 else 0
    return (sum(f[:8]) - idle - iowait - steal) / os.sysconf("SC_CLK_TCK")


def tsc_hz(hiops):
    out = subprocess.run([hiops, "run", "--ioengine=null", "--size=1m", "--runtime=1", "--ramp_time=0",
                          "--output-format=json", "--no-progress"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["hiops"]["tsc_hz"]


def one(cmd, args, tsc):
    if is_peer(cmd):
        return one_peer(cmd, args, tsc)
    # The spec's own flags come last, so they override the defaults.
    words = shlex.split(cmd)
    # --file "" : no file (ioengine=null and hiops' mem bring their own target).
    named = [f"--filename={args.file}"] if args.file else []
    common = named + [f"--runtime={args.runtime}", f"--ramp_time={args.ramp}"] + COMMON
    if is_fio(cmd):
        full = words[:1] + FIO + common + words[1:]
    else:
        full = words[:2] + common + ["--no-progress"] + words[2:]
    b0, t0 = machine_busy_s(), time.monotonic()
    out = subprocess.run(full, capture_output=True, text=True)
    busy_per_s = (machine_busy_s() - b0) / (time.monotonic() - t0)
    if out.returncode != 0:
        sys.exit(f"{' '.join(full)} failed: {out.stderr.strip()}")
    d = json.loads(out.stdout[out.stdout.index("{"):])
    j = d["jobs"][0]
    pct = j["read"]["clat_ns"].get("percentile") or {}
    iops = j["read"]["iops"] + j["write"]["iops"]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    own = d.get("hiops")
    return {
        "iops": iops,
        "clocks": busy_per_s * tsc / max(iops, 1) if tsc else own["machine"]["clocks_per_io"],
        "ctx": own["process"]["context_switches_per_io"] if own else j["ctx"] / max(ios, 1),
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
    hiops = next((shlex.split(c)[0] for _, c in specs if not foreign(c)), "target/release/hiops")
    tsc = tsc_hz(hiops) if any(foreign(c) for _, c in specs) else None
    if tsc:
        print(f"# machine clocks over each whole run (a fio or peer spec is here), TSC {tsc / 1e9:.3f} GHz")
    for r in range(args.rounds):
        for label, cmd in specs:
            x = one(cmd, args, tsc)
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

#!/usr/bin/env python3
"""The task path's user-space work per I/O against a peer runtime's,
sampled: `perf record -e cpu-clock:u -F HZ` on each run's process over a
span inside its measured window, user ns per I/O = samples / HZ / (the
run's IOPS x span). The same quantity as user_clocks.py (the process's
user time over I/Os), read at HZ instead of the kernel's 250 Hz tick,
whose split of user and system time left about 15% between runs of one
build when user time is a few percent of the process's.

Specs as user_clocks.py: LABEL=COMMAND, a hiops binary with `run` and
flags (4 KiB random O_DIRECT reads added) or `hiops-peers MODEL READERS`.
Every round runs every spec once, the order turned by one each round; the
tables give medians and medians of per-round ratios against each spec.
Needs perf and root (or perf_event_paranoid <= 1).

  python3 bench/peers/user_samples.py --rounds 5 \\
      "tasks=target/release/hiops run --strategy=coop --tasks=128" \\
      "monoio=bench/peers/target/release/hiops-peers monoio 128"
"""
import argparse, json, os, shlex, statistics, subprocess, tempfile, time

COMMON = ["--rw=randread", "--bs=4k", "--direct=1", "--output-format=json", "--no-progress"]


def command(words, args):
    if os.path.basename(words[0]) == "hiops-peers":
        return [words[0], words[1], args.file, words[2], str(args.runtime)], True
    return words[:2] + [f"--filename={args.file}", f"--runtime={args.runtime}", "--ramp_time=1"] \
        + COMMON + words[2:], False


def figures(out, peer):
    if peer:
        d = json.loads(out.strip().splitlines()[-1])
        return d["iops"], d["p50_us"]
    j = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    return j["iops"], (j["clat_ns"].get("percentile") or {}).get("50.000000", 0) / 1e3


def one(words, args, data):
    cmd, peer = command(words, args)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Past hiops' 1 s ramp and the peers' 1 s warm-up.
    time.sleep(args.skip)
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock:u", "-F", str(args.hz), "-p", str(p.pid),
                    "-o", data, "--", "sleep", str(args.span)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out, err = p.communicate()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err.strip()}")
    script = subprocess.run(["perf", "script", "-i", data, "-F", "ip"], capture_output=True, text=True)
    samples = len(script.stdout.splitlines())
    iops, p50 = figures(out, peer)
    return {"iops": iops, "samples": samples, "user_ns": samples / args.hz * 1e9 / (iops * args.span), "p50": p50}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+", help="LABEL=COMMAND")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--file", default="/var/tmp/hb/path.dat")
    ap.add_argument("--runtime", type=int, default=6, help="seconds each run measures")
    ap.add_argument("--skip", type=float, default=2.5, help="seconds from the start to the sampled span")
    ap.add_argument("--span", type=int, default=3, help="seconds sampled")
    ap.add_argument("--hz", type=int, default=20000)
    args = ap.parse_args()
    assert args.skip + args.span < args.runtime + 1, "the sampled span must lie in the measured window"
    specs = [(label, shlex.split(cmd)) for label, cmd in (s.split("=", 1) for s in args.specs)]
    runs = {label: [] for label, _ in specs}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        for r in range(args.rounds):
            turn = r % len(specs)
            for label, words in specs[turn:] + specs[:turn]:
                x = one(words, args, data)
                runs[label].append(x)
                print(f"# round {r + 1} {label}: {x['iops']:.0f} IOPS, {x['samples']} samples, "
                      f"user {x['user_ns']:.0f} ns/IO, p50 {x['p50']:.1f} us", flush=True)
    med = statistics.median
    for base, _ in specs:
        print(f"\n| against {base} | IOPS | user ns/IO | p50 us | IOPS x | user x | p50 x |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for label, _ in specs:
            xs, bs = runs[label], runs[base]
            ratio = lambda k: med(a[k] / b[k] for a, b in zip(xs, bs) if b[k])
            print(f"| {label} | {med(x['iops'] for x in xs):,.0f} | {med(x['user_ns'] for x in xs):,.0f} "
                  f"| {med(x['p50'] for x in xs):.1f} | {ratio('iops'):.2f} | {ratio('user_ns'):.2f} "
                  f"| {ratio('p50'):.2f} |")


if __name__ == "__main__":
    main()

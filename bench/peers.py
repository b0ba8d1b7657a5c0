#!/usr/bin/env python3
"""The task path against its peers, in one run: READERS concurrent readers,
each doing one 4 KiB random O_DIRECT read at a time from one file, as
(a) pread threads, (b) hiops coop threads, (c) hiops tasks, (d) glommio
DmaFile tasks, (e) tokio tasks with spawn_blocking(pread). Rounds run the
models in rotated order; each figure is the median over rounds of its ratio
to pread in the same round. tokio's unstable io-uring file reads are not
included: they need --cfg tokio_unstable and did not build here.

    python3 bench/peers.py [--readers 128] [--rounds 5] [--seconds 5] [--file F]

Builds bench/peers (its own Cargo project, so the main build never depends
on glommio) and lays out a 1 GiB file with hiops when none is given.
"""
import argparse, json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "bench", "peers", "target", "release", "hiops-peers")
HIOPS = os.path.join(ROOT, "target", "release", "hiops")
MODELS = ["pread", "coop-threads", "hiops-tasks", "glommio", "tokio-blocking"]


def one(model, file, readers, seconds):
    out = subprocess.run([PEERS, model, file, str(readers), str(seconds)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{model} failed: {out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readers", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--file", default="")
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--manifest-path", os.path.join(ROOT, "bench", "peers", "Cargo.toml")], check=True)
    file = a.file or "/var/tmp/hiops-peers.data"
    if not os.path.exists(file):
        subprocess.run([HIOPS, "run", f"--filename={file}", "--size=1g", "--runtime=1", "--ramp_time=0", "--no-progress"],
                       check=True, capture_output=True)
    models = a.models.split(",")
    rows = {m: [] for m in models}
    for r in range(a.rounds):
        order = models[r % len(models):] + models[:r % len(models)]
        got = {m: one(m, file, a.readers, a.seconds) for m in order}
        base = got.get("pread")
        for m in models:
            rows[m].append((got[m], base))
        print(f"# round {r + 1}: " + ", ".join(f"{m} {got[m]['iops']:.0f}" for m in models), file=sys.stderr, flush=True)
    med = statistics.median
    print(f"| {a.readers} readers | IOPS | IOPS x pread | machine clocks/IO | clocks x pread | ctx switches/IO | p50 us | p99 us |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for m in models:
        runs = rows[m]
        ratio = lambda k: med([g[k] / b[k] for g, b in runs]) if runs[0][1] else float("nan")
        col = lambda k: med([g[k] for g, _ in runs])
        print(f"| {m} | {col('iops'):,.0f} | {ratio('iops'):.2f} | {col('machine_clocks_per_io'):,.0f} | {ratio('machine_clocks_per_io'):.2f} "
              f"| {col('ctx_per_io'):.3f} | {col('p50_us'):.1f} | {col('p99_us'):.1f} |")


if __name__ == "__main__":
    main()

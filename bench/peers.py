#!/usr/bin/env python3
"""The task path against its peers, in one run: READERS concurrent readers,
each doing one 4 KiB random O_DIRECT read at a time from one file, as
(a) pread threads, (b) hiops coop threads, (c) hiops tasks, (d) glommio
DmaFile tasks, (e) monoio, (f) compio and (g) tokio-uring tasks (each of
these three thread-per-core like glommio: one runtime per CPU, owned aligned
buffers, File::read_at), (h) tokio tasks with spawn_blocking(pread), and, with
`--models ...,tokio-uring-fs`, (i) tokio's unstable io_uring file reads
(a second build of bench/peers with --cfg tokio_unstable, in its own target
directory). Rounds run the models in rotated order; each figure is the
median over rounds of its ratio to pread in the same round. A model that
cannot do the reads (tokio's io_uring reads refuse O_DIRECT: they land in
tokio's own unaligned buffer; a runtime that opened the file without O_DIRECT
would read the page cache) is reported with its error.

    python3 bench/peers.py [--readers 128] [--rounds 5] [--seconds 5] [--file F]
                           [--models pread,monoio,...]

Builds bench/peers (its own Cargo project, so the main build never depends
on glommio) and lays out a 1 GiB file with hiops when none is given.
"""
import argparse, json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "bench", "peers", "target", "release", "hiops-peers")
HIOPS = os.path.join(ROOT, "target", "release", "hiops")
UNSTABLE_TARGET = os.path.join(ROOT, "bench", "peers", "target-tokio-unstable")
PEERS_UNSTABLE = os.path.join(UNSTABLE_TARGET, "release", "hiops-peers")
MODELS = ["pread", "coop-threads", "hiops-tasks", "glommio", "monoio", "compio", "tokio-uring", "tokio-blocking"]


def one(model, file, readers, seconds):
    exe = PEERS_UNSTABLE if model == "tokio-uring-fs" else PEERS
    out = subprocess.run([exe, model, file, str(readers), str(seconds)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{model} failed: {out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def build(models):
    manifest = os.path.join(ROOT, "bench", "peers", "Cargo.toml")
    subprocess.run(["cargo", "build", "--release", "--manifest-path", manifest], check=True)
    if "tokio-uring-fs" in models:
        env = dict(os.environ, RUSTFLAGS="--cfg tokio_unstable", CARGO_TARGET_DIR=UNSTABLE_TARGET)
        subprocess.run(["cargo", "build", "--release", "--manifest-path", manifest], check=True, env=env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readers", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--file", default="")
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    build(a.models.split(","))
    file = a.file or "/var/tmp/hiops-peers.data"
    if not os.path.exists(file):
        subprocess.run([HIOPS, "run", f"--filename={file}", "--size=1g", "--runtime=1", "--ramp_time=0", "--no-progress"],
                       check=True, capture_output=True)
    models = a.models.split(",")
    rows = {m: [] for m in models}
    refused = {}
    for r in range(a.rounds):
        order = models[r % len(models):] + models[:r % len(models)]
        got = {m: one(m, file, a.readers, a.seconds) for m in order if m not in refused}
        for m in list(got):
            if "error" in got[m]:
                refused[m] = got.pop(m)["error"]
        base = got.get("pread")
        for m in got:
            rows[m].append((got[m], base))
        print(f"# round {r + 1}: " + ", ".join(f"{m} {got[m]['iops']:.0f}" for m in got), file=sys.stderr, flush=True)
    med = statistics.median
    print(f"| {a.readers} readers | IOPS | IOPS x pread | machine clocks/IO | clocks x pread | ctx switches/IO | p50 us | p99 us |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for m, why in refused.items():
        print(f"| {m} | refused: {why} | | | | | | |")
    for m in models:
        runs = rows[m]
        if not runs:
            continue
        ratio = lambda k: med([g[k] / b[k] for g, b in runs]) if runs[0][1] else float("nan")
        col = lambda k: med([g[k] for g, _ in runs])
        print(f"| {m} | {col('iops'):,.0f} | {ratio('iops'):.2f} | {col('machine_clocks_per_io'):,.0f} | {ratio('machine_clocks_per_io'):.2f} "
              f"| {col('ctx_per_io'):.3f} | {col('p50_us'):.1f} | {col('p99_us'):.1f} |")


if __name__ == "__main__":
    main()

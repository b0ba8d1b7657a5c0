#!/usr/bin/env python3
"""A recorded trace replayed by fio and by hiops through pread, coop and the
task path, side by side in one run.

fio records a trace (`write_iolog`, its v3 text) of 4 KiB random reads of a
file; then every round replays it, as fast as the engine takes it
(`replay_no_stall=1`), with READERS replayers, each replaying the whole
trace:

- fio: `ioengine=psync`, READERS jobs (fio's synchronous replay);
- hiops pread: `--strategy=pread`, READERS threads (the same system calls);
- hiops coop: `--strategy=coop`, READERS threads, each on a ring of its own
  (`hiops run`'s default for coop);
- hiops tasks: `--strategy=coop --tasks=READERS`, one thread per CPU.

Rounds rotate the order; ratios are medians of per-round ratios to fio.
Machine clocks per I/O: /proc/stat busy time over the tool's run x TSC / I/O.

    python3 bench/replay_vs_fio.py [--readers 16] [--ios 20000] [--rounds 5]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIOPS = os.path.join(ROOT, "target", "release", "hiops")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from vs_fio import machine_busy_s  # noqa: E402


def tsc_hz():
    out = subprocess.run([HIOPS, "run", "--output-format=json", "--no-progress", "--runtime=1",
                          "--size=16m", "--ioengine=mem"], capture_output=True, text=True)
    return json.loads(out.stdout)["hiops"]["tsc_hz"]


def run(cmd):
    b0, t0 = machine_busy_s(), time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr}")
    busy = machine_busy_s() - b0
    text = out.stdout
    doc = json.loads(text[text.index("{"):])
    return doc, busy, time.monotonic() - t0


def figures(doc, busy_s, hz):
    jobs = doc["jobs"]
    ios = sum(j["read"]["total_ios"] for j in jobs)
    runtime_s = max(j["read"]["runtime"] for j in jobs) / 1000.0
    p50 = statistics.median(
        (j["read"]["clat_ns"].get("percentile") or {}).get("50.000000", 0) for j in jobs) / 1e3
    return {"ios": ios, "iops": ios / max(runtime_s, 1e-9), "clocks": busy_s * hz / max(ios, 1),
            "p50_us": p50}


def record(file, ios, trace):
    subprocess.run(["fio", "--name=rec", f"--filename={file}", "--rw=randread", "--bs=4k",
                    "--direct=1", "--ioengine=psync", f"--number_ios={ios}", "--size=1g",
                    f"--write_iolog={trace}", "--output-format=json"],
                   check=True, capture_output=True)


def commands(file, trace, readers):
    replay = [f"--read_iolog={trace}", "--replay_no_stall=1", "--direct=1"]
    hiops = [HIOPS, "run", "--output-format=json", "--no-progress", "--name=replay",
             f"--replay_redirect={file}"] + replay
    return {
        "fio psync": ["fio", "--name=replay", "--output-format=json", "--ioengine=psync",
                      f"--numjobs={readers}", f"--replay_redirect={file}"] + replay,
        "hiops pread": hiops + ["--strategy=pread", f"--numjobs={readers}"],
        "hiops coop": hiops + ["--strategy=coop", f"--numjobs={readers}"],
        "hiops tasks": hiops + ["--strategy=coop", f"--tasks={readers}"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readers", type=int, default=16)
    ap.add_argument("--ios", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=os.environ.get("HIOPS_BENCH_DIR", "/var/tmp"))
    a = ap.parse_args()
    hz = tsc_hz()
    tmp = tempfile.mkdtemp(dir=a.dir)
    file, trace = os.path.join(tmp, "replay.dat"), os.path.join(tmp, "trace.log")
    with open(file, "wb") as f:
        for _ in range(1024):
            f.write(os.urandom(1 << 20))
    record(file, a.ios, trace)
    cmds = commands(file, trace, a.readers)
    names = list(cmds)
    results = {n: [] for n in names}
    try:
        for r in range(a.rounds):
            for n in names[r % len(names):] + names[: r % len(names)]:
                doc, busy, _ = run(cmds[n])
                results[n].append(figures(doc, busy, hz))
                print(f"round {r + 1}/{a.rounds} {n}: {results[n][-1]['iops']:.0f} IOPS, "
                      f"{results[n][-1]['ios']} I/Os", file=sys.stderr)
    finally:
        for p in (file, trace):
            os.unlink(p)
        os.rmdir(tmp)
    base = results["fio psync"]
    print(f"\n{a.ios} recorded 4 KiB random reads replayed by {a.readers} replayers each, "
          f"replay_no_stall=1, O_DIRECT, {a.rounds} rounds, medians")
    print("| replayer | I/Os | IOPS | machine clocks/IO | clat p50 us | IOPS x fio | clocks x fio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in names:
        rs = results[n]
        med = lambda k: statistics.median(x[k] for x in rs)
        ri = statistics.median(x["iops"] / b["iops"] for x, b in zip(rs, base))
        rc = statistics.median(x["clocks"] / b["clocks"] for x, b in zip(rs, base))
        print(f"| {n} | {med('ios'):.0f} | {med('iops'):.0f} | {med('clocks'):.0f} | "
              f"{med('p50_us'):.1f} | {ri:.2f} | {rc:.2f} |")


if __name__ == "__main__":
    main()

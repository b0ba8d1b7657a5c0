#!/usr/bin/env python3
"""Does --profile's sampled busy time agree with /proc/stat's, run after run?

Runs `hiops run --profile` on a file with the job pinned to one CPU, for each
engine, alternating between builds (A/B) round after round, and prints per
build the ratio of that CPU's sampled busy time to its busy time from
/proc/stat (the profile's "sampled throughout" check) in every round, with
the median and the spread. Root is needed to sample every CPU.

  python3 bench/profile_agreement.py --file /var/tmp/hb/path.dat --rounds 6 \
      --build fixed=/path/to/old/hiops --build dithered=target/release/hiops
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile


def ratio(binary, args, engine, hz):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [binary, "run", f"--filename={args.file}", "--rw=randread", "--bs=4k",
               "--direct=1", f"--ioengine={engine}", f"--runtime={args.runtime}",
               f"--profile={hz}", f"--cpus_allowed={args.cpu}",
               "--output-format=json", f"--output={out.name}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p = json.load(open(out.name))["hiops"]["profile"]
    c = p.get("sampled_throughout")
    if not c or args.cpu not in c["cpus"]:
        return None
    return c["sampled_busy_s"] / c["busy_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", required=True)
    ap.add_argument("--build", action="append", required=True, help="LABEL=PATH")
    ap.add_argument("--engines", default="psync,libaio,io_uring")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--runtime", type=int, default=3)
    ap.add_argument("--hz", default="1000")
    ap.add_argument("--cpu", type=int, default=0)
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.build]
    if os.geteuid() != 0:
        raise SystemExit("sampling every CPU needs root")
    for hz in args.hz.split(","):
        for engine in args.engines.split(","):
            got = {label: [] for label, _ in builds}
            for r in range(args.rounds):
                order = builds if r % 2 == 0 else builds[::-1]
                for label, path in order:
                    x = ratio(path, args, engine, hz)
                    if x is not None:
                        got[label].append(x)
            for label, xs in got.items():
                if not xs:
                    print(f"{hz} Hz {engine:9} {label:9} no CPU sampled throughout")
                    continue
                gaps = [abs(x - 1) * 100 for x in xs]
                print(f"{hz} Hz {engine:9} {label:9} median {statistics.median(xs):.3f} "
                      f"range {min(xs):.3f}-{max(xs):.3f} median |gap| {statistics.median(gaps):.1f}% "
                      f"rounds within 5%: {sum(g <= 5 for g in gaps)}/{len(xs)}  "
                      + " ".join(f"{x:.3f}" for x in xs), flush=True)


if __name__ == "__main__":
    main()

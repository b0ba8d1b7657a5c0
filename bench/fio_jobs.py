#!/usr/bin/env python3
"""The same fio job files through fio and through hiops, side by side.

For each job file in bench/jobs (or those named), runs `fio FILE` and
`hiops run FILE` on the same target, alternating, PAIRS times each, and
prints the medians and the median of the per-pair ratios hiops/fio for IOPS,
bandwidth, mean and p99 completion latency, and CPU (usr+sys) per I/O.
Both tools read the same file; only their JSON is parsed (the fio schema).

    bench/fio_jobs.py [--pairs 5] [--runtime 4] [--file PATH] [JOB.fio ...]

The job files take their target from ${HIOPS_BENCH_FILE} and their runtime
from ${HIOPS_BENCH_RUNTIME}. Needs fio (Debian package) and a release build.
"""
import argparse, glob, json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIOPS = os.path.join(ROOT, "target", "release", "hiops")


def run_json(cmd, env):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr}")
    text = out.stdout
    return json.loads(text[text.index("{"):])


def figures(doc):
    job = doc["jobs"][0]
    r, w = job["read"], job["write"]
    ios = r["total_ios"] + w["total_ios"]
    runtime_s = max(r["runtime"], w["runtime"]) / 1000.0
    main = r if r["total_ios"] >= w["total_ios"] else w
    pct = main["clat_ns"].get("percentile", {})
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * runtime_s * max(1, int(job["job options"].get("numjobs", "1")))
    return {
        "IOPS": r["iops"] + w["iops"],
        "MiB/s": (r["bw_bytes"] + w["bw_bytes"]) / 2**20,
        "clat mean us": main["clat_ns"]["mean"] / 1000.0,
        "clat p99 us": pct.get("99.000000", 0) / 1000.0,
        "CPU us/IO": cpu_s / max(ios, 1) * 1e6,
        # The device's own time per request (diskstats' ticks / ios, as both
        # tools' disk_util report it): equal ratios here and in clat mean
        # put a latency difference at the device, not in the tool.
        "device us/IO": device_us_per_io(doc),
    }


def device_us_per_io(doc):
    ticks = ios = 0
    for d in doc.get("disk_util") or []:
        ticks += d.get("read_ticks", 0) + d.get("write_ticks", 0)
        ios += d.get("read_ios", 0) + d.get("write_ios", 0)
    return ticks * 1000.0 / ios if ios else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=4)
    ap.add_argument("--file", default=os.path.join(ROOT, "target", "fio-jobs.data"))
    ap.add_argument("jobs", nargs="*")
    a = ap.parse_args()
    jobs = a.jobs or sorted(glob.glob(os.path.join(ROOT, "bench", "jobs", "*.fio")))
    if not os.path.exists(a.file) or os.path.getsize(a.file) < 512 << 20:
        print(f"laying out {a.file} (512 MiB of random data)", file=sys.stderr)
        with open(a.file, "wb") as f:
            for _ in range(512):
                f.write(os.urandom(1 << 20))
            os.fsync(f.fileno())
    env = dict(os.environ, HIOPS_BENCH_FILE=a.file, HIOPS_BENCH_RUNTIME=str(a.runtime))
    fio_version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"# {fio_version} vs hiops, {a.pairs} alternating pairs, {a.runtime} s each, target {a.file}")
    for job in jobs:
        name = os.path.basename(job)
        rows = {"fio": [], "hiops": []}
        for i in range(a.pairs):
            order = [("fio", ["fio", "--output-format=json", job]),
                     ("hiops", [HIOPS, "run", "--output-format=json", "--no-progress", job])]
            if i % 2:
                order.reverse()
            for tool, cmd in order:
                rows[tool].append(figures(run_json(cmd, env)))
        print(f"\n## {name}\n")
        print("| figure | fio (median) | hiops (median) | hiops/fio (median of pairs) |")
        print("| --- | ---: | ---: | ---: |")
        for k in rows["fio"][0]:
            f = statistics.median(r[k] for r in rows["fio"])
            h = statistics.median(r[k] for r in rows["hiops"])
            ratios = [hr[k] / fr[k] for fr, hr in zip(rows["fio"], rows["hiops"]) if fr[k] > 0]
            ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
            print(f"| {k} | {f:,.1f} | {h:,.1f} | {ratio} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""hiops vs fio, side by side in one run, alternating A/B pairs.

For each point, runs fio and hiops on the same target with the same workload,
PAIRS times each, alternating, and prints the median of hiops/fio for IOPS
and for CPU clocks per I/O (CPU time from each tool's own usr+sys CPU of the
job x TSC frequency / I/Os). Usage:

    bench/vs_fio.py [--pairs 5] [--runtime 4] [--points NAME,...] [--dir DIR]

Needs fio (Debian package) and a release build (cargo build --release).
Creates a zram device for the zram points when run as root (removed after).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIOPS = os.path.join(ROOT, "target", "release", "hiops")


def fio_cmd(common):
    return ["fio", "--name=vs", "--output-format=json", "--randrepeat=1", "--group_reporting"] + common


def hiops_cmd(common):
    return [HIOPS, "run", "--output-format=json", "--no-progress"] + common


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr}")
    text = out.stdout
    return json.loads(text[text.index("{"):])


def figures(doc, tsc_hz):
    job = doc["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    iops = job["read"]["iops"] + job["write"]["iops"]
    runtime_s = max(job["read"]["runtime"], job["write"]["runtime"]) / 1000.0
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * runtime_s
    return iops, cpu_s * tsc_hz / max(ios, 1)


def points(file, zram, runtime):
    t = [f"--runtime={runtime}", "--ramp_time=1", "--time_based", "--bs=4k", "--rw=randread"]
    disk = [f"--filename={file}", "--size=512m", "--direct=1"] + t
    p = {
        "disk-psync-qd1": (disk + ["--ioengine=psync", "--iodepth=1"], None),
        "disk-io_uring-qd32": (disk + ["--ioengine=io_uring", "--iodepth=32"], None),
        "disk-io_uring-qd128": (disk + ["--ioengine=io_uring", "--iodepth=128"], None),
        "disk-libaio-qd32": (disk + ["--ioengine=libaio", "--iodepth=32"], None),
        "disk-io_uring-qd32-fixed": (disk + ["--ioengine=io_uring", "--iodepth=32", "--fixedbufs", "--registerfiles"], None),
        "null-qd32": (["--ioengine=null", "--size=1g", "--iodepth=32"] + t, ["--ioengine=null", "--size=1g", "--iodepth=32"] + t),
    }
    if zram:
        z = [f"--filename={zram}", "--size=512m", "--direct=1"] + t
        p["zram-psync-qd1"] = (z + ["--ioengine=psync", "--iodepth=1"], None)
        p["zram-io_uring-qd32"] = (z + ["--ioengine=io_uring", "--iodepth=32"], None)
    return p


def make_zram():
    if os.geteuid() != 0 or not os.path.exists("/sys/class/zram-control/hot_add"):
        return None, None
    n = open("/sys/class/zram-control/hot_add").read().strip()
    open(f"/sys/block/zram{n}/disksize", "w").write("1G")
    dev = f"/dev/zram{n}"
    # Fill it so reads are of real data, not zero pages.
    subprocess.run(["dd", "if=/dev/urandom", f"of={dev}", "bs=1M", "count=512", "oflag=direct", "status=none"], check=True)
    return n, dev


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=4)
    ap.add_argument("--points", default="")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    a = ap.parse_args()
    if not os.path.exists(HIOPS):
        sys.exit("build first: cargo build --release")
    file = os.path.join(a.dir, "hiops-vs-fio.data")
    zn, zdev = make_zram()
    try:
        # Lay the file out once (fio and hiops then share it).
        subprocess.run([HIOPS, "run", f"--filename={file}", "--size=512m", "--runtime=1", "--ramp_time=0", "--no-progress"],
                       check=True, capture_output=True)
        tsc = run_json(hiops_cmd(["--ioengine=null", "--size=1m", "--runtime=1", "--ramp_time=0"]))["hiops"]["tsc_hz"]
        chosen = points(file, zdev, a.runtime)
        if a.points:
            chosen = {k: v for k, v in chosen.items() if k in a.points.split(",")}
        print(f"# fio {subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()}, "
              f"hiops {subprocess.run([HIOPS, '--version'], capture_output=True, text=True).stdout.strip()}, "
              f"TSC {tsc/1e9:.3f} GHz, {a.pairs} pairs x {a.runtime}s (+1s ramp), alternating fio/hiops")
        print(f"{'point':28} {'fio IOPS':>10} {'hiops IOPS':>11} {'IOPS ratio':>10} {'fio clk/IO':>11} {'hiops clk/IO':>12} {'clk ratio':>9}")
        for name, (common, hiops_only) in chosen.items():
            ratios_iops, ratios_clk, fi, hi, fc, hc = [], [], [], [], [], []
            for _ in range(a.pairs):
                f_iops, f_clk = figures(run_json(fio_cmd(common)), tsc)
                h_iops, h_clk = figures(run_json(hiops_cmd(hiops_only or common)), tsc)
                ratios_iops.append(h_iops / f_iops)
                ratios_clk.append(h_clk / f_clk)
                fi.append(f_iops); hi.append(h_iops); fc.append(f_clk); hc.append(h_clk)
            med = statistics.median
            print(f"{name:28} {med(fi):10.0f} {med(hi):11.0f} {med(ratios_iops):10.3f} {med(fc):11.0f} {med(hc):12.0f} {med(ratios_clk):9.3f}",
                  flush=True)
    finally:
        if os.path.exists(file):
            os.remove(file)
        if zn is not None:
            open("/sys/class/zram-control/hot_remove", "w").write(zn)


if __name__ == "__main__":
    main()

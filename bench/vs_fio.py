#!/usr/bin/env python3
"""hiops vs fio, side by side in one run, alternating A/B pairs.

For each point, runs fio and hiops on the same target with the same workload,
PAIRS times each, alternating, and prints medians and the median of the
per-pair ratios hiops/fio for:
- IOPS;
- process clocks per I/O (each tool's own usr+sys CPU of the job x TSC / I/Os);
- machine clocks per I/O: /proc/stat busy time (elapsed x CPUs - idle -
  iowait - steal) over the tool's whole run, as a rate, divided by its IOPS
  (ramp and startup count at the same rate for both tools);
- mean commands in flight: fio's by Little's law (IOPS x mean lat, the time
  a slot is held from the I/O's creation to its completion); hiops' from its
  queue's own account (commands the kernel holds, time-weighted). Both count
  a completion in flight until the tool reaps it, and fio reaps one per call
  (iodepth_batch_complete_max defaults to 1): the `-reap1` points run hiops
  the same way;
- the mean queue at the block layer: /proc/diskstats' weighted time in queue
  of the target's device over each tool's whole run (the kernel's own
  Little's law, the same for both tools: what the device side saw).
Usage:

    bench/vs_fio.py [--pairs 5] [--runtime 4] [--points NAME,...] [--dir DIR]

Needs fio (Debian package) and a release build (cargo build --release).
Creates a zram device for the zram points when run as root (removed after).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIOPS = os.environ.get("HIOPS", os.path.join(ROOT, "target", "release", "hiops"))  # HIOPS=... for another build


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


def machine_busy_s():
    """Busy CPU seconds of the whole machine so far: all - idle - iowait - steal."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    idle, iowait, steal = f[3], f[4], f[7] if len(f) > 7 else 0
    return (sum(f[:8]) - idle - iowait - steal) / hz


def device_of(path):
    """The block device holding `path` (a device node or a file), as /proc/diskstats names it."""
    st = os.stat(path)
    dev = st.st_rdev if path.startswith("/dev/") else st.st_dev
    link = os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    return os.path.basename(link)


def queue_ms(device):
    """Field 11 of the device's /proc/diskstats line: weighted ms of requests held."""
    for line in open("/proc/diskstats"):
        f = line.split()
        if f[2] == device:
            return int(f[13])
    return 0


def timed(cmd, device):
    """Runs a tool; returns its JSON, the machine's busy CPU seconds per second
    of the run, and the device's mean queue over it."""
    import time
    b0, q0, t0 = machine_busy_s(), queue_ms(device) if device else 0, time.monotonic()
    doc = run_json(cmd)
    elapsed = time.monotonic() - t0
    queue = (queue_ms(device) - q0) / (elapsed * 1000) if device else float("nan")
    return doc, (machine_busy_s() - b0) / elapsed, queue


def figures(doc, busy_per_s, queue, tsc_hz):
    job = doc["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    iops = job["read"]["iops"] + job["write"]["iops"]
    runtime_s = max(job["read"]["runtime"], job["write"]["runtime"]) / 1000.0
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * runtime_s
    machine = busy_per_s * tsc_hz / max(iops, 1)
    own = (job.get("hiops") or {}).get("in_flight")
    if own:
        in_flight = own["mean"]
    else:
        lat = max(job["read"]["lat_ns"]["mean"], job["write"]["lat_ns"]["mean"])
        in_flight = iops * lat / 1e9
    return iops, cpu_s * tsc_hz / max(ios, 1), machine, in_flight, queue


def points(file, zram, runtime):
    t = [f"--runtime={runtime}", "--ramp_time=1", "--time_based", "--bs=4k", "--rw=randread"]
    disk = [f"--filename={file}", "--size=512m", "--direct=1"] + t
    p = {
        "disk-psync-qd1": (disk + ["--ioengine=psync", "--iodepth=1"], None),
        "disk-io_uring-qd32": (disk + ["--ioengine=io_uring", "--iodepth=32"], None),
        "disk-io_uring-qd32-reap1": (disk + ["--ioengine=io_uring", "--iodepth=32"], disk + ["--ioengine=io_uring", "--iodepth=32", "--iodepth_batch_complete_max=1"]),
        "disk-io_uring-qd128": (disk + ["--ioengine=io_uring", "--iodepth=128"], None),
        "disk-io_uring-qd128-reap1": (disk + ["--ioengine=io_uring", "--iodepth=128"], disk + ["--ioengine=io_uring", "--iodepth=128", "--iodepth_batch_complete_max=1"]),
        "disk-io_uring-qd512": (disk + ["--ioengine=io_uring", "--iodepth=512"], None),
        "disk-libaio-qd32": (disk + ["--ioengine=libaio", "--iodepth=32"], None),
        "disk-libaio-qd128": (disk + ["--ioengine=libaio", "--iodepth=128"], None),
        "disk-libaio-qd512": (disk + ["--ioengine=libaio", "--iodepth=512"], None),
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
        print("| point | fio IOPS | hiops IOPS | IOPS ratio | fio clk/IO | hiops clk/IO | clk ratio "
              "| fio machine clk/IO | hiops machine clk/IO | machine ratio | fio in flight | hiops in flight "
              "| fio block-layer queue | hiops block-layer queue |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, (common, hiops_only) in chosen.items():
            target = next((x.split("=", 1)[1] for x in common if x.startswith("--filename=")), None)
            device = device_of(target) if target else None
            fio_runs, hiops_runs = [], []
            for _ in range(a.pairs):
                fio_runs.append(figures(*timed(fio_cmd(common), device), tsc))
                hiops_runs.append(figures(*timed(hiops_cmd(hiops_only or common), device), tsc))
            med = statistics.median
            col = lambda runs, i: med([r[i] for r in runs])
            ratio = lambda i: med([h[i] / f[i] for f, h in zip(fio_runs, hiops_runs)])
            print(f"| {name} | {col(fio_runs, 0):.0f} | {col(hiops_runs, 0):.0f} | {ratio(0):.3f} "
                  f"| {col(fio_runs, 1):.0f} | {col(hiops_runs, 1):.0f} | {ratio(1):.3f} "
                  f"| {col(fio_runs, 2):.0f} | {col(hiops_runs, 2):.0f} | {ratio(2):.3f} "
                  f"| {col(fio_runs, 3):.1f} | {col(hiops_runs, 3):.1f} "
                  f"| {col(fio_runs, 4):.1f} | {col(hiops_runs, 4):.1f} |", flush=True)
    finally:
        if os.path.exists(file):
            os.remove(file)
        if zn is not None:
            open("/sys/class/zram-control/hot_remove", "w").write(zn)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""hiops across MPI ranks vs fio's client/server mode, alternating A/B pairs.

For 1, 2 and 4 clients on this host, runs the same job file (4 KiB random
reads, io_uring, QD32, direct, one file per client) PAIRS times each way,
alternating:
- fio: one `fio --server` per client on localhost (ports 8765..), driven by
  `fio --client=... JOB --client=... JOB ...`; the figures are fio's
  aggregate ("All clients"; with one client, its only entry);
- hiops: `mpirun -n N hiops run JOB` with `filename=...{rank}`; the
  figures are its merged "All clients" entry (one rank: its only job).
and prints medians and the median of the per-pair ratios hiops/fio for:
- IOPS of all clients together;
- clat p99 of all clients together: hiops' merged entry; for fio, its
  clients' json+ bins added here (fio 3.33's "All clients" has no
  percentiles), then fio's percentile walk over them;
- machine clocks per I/O: /proc/stat busy time over the whole command
  (servers, mpirun and startup included, as the user pays them) as a
  rate, divided by the IOPS.
Usage:

    bench/mpi_vs_fio.py [--pairs 5] [--runtime 10] [--ranks 1,2,4] [--dir DIR]
                        [--size 1g] [--engine io_uring]

Needs fio, Open MPI (bash .ci/setup) and hiops built with MPI:
cargo build --release --features mpi (or HIOPS=path to such a build).
Run as root (mpirun gets
--allow-run-as-root). Leaves nothing behind in DIR.
"""
import argparse, json, os, signal, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# HIOPS=path picks another build (one with --features mpi in its own target dir).
HIOPS = os.environ.get("HIOPS") or os.path.join(ROOT, "target", "release", "hiops")
BASE_PORT = 8765


def job_text(a, filename):
    return "\n".join([
        "[global]",
        f"ioengine={a.engine}", "direct=1", "rw=randread", "bs=4k", "iodepth=32",
        f"size={a.size}", f"runtime={a.runtime}", "ramp_time=1", "time_based=1",
        "randrepeat=1", "unique_filename=0",
        "[vs]",
        f"filename={filename}",
        "",
    ])


def write_jobs(a, ranks):
    """fio's job file per client (its own file), and hiops' one with {rank}."""
    fio_jobs = []
    for r in range(max(ranks)):
        path = os.path.join(a.dir, f"mpi-vs-fio.{r}.fio")
        open(path, "w").write(job_text(a, data_file(a, r)))
        fio_jobs.append(path)
    hiops_job = os.path.join(a.dir, "mpi-vs-fio.hiops.fio")
    open(hiops_job, "w").write(job_text(a, data_file(a, "{rank}")))
    return fio_jobs, hiops_job


def data_file(a, r):
    return os.path.join(a.dir, f"mpi-vs-fio.data.{r}")


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


def timed(cmd):
    """Runs a tool; returns its JSON and the machine's busy CPU seconds per second of the run."""
    b0, t0 = machine_busy_s(), time.monotonic()
    doc = run_json(cmd)
    return doc, (machine_busy_s() - b0) / (time.monotonic() - t0)


def aggregate(doc):
    """The entry covering every client: fio's "All clients", or the only job."""
    if "client_stats" in doc:
        stats = doc["client_stats"]
        return next((s for s in stats if s["jobname"] == "All clients"), stats[-1])
    return doc["jobs"][0]


def p99_of_bins(entries):
    """fio's percentile over the clients' json+ bins added: the first bucket
    where the running count reaches 99%, clamped to the observed min/max."""
    bins = {}
    for e in entries:
        for v, n in e["read"]["clat_ns"]["bins"].items():
            bins[int(v)] = bins.get(int(v), 0) + n
    lo = min(e["read"]["clat_ns"]["min"] for e in entries)
    hi = max(e["read"]["clat_ns"]["max"] for e in entries)
    want = max(1, -(-99 * sum(bins.values()) // 100))
    seen = 0
    for v in sorted(bins):
        seen += bins[v]
        if seen >= want:
            return min(max(v, lo), hi)
    return hi


def figures(doc, busy_per_s, tsc_hz):
    entry = aggregate(doc)
    iops = entry["read"]["iops"]
    pct = entry["read"]["clat_ns"].get("percentile")
    if pct:
        p99 = pct["99.000000"]
    else:
        p99 = p99_of_bins([s for s in doc["client_stats"] if s["jobname"] != "All clients"])
    return iops, p99 / 1e3, busy_per_s * tsc_hz / max(iops, 1)


def fio_cmd(fio_jobs, n):
    cmd = ["fio", "--output-format=json+"]
    for r in range(n):
        cmd += [f"--client=ip:127.0.0.1,{BASE_PORT + r}", fio_jobs[r]]
    return cmd


def hiops_cmd(hiops_job, n):
    # fio's servers run unbound; Open MPI binds a rank to one core unless told
    # not to (which costs 1.3-1.5x the machine clocks here: docs/mpi.md).
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-n", str(n),
            HIOPS, "run", "--output-format=json", "--no-progress", hiops_job]


def start_servers(n):
    # A session each: a server forks, and stopping it stops its children.
    servers = [subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{BASE_PORT + r}"], start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for r in range(n)]
    for r in range(n):
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", BASE_PORT + r), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            sys.exit(f"fio --server on port {BASE_PORT + r} did not start")
    return servers


def lay_out(a, n):
    """Writes each client's file once (both tools then read the same files)."""
    for r in range(n):
        subprocess.run([HIOPS, "run", "--name=layout", f"--filename={data_file(a, r)}", f"--size={a.size}",
                        "--rw=write", "--bs=1m", "--no-progress"], check=True, capture_output=True)


def check_hiops():
    if not os.path.exists(HIOPS):
        sys.exit("build first: cargo build --release --features mpi")
    doc = run_json(["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "2", HIOPS, "run",
                    "--output-format=json", "--no-progress", "--ioengine=null", "--size=1m", "--runtime=1"])
    if "client_stats" not in doc:
        sys.exit("hiops did not merge two ranks: build it with cargo build --release --features mpi")
    return doc["hiops"]["phases"][0]["tsc_hz"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=10)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--size", default="1g")
    ap.add_argument("--engine", default="io_uring")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    a = ap.parse_args()
    ranks = [int(n) for n in a.ranks.split(",")]
    tsc = check_hiops()
    fio_jobs, hiops_job = write_jobs(a, ranks)
    servers = []
    try:
        lay_out(a, max(ranks))
        servers = start_servers(max(ranks))
        print(f"# fio {subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()} (--client, "
              f"one --server per client on localhost), hiops "
              f"{subprocess.run([HIOPS, '--version'], capture_output=True, text=True).stdout.strip()} (mpirun), "
              f"TSC {tsc/1e9:.3f} GHz, {a.pairs} pairs x {a.runtime}s (+1s ramp), alternating fio/hiops, "
              f"{a.engine} QD32 4k randread direct, {a.size} per client")
        print("| clients | fio IOPS | hiops IOPS | IOPS ratio | fio p99 us | hiops p99 us | p99 ratio "
              "| fio machine clk/IO | hiops machine clk/IO | machine ratio |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for n in ranks:
            fio_runs, hiops_runs = [], []
            for _ in range(a.pairs):
                fio_runs.append(figures(*timed(fio_cmd(fio_jobs, n)), tsc))
                hiops_runs.append(figures(*timed(hiops_cmd(hiops_job, n)), tsc))
            med = statistics.median
            col = lambda runs, i: med([r[i] for r in runs])
            ratio = lambda i: med([h[i] / f[i] for f, h in zip(fio_runs, hiops_runs)])
            print(f"| {n} | {col(fio_runs, 0):.0f} | {col(hiops_runs, 0):.0f} | {ratio(0):.3f} "
                  f"| {col(fio_runs, 1):.1f} | {col(hiops_runs, 1):.1f} | {ratio(1):.3f} "
                  f"| {col(fio_runs, 2):.0f} | {col(hiops_runs, 2):.0f} | {ratio(2):.3f} |", flush=True)
    finally:
        for s in servers:
            try:
                os.killpg(s.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            s.wait()
        for r in range(max(ranks)):
            for path in (data_file(a, r), fio_jobs[r]):
                if os.path.exists(path):
                    os.remove(path)
        os.remove(hiops_job)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""hiops kv serve against redis-server under redis-benchmark, alternating.

Each pair runs the same redis-benchmark command against hiops and against
redis-server, in turn, for --pairs pairs; prints requests per second and
p50/p99 per round, and the median hiops/redis ratio. Configurations:

  memory   hiops --durability buffered  vs  redis --save '' --appendonly no
  durable  hiops --durability sync      vs  redis --appendonly yes --appendfsync always

Beside each round's rates, the CPU each server and the client
(redis-benchmark) spent per GET (/proc and getrusage: 10 ms ticks here),
so a round limited by the single-threaded client (over TLS it spends most
of the crypto) reads as such.

and the idle-clients check: N idle connections to each server, then each
server's resident memory and thread count from /proc.

  python3 bench/kv_vs_redis.py --pairs 5 --clients 50
  python3 bench/kv_vs_redis.py --pairs 5 --clients 1000
  python3 bench/kv_vs_redis.py --idle 5000
  python3 bench/kv_vs_redis.py --model threads   # the thread-per-connection server
  python3 bench/kv_vs_redis.py --workers 1       # one runtime thread (the client keeps a CPU)
  python3 bench/kv_vs_redis.py --tls             # both servers over TLS (a self-signed certificate)
  python3 bench/kv_vs_redis.py --tls-cost        # hiops plain against hiops over TLS
  python3 bench/kv_vs_redis.py --tls-cost redis  # the same for redis-server
  python3 bench/kv_vs_redis.py --before /var/tmp/hiops-old  # an earlier build of hiops in the same rounds

With --before, every round runs three servers in turn (the earlier build,
this build, redis-server; the order rotates from round to round), and
prints each build's ratio to redis-server and this build's to the earlier
one.

Needs openssl for --tls and --tls-cost.

Needs redis-server and redis-benchmark (apt-get install redis-server).
"""
import argparse
import csv
import io
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

EXE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "hiops")


def wait_port(port, proc):
    for _ in range(300):
        if proc.poll() is not None:
            sys.exit(f"server on port {port} exited: {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {port}")


def make_certificate(tmp):
    """A self-signed certificate and key for localhost: (cert, key)."""
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    return cert, key


def start_hiops(a, durable, port, tmp, tls=None, exe=EXE):
    path = os.path.join(tmp, "kv.dat")
    cmd = [exe, "kv", "serve", "--path", path, "--size", "2g", "--port", str(port),
           "--durability", "sync" if durable else "buffered", "--model", a.model,
           "--max-clients", "100000"] + (["--workers", str(a.workers)] if a.workers else [])
    if tls:
        cmd += ["--tls-cert-file", tls[0], "--tls-key-file", tls[1]]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, p)
    return p


def start_redis(durable, port, tmp, tls=None):
    cmd = ["redis-server", "--save", "", "--dir", tmp, "--maxclients", "100000"]
    if tls:
        cmd += ["--port", "0", "--tls-port", str(port), "--tls-cert-file", tls[0],
                "--tls-key-file", tls[1], "--tls-ca-cert-file", tls[0], "--tls-auth-clients", "no"]
    else:
        cmd += ["--port", str(port)]
    cmd += ["--appendonly", "yes", "--appendfsync", "always"] if durable else ["--appendonly", "no"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, p)
    return p


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def wait_space(path, free, slack=64 << 20, most=30.0):
    """Waits (at most `most` s) until `path`'s file system has `free`
    bytes free again: a stopped server's io_uring lets go of its store's
    file a little after it exits, and on a nearly full disk the next
    server's 2 GiB store would be refused until then."""
    os.sync()
    end = time.time() + most
    while free_bytes(path) + slack < free and time.time() < end:
        time.sleep(0.2)


def cpu_seconds(pid):
    """utime + stime of a process, from /proc (USER_HZ ticks)."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def bench(port, a, tls, server_pid):
    """Each test in a redis-benchmark run of its own (as -t set,get runs
    them, one after the other): {test: (rps, p50, p99, server us/request,
    client us/request)}; CPU from /proc and getrusage."""
    out = {}
    for t in ("SET", "GET"):
        cmd = ["redis-benchmark", "-p", str(port), "-t", t.lower(), "-n", str(a.requests),
               "-c", str(a.clients), "-d", "100", "-r", str(a.keys), "--csv"]
        cmd += ["--tls", "--insecure"] if tls else []
        s0, c0 = cpu_seconds(server_pid), resource.getrusage(resource.RUSAGE_CHILDREN)
        text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        s1, c1 = cpu_seconds(server_pid), resource.getrusage(resource.RUSAGE_CHILDREN)
        row = next(r for r in csv.DictReader(io.StringIO(text)) if r["test"] == t)
        client = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
        per = lambda sec: sec / a.requests * 1e6
        out[t] = (float(row["rps"]), float(row["p50_latency_ms"]), float(row["p99_latency_ms"]),
                  per(s1 - s0), per(client))
    return out


def proc_status(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def idle_check(a, tmp):
    """N idle clients on each server: resident MiB and threads."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    for name, start in (("hiops", lambda p: start_hiops(a, False, p, tmp)),
                        ("redis", lambda p: start_redis(False, p, tmp))):
        port = 7400 if name == "hiops" else 7401
        proc = start(port)
        began = time.time()
        socks = []
        for _ in range(a.idle):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"PING\r\n")
            socks.append(s)
        for s in socks:
            s.recv(16)
        took = time.time() - began
        rss = proc_status(proc.pid, "VmRSS") / 1024
        threads = proc_status(proc.pid, "Threads")
        print(f"{name}: {a.idle} idle clients in {took:.1f} s: {rss:.0f} MiB resident, {threads} threads")
        for s in socks:
            s.close()
        proc.terminate()
        proc.wait()


def sides(a, tls):
    """The two servers of a pair: (name, start(durable, port, dir), TLS on)."""
    hiops = lambda t: (lambda d, p, dir: start_hiops(a, d, p, dir, t))
    redis_on = lambda t: (lambda d, p, dir: start_redis(d, p, dir, t))
    if a.tls_cost:
        start = hiops if a.tls_cost == "hiops" else redis_on
        return [(a.tls_cost, start(None), False), (f"{a.tls_cost}-tls", start(tls), True)]
    redis = redis_on(tls)
    both = [("hiops", hiops(tls), bool(tls)), ("redis", redis, bool(tls))]
    if a.before:
        before = lambda d, p, dir: start_hiops(a, d, p, dir, tls, a.before)
        both.insert(0, ("before", before, bool(tls)))
    return both


def serve_and_bench(start, on_tls, port, a, durable, tmp):
    """One server started in a fresh directory, measured, stopped; its
    store's space is back before the next one starts."""
    free = free_bytes(tmp)
    d = tempfile.mkdtemp(dir=tmp)
    proc = start(durable, port, d)
    try:
        return bench(port, a, on_tls, proc.pid)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)
        wait_space(tmp, free)


def rounds_with_before(a, durable, tmp, tls):
    """The earlier build, this build and redis-server in each round, in
    rotating order: per-round ratios to redis, and this build's to the
    earlier one."""
    label = ("durable" if durable else "memory") + (" over TLS" if a.tls else "")
    servers = sides(a, tls)
    names = [s[0] for s in servers]
    print(f"\n{label}: redis-benchmark -t set (then get) -n {a.requests} -c {a.clients} -d 100 -r {a.keys}")
    print("| round | " + " | ".join(f"{n} SET/s | {n} GET/s | {n} GET server us/req" for n in names) + " |")
    print("| ---: |" + " ---: | ---: | ---: |" * len(names))
    ratios = {(n, t): [] for n in ("before", "hiops", "after/before") for t in ("SET", "GET")}
    cpu = {(n, t): [] for n in ("before", "hiops", "after/before") for t in ("SET", "GET")}
    for i in range(a.pairs):
        res = {}
        k = i % len(servers)
        for j, (who, start, on_tls) in enumerate(servers[k:] + servers[:k]):
            res[who] = serve_and_bench(start, on_tls, 7410 + j, a, durable, tmp)
        for t in ("SET", "GET"):
            for n, base in (("before", "redis"), ("hiops", "redis"), ("after/before", "before")):
                top = "hiops" if n == "after/before" else n
                ratios[(n, t)].append(res[top][t][0] / res[base][t][0])
                cpu[(n, t)].append(res[top][t][3] / res[base][t][3])
        print(f"| {i + 1} | " + " | ".join(
            f"{res[n]['SET'][0]:,.0f} | {res[n]['GET'][0]:,.0f} | {res[n]['GET'][3]:.1f}" for n in names) + " |")
    med = statistics.median
    for n, what in (("before", "the earlier build / redis"), ("hiops", "this build / redis"),
                    ("after/before", "this build / the earlier build")):
        print(f"median per-round {what} ({label}): SET {med(ratios[(n, 'SET')]):.2f}, GET {med(ratios[(n, 'GET')]):.2f}; "
              f"server CPU per request: SET {med(cpu[(n, 'SET')]):.2f}, GET {med(cpu[(n, 'GET')]):.2f}")


def pairs(a, durable, tmp, tls):
    if a.before:
        return rounds_with_before(a, durable, tmp, tls)
    label = ("durable" if durable else "memory") + (" over TLS" if a.tls else "")
    (na, _, _), (nb, _, _) = both = sides(a, tls)
    ratios = {"SET": [], "GET": []}
    cpu = {"SET": [], "GET": []}
    print(f"\n{label}: redis-benchmark -t set (then get) -n {a.requests} -c {a.clients} -d 100 -r {a.keys}")
    print(f"| round | {na} SET/s | {nb} SET/s | {na} GET/s | {nb} GET/s | {na} GET p50/p99 ms | {nb} GET p50/p99 ms "
          f"| GET server us/req {na} / {nb} | GET client us/req {na} / {nb} |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for i in range(a.pairs):
        res = {}
        for k, (who, start, on_tls) in enumerate(both if i % 2 == 0 else both[::-1]):
            res[who] = serve_and_bench(start, on_tls, 7410 + k, a, durable, tmp)
        h, r = res[na], res[nb]
        for t in ratios:
            ratios[t].append(h[t][0] / r[t][0])
            cpu[t].append(h[t][3] / r[t][3])
        print(f"| {i + 1} | {h['SET'][0]:,.0f} | {r['SET'][0]:,.0f} | {h['GET'][0]:,.0f} | {r['GET'][0]:,.0f} "
              f"| {h['GET'][1]:.3f}/{h['GET'][2]:.3f} | {r['GET'][1]:.3f}/{r['GET'][2]:.3f} "
              f"| {h['GET'][3]:.1f} / {r['GET'][3]:.1f} | {h['GET'][4]:.1f} / {r['GET'][4]:.1f} |")
    print(f"median {na}/{nb} ({a.model} model, workers {a.workers or 'per CPU'}, {label}): SET {statistics.median(ratios['SET']):.2f}, "
          f"GET {statistics.median(ratios['GET']):.2f}; server CPU per request: SET {statistics.median(cpu['SET']):.2f}, "
          f"GET {statistics.median(cpu['GET']):.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--keys", type=int, default=100000, help="redis-benchmark -r: random keys")
    ap.add_argument("--model", default="tasks", choices=["tasks", "threads"])
    ap.add_argument("--workers", type=int, default=0,
                    help="hiops' runtime threads (0: one per CPU); 1 leaves redis-benchmark a CPU, as single-threaded redis does")
    ap.add_argument("--idle", type=int, default=0, help="only the idle-clients check, with N clients")
    ap.add_argument("--only", choices=["memory", "durable"], help="one configuration only")
    ap.add_argument("--tls", action="store_true", help="both servers over TLS")
    ap.add_argument("--before", metavar="HIOPS",
                    help="an earlier build of hiops, run in the same rounds (three servers a round)")
    ap.add_argument("--tls-cost", nargs="?", const="hiops", choices=["hiops", "redis"],
                    help="one server plain against itself over TLS (hiops unless named)")
    a = ap.parse_args()
    if a.before and a.tls_cost:
        sys.exit("--before compares builds against redis-server: leave out --tls-cost")
    if a.before and not os.access(a.before, os.X_OK):
        sys.exit(f"--before {a.before}: not an executable hiops")
    if (a.tls or a.tls_cost) and not shutil.which("openssl"):
        sys.exit("openssl not found (for the test certificate): apt-get install openssl")
    for tool in ("redis-server", "redis-benchmark"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: apt-get install redis-server")
    if not os.path.exists(EXE):
        subprocess.run(["cargo", "build", "--release", "-q"], check=True,
                       cwd=os.path.join(os.path.dirname(EXE), "..", ".."))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        if a.idle:
            return idle_check(a, tmp)
        tls = make_certificate(tmp) if (a.tls or a.tls_cost) else None
        for durable in (False, True):
            if a.only and a.only != ("durable" if durable else "memory"):
                continue
            pairs(a, durable, tmp, tls)


if __name__ == "__main__":
    main()

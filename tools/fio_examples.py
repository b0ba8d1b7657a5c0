#!/usr/bin/env python3
"""Runs the job files of fio's examples/ folder through two fios, shortened.

Usage: python3 tools/fio_examples.py EXAMPLES_DIR FIO_A FIO_B [NAME.fio ...]

Each job file is shortened as a user trying it on a small machine would:
a [global] section first with runtime=2 (and size=64m where the file gives
no size of its own), every size, filesize and io_size above 64 MiB cut to
64m, runtime to 2 s, ramp_time to 1 s, directory= dropped and an absolute
filename (a device) turned into a file of the same name in the run's own
directory. Each program runs it in a fresh directory under /var/tmp with
--output-format=json; a line per file gives each one's exit status, its job
count in the JSON and the first line it printed. A run past 90 s is ended
with its process group (fio's forked jobs too).

FIO_B is hiops answering as fio: a link named fio to the hiops binary
(`hiops install-fio-link DIR`). docs/output.md has the counts.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

SIZE_CAP = 64 << 20
UNITS = {'': 1, 'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30, 't': 1 << 40}
SIZE_KEYS = ('size', 'filesize', 'io_size', 'io_limit')


def parse_size(text):
    """Bytes of a plain size such as 100m or 4Gi; None for anything else."""
    m = re.fullmatch(r'\s*(\d+)\s*([kmgt]?)i?b?\s*', text.lower())
    return int(m.group(1)) * UNITS[m.group(2)] if m else None


def shorten_line(line):
    m = re.match(r'^\s*(\w+)\s*=\s*(.*)$', line)
    if not m:
        return line
    key, value = m.group(1), m.group(2)
    if key in SIZE_KEYS:
        n = parse_size(value)
        return f"{key}=64m" if n is not None and n > SIZE_CAP else line
    if key == 'runtime':
        return "runtime=2"
    if key == 'ramp_time':
        return "ramp_time=1"
    if key == 'directory':
        return "; " + line
    if key == 'filename':
        names = [("f_" + re.sub(r'[^A-Za-z0-9_.]', '_', n.strip('/')))
                 if n.startswith('/') else n for n in value.split(':')]
        return "filename=" + ":".join(names)
    return line


def shorten(text):
    sized = re.search(r'^\s*(' + '|'.join(SIZE_KEYS) + r')\s*=', text, re.M)
    head = ["[global]", "runtime=2"] + ([] if sized else ["size=64m"]) + [""]
    return "\n".join(head + [shorten_line(l) for l in text.splitlines()]) + "\n"


def kill_in(wd):
    """SIGKILL to every process whose working directory is `wd`."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd") == os.path.realpath(wd):
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def run(program, job, wd):
    """(exit status or 'timeout', jobs in the JSON or None, first line)."""
    p = subprocess.Popen([program, "--output-format=json", "--output=out.json", job],
                         cwd=wd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=90)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        # fio's forked jobs may sit in sessions of their own, holding the
        # output pipe: any process still working in the run's directory.
        kill_in(wd)
        try:
            out, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out = b""
        rc = "timeout"
    jobs = None
    try:
        with open(os.path.join(wd, "out.json")) as f:
            text = f.read()
        jobs = len(json.loads(text[text.index('{'):])["jobs"])
    except (OSError, ValueError, KeyError):
        pass
    lines = out.decode(errors='replace').strip().splitlines()
    return rc, jobs, lines[0][:150] if lines else ""


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    exdir, programs, only = sys.argv[1], sys.argv[2:4], sys.argv[4:]
    for name in sorted(os.listdir(exdir)):
        if not name.endswith(".fio") or (only and name not in only):
            continue
        with open(os.path.join(exdir, name)) as f:
            text = shorten(f.read())
        cells = []
        for program in programs:
            wd = tempfile.mkdtemp(dir="/var/tmp", prefix="fio-example-")
            job = os.path.join(wd, name)
            with open(job, "w") as f:
                f.write(text)
            rc, jobs, first = run(program, job, wd)
            cells.append(f"rc={rc} jobs={jobs} | {first}")
            shutil.rmtree(wd, ignore_errors=True)
        print(name, *cells, sep="\t", flush=True)


if __name__ == "__main__":
    main()

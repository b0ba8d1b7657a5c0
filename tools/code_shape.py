#!/usr/bin/env python3
"""Counts of the code's shape, over the non-test Rust code under crates/.

Prints what a reader of the code tends to trip on: errors carried as
strings and the bridges that make them, figures looked up by string key
(string-keyed maps, JSON values read by literal key), long functions and
files, module cycles inside a crate (through `crate::` and `super::`
paths, paths into a child module and re-exports), the job model's public
fields, assertions per 1k lines in each crate, unused dependencies, crates
that could forbid unsafe code, and the CLI's size. Run from the repository's root: `python3 tools/code_shape.py`.
Approximate by design (a line scanner, not a Rust parser): the counts are
for comparing two versions of the tree, not for exact audits.
"""

import json
import os
import re
import subprocess
import sys
from collections import defaultdict

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
CRATES = os.path.join(ROOT, "crates")
FN_RE = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"C\"\s+)?fn\s+(\w+)")
TEST_MOD_RE = re.compile(r"^\s*#\[cfg\(test\)\]\s*$")


def source_files():
    """(crate, path relative to the crate's src/, full path) of non-test code."""
    for crate in sorted(os.listdir(CRATES)):
        src = os.path.join(CRATES, crate, "src")
        for dirpath, _, names in os.walk(src):
            for name in sorted(names):
                if not name.endswith(".rs") or name == "tests.rs":
                    continue
                full = os.path.join(dirpath, name)
                yield crate, os.path.relpath(full, src), full


def non_test_lines(full):
    """The file's lines up to its first `#[cfg(test)]` item (tests sit last)."""
    lines = open(full, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if TEST_MOD_RE.match(line) and i + 1 < len(lines) and "mod " in lines[i + 1]:
            return lines[:i]
    return lines


def strip_strings(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "' '", line)
    return line.split("//", 1)[0]


def long_functions(lines, limit=70):
    """(name, length) of each fn whose body runs over `limit` lines."""
    out = []
    i = 0
    while i < len(lines):
        m = FN_RE.match(lines[i])
        if not m:
            i += 1
            continue
        depth, start, opened = 0, i, False
        j = i
        while j < len(lines):
            code = strip_strings(lines[j])
            if not opened and ";" in code and "{" not in code:
                break  # a declaration without a body
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                break
            j += 1
        length = j - start + 1
        if opened and length > limit:
            out.append((m.group(7), length))
        i = j + 1 if opened else i + 1
    return out


def module_of(rel):
    """src-relative path to a module path: a/b.rs -> a::b, a/mod.rs -> a."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return "::".join(parts)


def module_edges(crate_files):
    """Edges between a crate's modules from `crate::` and `super::` paths."""
    modules = {module_of(rel) for rel, _ in crate_files}
    edges = defaultdict(set)
    for rel, lines in crate_files:
        me = module_of(rel)
        here = me.split("::") if me else []
        if rel.endswith("mod.rs") or rel in ("lib.rs", "main.rs"):
            parent = here[:-1]
        else:
            parent = here[:-1]
        code = "\n".join(strip_strings(line) for line in lines)
        # A glob (`use super::*`) depends on the whole module.
        code = re.sub(r"\b(crate|super)::\*", r"\1::__glob", code)
        # A group (`use super::{a::B, C}`) is one path per member.
        code = re.sub(r"\b((?:crate|super|self)(?:::\w+)*)::\{([^{}]*)\}",
                      lambda g: " ".join(f"{g.group(1)}::{m.strip()}"
                                         for m in g.group(2).split(",") if m.strip()),
                      code)
        for m in re.finditer(r"\b(crate|super)((?:::\w+)+)", code):
            path = [p for p in m.group(2).split("::") if p]
            base = [] if m.group(1) == "crate" else parent
            full = base + path
            target = None
            for k in range(len(full), 0, -1):
                cand = "::".join(full[:k])
                if cand in modules:
                    target = cand
                    break
            if target is not None and target != me and target != "":
                edges[me].add(target)
        # A path into a child module (`child::f`, `self::child::T`, a
        # `pub use child::T` re-export): the parent depends on it too.
        for m in re.finditer(r"(?<![\w:])(?:self::)?(\w+)::", code):
            child = "::".join(here + [m.group(1)])
            if child in modules and child != me:
                edges[me].add(child)
    return modules, edges


def cycles(modules, edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(modules):
        if v not in index:
            visit(v)
    return out


def unused_dependencies():
    """(crate, dependency) pairs of normal dependencies whose library name
    never appears in the crate's src/ (from `cargo metadata`, which knows
    each package's library name: md-5 is `md5`)."""
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--offline",
         "--filter-platform", "x86_64-unknown-linux-gnu"],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout)
    lib_names = {}
    for pkg in meta["packages"]:
        for target in pkg["targets"]:
            if "lib" in target["kind"] or "proc-macro" in target["kind"]:
                lib_names[pkg["name"]] = target["name"].replace("-", "_")
    out = []
    members = set(meta["workspace_members"])
    for pkg in meta["packages"]:
        src = os.path.join(os.path.dirname(pkg["manifest_path"]), "src")
        if pkg["id"] not in members or not os.path.isdir(src):
            continue
        text = "\n".join(open(os.path.join(d, n), encoding="utf-8").read()
                         for d, _, names in os.walk(src) for n in names if n.endswith(".rs"))
        for dep in pkg["dependencies"]:
            if dep["kind"] is not None:
                continue  # dev and build dependencies are not the crate's code
            name = dep.get("rename") or lib_names.get(dep["name"], dep["name"].replace("-", "_"))
            if not re.search(rf"\b{re.escape(name)}\b", text):
                out.append((pkg["name"], dep["name"]))
    return out


JSON_KEY_RE = re.compile(r"""(\.get\(\s*"[\w.-]+"\s*\)|\[\s*"[\w.-]+"\s*\]|\.pointer\(\s*"/)""")
ASSERT_RE = re.compile(r"\b(debug_)?assert(_eq|_ne)?!")
BRIDGE_RE = re.compile(r"impl\s+From<[^>]+>\s+for\s+String\b")
STRINGIFY_RE = re.compile(r"map_err\(\s*\|\w+\|\s*\w+\.to_string\(\)\s*\)|map_err\(\s*\|\w+\|\s*format!")


ASSIGN_RE = re.compile(r"(?<![=!<>+\-*/])=(?!=)")


def json_key_lookups(text):
    """Reads of a JSON value by a literal key (`v["iops"]`, `.get("iops")`,
    `.pointer("/a")`) in files that use serde_json's Value: a figure read
    by name, with no type to say it is there. A key on the left of an
    assignment (`obj["bw_min"] = json!(..)`) writes fio's document in its
    own key order and is counted apart, by `json_key_writes`."""
    if "serde_json::Value" not in text and "Value::" not in text:
        return 0
    return sum(len(JSON_KEY_RE.findall(read)) for read, _ in assignment_sides(text))


def json_key_writes(text):
    """Keys written into a JSON value by name (the left of an assignment)."""
    if "serde_json::Value" not in text and "Value::" not in text:
        return 0
    return sum(len(JSON_KEY_RE.findall(left)) for _, left in assignment_sides(text))


def assignment_sides(text):
    """Each line as (what it reads, what it assigns to): a line with a
    plain `=` assigns to its left side and reads its right."""
    out = []
    for line in text.splitlines():
        m = ASSIGN_RE.search(line)
        if m and "let " not in line[: m.start()] and JSON_KEY_RE.search(line[: m.start()]):
            out.append((line[m.end():], line[: m.start()]))
        else:
            out.append((line, ""))
    return out


def public_job_fields():
    """Public fields of the job model's structs: `pub` fields of every
    struct in the files that define JobBuilder, JobSpec and their parts
    (the builder's are set by the front ends before the job is built)."""
    spec = os.path.join(CRATES, "job", "src", "spec")
    if not os.path.isdir(spec):
        return None
    n = 0
    for dirpath, _, names in os.walk(spec):
        for name in names:
            if name.endswith(".rs"):
                for line in non_test_lines(os.path.join(dirpath, name)):
                    if re.match(r"^\s+pub\s+\w+\s*:", line):
                        n += 1
    return n


def job_settable_after_build():
    """Ways to change a built JobSpec in place: public fields of JobSpec
    itself, or a DerefMut to its builder (0: only by building again)."""
    path = os.path.join(CRATES, "job", "src", "spec", "mod.rs")
    if not os.path.exists(path):
        return None
    text = "\n".join(non_test_lines(path))
    m = re.search(r"pub struct JobSpec(\([^)]*\)|\s*\{[^}]*\})", text)
    if not m:
        return None
    public = len(re.findall(r"\bpub\b", m.group(1)))
    deref_mut = len(re.findall(r"impl\s+(std::ops::)?DerefMut\s+for\s+JobSpec", text))
    return public + deref_mut


def main():
    by_crate = defaultdict(list)
    string_results = defaultdict(int)
    string_maps = 0
    long_fns = []
    long_files = []
    unsafe_crates = set()
    forbidding = set()
    json_keys = defaultdict(int)
    json_writes = defaultdict(int)
    asserts = defaultdict(int)
    bridges = defaultdict(int)
    for crate, rel, full in source_files():
        lines = non_test_lines(full)
        by_crate[crate].append((rel, lines))
        text = "\n".join(lines)
        string_results[crate] += len(re.findall(r"Result<[^;{]*?,\s*String>", text))
        string_maps += len(re.findall(r"BTreeMap<String,\s*f64>", text))
        json_keys[crate] += json_key_lookups(text)
        json_writes[crate] += json_key_writes(text)
        asserts[crate] += len(ASSERT_RE.findall(text))
        bridges[crate] += len(BRIDGE_RE.findall(text)) + len(STRINGIFY_RE.findall(text))
        long_fns += [(f"{crate}/{rel}", n, k) for n, k in long_functions(lines)]
        if len(lines) > 600:
            long_files.append((len(lines), f"{crate}/{rel}"))
        if re.search(r"\bunsafe\b", text):
            unsafe_crates.add(crate)
        if "#![forbid(unsafe_code)]" in text:
            forbidding.add(crate)
    print("Result<_, String> in non-test code:", sum(string_results.values()))
    for crate, n in sorted(string_results.items(), key=lambda kv: -kv[1]):
        if n:
            print(f"  {crate}: {n}")
    print("BTreeMap<String, f64>:", string_maps)
    print(f"functions over 70 lines: {len(long_fns)}")
    for path, name, n in sorted(long_fns, key=lambda t: -t[2]):
        print(f"  {n:5} {path} {name}")
    print(f"files over 600 lines: {len(long_files)}")
    for n, path in sorted(long_files, reverse=True):
        print(f"  {n:5} {path}")
    cli = sum(len(lines) for _, lines in by_crate.get("cli", []))
    print("CLI lines (crates/cli/src, non-test):", cli)
    print("module cycles:")
    found = 0
    for crate, files in sorted(by_crate.items()):
        modules, edges = module_edges(files)
        for comp in cycles(modules, edges):
            found += 1
            print(f"  {crate}: {{{', '.join(comp)}}}")
    print(f"  {found} in all")
    print_per_crate("JSON reads by literal key", json_keys)
    print_per_crate("JSON keys written by name (fio's document built in its key order)", json_writes)
    print_per_crate("String bridges (From<_> for String, map_err to a string)", bridges)
    print("public fields of the job model's builder (job/src/spec):", public_job_fields())
    print("ways to change a built JobSpec in place:", job_settable_after_build())
    print("assertions per 1k non-test lines:")
    for crate, files in sorted(by_crate.items()):
        lines = sum(len(l) for _, l in files)
        print(f"  {crate:8} {1000 * asserts[crate] / max(lines, 1):5.1f}  ({asserts[crate]} in {lines} lines)")
    unused = unused_dependencies()
    print("unused dependencies:", ", ".join(f"{c} -> {d}" for c, d in unused) or "none")
    could = sorted(set(by_crate) - unsafe_crates - forbidding)
    print("crates with no unsafe code that do not forbid it:", ", ".join(could) or "none")


def print_per_crate(what, counts):
    print(f"{what}: {sum(counts.values())}")
    for crate, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        if n:
            print(f"  {crate}: {n}")


if __name__ == "__main__":
    main()

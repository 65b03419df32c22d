#!/usr/bin/env python3
"""Checks the minimum supported Rust version (`rust-version` in Cargo.toml).

The machine has one toolchain, so the MSRV cannot be built here; instead:
- every crate the proxy builds with (normal and build dependencies, walked
  from a2a-tap through Cargo.lock) declares a rust-version at most ours;
- the Dockerfile's builder image is that version;
- our own code is held to it by clippy's `incompatible_msrv` lint, which
  reads rust-version (scripts/test.sh runs clippy with -D warnings).
Exits 1 naming every crate or file that disagrees.
"""
import json
import re
import subprocess
import sys


def version(text):
    return tuple(int(x) for x in text.split(".")[:3]) + (0,) * (3 - len(text.split(".")[:3]))


meta = json.loads(subprocess.run(
    ["cargo", "metadata", "--format-version", "1", "--locked"],
    check=True, capture_output=True, text=True).stdout)
packages = {p["id"]: p for p in meta["packages"]}
root = meta["resolve"]["root"]
ours = packages[root]["rust_version"]
if not ours:
    sys.exit("msrv: Cargo.toml has no rust-version")
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}

seen, todo = set(), [root]
while todo:
    node = nodes[todo.pop()]
    for dep in node["deps"]:
        kinds = {k["kind"] for k in dep["dep_kinds"]}
        if node["id"] == root and kinds <= {"dev"}:
            continue  # test-only: built by the toolchain that runs the tests
        if dep["pkg"] not in seen:
            seen.add(dep["pkg"])
            todo.append(dep["pkg"])

problems = []
for pid in sorted(seen, key=lambda i: packages[i]["name"]):
    p = packages[pid]
    if p["rust_version"] and version(p["rust_version"]) > version(ours):
        problems.append(f"{p['name']} {p['version']} needs Rust {p['rust_version']}")

dockerfile = open("Dockerfile", encoding="utf-8").read()
m = re.search(r"^FROM \S*rust:(\d+\.\d+(?:\.\d+)?)\S* AS build", dockerfile, re.M)
if not m:
    problems.append("Dockerfile: no `FROM ...rust:X.Y... AS build` stage")
elif version(m.group(1)) != version(ours):
    problems.append(f"Dockerfile builds with Rust {m.group(1)}, Cargo.toml says {ours}")

for p in problems:
    print(f"msrv: {p} (rust-version = {ours})", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"msrv: {len(seen)} crates built into a2a-tap accept Rust {ours}; the Dockerfile builds with it")

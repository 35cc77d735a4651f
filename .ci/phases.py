#!/usr/bin/env python3
"""Prints how long each phase of `make test` took, from the start marks the Makefile wrote
(`<phase> <unix seconds>` per line, the last one `end`)."""

import sys

GROUPS = {
    "installs (toolchain, Chromium, PostgreSQL, Poppler, hadolint, nginx, Caddy)": {
        "tools", "tools-e2e", "tools-db", "tools-pdf", "tools-ops", "tools-proxy"},
    "docs links": {"docs-check"},
    "fmt": {"fmt-check"},
    "clippy (ssr + hydrate)": {"clippy"},
    "Rust tests (cargo test)": {"unit", "server-test"},
    "the page's build (WebAssembly, split, optimized, assets)": {"site"},
    "Playwright": {"e2e"},
    "size and corpus checks": {"size-check", "corpus-check"},
    "compose, Dockerfile lint, container smoke, reverse proxies": {
        "compose-check", "dockerfile-lint", "container-smoke", "proxy-check"},
}


def main(path):
    marks = []
    with open(path) as f:
        for line in f:
            name, _, at = line.strip().rpartition(" ")
            if name and at.isdigit():
                marks.append((name, int(at)))
    if len(marks) < 2:
        return
    spent = {}
    for (name, at), (_, after) in zip(marks, marks[1:]):
        spent[name] = spent.get(name, 0) + after - at
    total = marks[-1][1] - marks[0][1]
    print("\n| phase of make test | time |\n|---|---|")
    for label, names in GROUPS.items():
        secs = sum(spent.pop(n, 0) for n in names)
        print(f"| {label} | {secs // 60} min {secs % 60:02d} s |")
    for name, secs in spent.items():
        print(f"| {name} | {secs // 60} min {secs % 60:02d} s |")
    print(f"| **all** | **{total // 60} min {total % 60:02d} s** |")


if __name__ == "__main__":
    main(sys.argv[1])

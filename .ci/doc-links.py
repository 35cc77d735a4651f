#!/usr/bin/env python3
"""Checks the links of README.md and the book (docs/src), without mdBook.

- every relative link and image (`[t](path)`, `![a](path)`, `[t]: path`, `href=`/`src=` in HTML)
  names a file that exists; a link from a chapter stays inside docs/src (the built book holds
  nothing else);
- every `#anchor` (alone, or after a path to a markdown file) names a heading of that file, by
  the slug rule mdBook and GitHub share: the heading's text without markup, lower-cased, with
  everything but letters, digits, `_`, `-` and spaces dropped and each space a `-`; a repeated
  heading gets `-1`, `-2`, …; `{#id}` and HTML `id`/`name` attributes count too;
- every entry of docs/src/SUMMARY.md exists, and every chapter file under docs/src is an entry.

Links inside code (fenced blocks, code spans) and absolute URLs are not checked. Exits 1 and names
each broken link, with its file and line.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOK = os.path.join(ROOT, "docs", "src")

# Files a link may name before they are committed: warned about while absent, an error once they
# exist (then delete the line here). Paths relative to the repository.
PENDING: set[str] = set()

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']*)["']""")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
EXPLICIT_ID = re.compile(r"\s*\{#([^}\s]+)[^}]*\}\s*$")
HTML_ID = re.compile(r"""\b(?:id|name)\s*=\s*["']([^"']+)["']""")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if fence is None and m:
                fence = m.group(1)[0] * len(m.group(1))
                continue
            if fence is not None:
                if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                    fence = None
                continue
            yield n, line.rstrip("\n")


def plain(text):
    """A heading's text as it reads: no code marks, links, images, emphasis or HTML tags."""
    text = CODE_SPAN.sub(lambda m: m.group(2), text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(?<!\w)_(.+?)_(?!\w)", r"\1", text)
    return text.replace("*", "")


def slug(text):
    out = []
    for ch in plain(text).strip().lower():
        if ch.isalnum() or ch in "_-":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


_anchors = {}


def anchors(path):
    if path not in _anchors:
        found, seen = set(), {}
        for _, line in prose_lines(path):
            found.update(HTML_ID.findall(line))
            m = HEADING.match(line)
            if not m:
                continue
            text = m.group(2)
            explicit = EXPLICIT_ID.search(text)
            if explicit:
                found.add(explicit.group(1))
                continue
            base = slug(text)
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        _anchors[path] = found
    return _anchors[path]


def targets(line):
    bare = CODE_SPAN.sub("", line)
    for m in INLINE.finditer(bare):
        yield m.group(1)
    m = REFDEF.match(bare)
    if m:
        yield m.group(1)
    for m in HTML_ATTR.finditer(bare):
        yield m.group(1)


def rel(path):
    return os.path.relpath(path, ROOT)


def check(path, errors, warnings, linked):
    here = os.path.dirname(path)
    in_book = path.startswith(BOOK + os.sep)
    for n, line in prose_lines(path):
        for target in targets(line):
            target = target.strip("<>")
            where = f"{rel(path)}:{n}: {target}"
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                continue  # absolute: not checked here
            if target == "":
                errors.append(f"{where}: empty link")
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, file_part)) if file_part else path
            if file_part:
                if in_book and not dest.startswith(BOOK + os.sep):
                    errors.append(f"{where}: leaves docs/src (the built book holds only docs/src)")
                    continue
                if not os.path.exists(dest):
                    if rel(dest) in PENDING:
                        warnings.append(f"{where}: not there yet (pending in .ci/doc-links.py)")
                    else:
                        errors.append(f"{where}: no such file")
                    continue
                linked.add(dest)
            if anchor:
                if not dest.endswith(".md"):
                    errors.append(f"{where}: an anchor into a file that is not markdown")
                elif anchor not in anchors(dest):
                    errors.append(f"{where}: no heading with the anchor #{anchor} in {rel(dest)}")


def main():
    errors, warnings = [], []
    chapters = []
    for d, _, files in os.walk(BOOK):
        chapters += [os.path.join(d, f) for f in files if f.endswith(".md")]
    summary = os.path.join(BOOK, "SUMMARY.md")
    if not os.path.exists(summary):
        errors.append("docs/src/SUMMARY.md: missing")
    for path in [os.path.join(ROOT, "README.md")] + sorted(chapters):
        check(path, errors, warnings, set())
    if os.path.exists(summary):
        listed = set()
        check(summary, [], [], listed)  # already reported above; collect the entries
        for path in sorted(chapters):
            if path != summary and path not in listed:
                errors.append(f"{rel(path)}: a chapter that docs/src/SUMMARY.md does not list")
    for p in sorted(PENDING):
        if os.path.exists(os.path.join(ROOT, p)):
            errors.append(f"{p}: exists now: remove it from PENDING in .ci/doc-links.py")
    for w in warnings:
        print(f"doc-links: warning: {w}")
    for e in errors:
        print(f"doc-links: {e}", file=sys.stderr)
    count = len(chapters)
    if errors:
        print(f"doc-links: {len(errors)} broken in README.md and {count} book files", file=sys.stderr)
        return 1
    print(f"doc-links: README.md and {count} book files: every relative link and anchor resolves, "
          "SUMMARY.md lists every chapter")
    return 0


if __name__ == "__main__":
    sys.exit(main())

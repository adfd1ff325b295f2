#!/usr/bin/env python3
"""`make check-links` (part of `make test`): every relative link in the documentation resolves.

Reads README.md, the other top-level *.md files and docs/*.md. For each Markdown link or image
(`[text](target)`, `[text]: target`) outside code blocks and code spans, a relative target must name a
file or directory that exists, and a `#fragment` must be a heading of the file it points into (its
GitHub slug: lowercase, punctuation dropped, spaces to hyphens, `-1`, `-2` … for repeats) or an
explicit `<a name=…>` / `id=…` anchor. Links with a scheme (https:, mailto:, …) are not fetched.
Exits 1 listing every broken link as file:line: target (reason). Standard library only."""
import glob
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FENCE = re.compile(r"^\s*(```+|~~~+)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"|\sid=\"([^\"]+)\"")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def documents():
    files = set(glob.glob(os.path.join(ROOT, "*.md"))) | set(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return sorted(files)


def lines_outside_code(text):
    """(line number, line) for every line not inside a fenced code block."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        match = FENCE.match(line)
        if match:
            marker = match.group(1)[0] * 3
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading: markup and punctuation dropped, lowercase, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"<[^>]+>", "", text)
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


ANCHORS = {}


def anchors(path):
    if path not in ANCHORS:
        found, seen = set(), {}
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for _, line in lines_outside_code(text):
            match = HEADING.match(line)
            if match:
                base = slug(match.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else "%s-%d" % (base, count))
            for named in HTML_ANCHOR.findall(line):
                found.update(name for name in named if name)
        ANCHORS[path] = found
    return ANCHORS[path]


def targets(text):
    for number, line in lines_outside_code(text):
        bare = CODE_SPAN.sub("", line)
        for match in INLINE.finditer(bare):
            yield number, match.group(1)
        match = REFERENCE.match(bare)
        if match:
            yield number, match.group(1)


def check(path):
    problems = []
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    for number, target in targets(text):
        if not target or SCHEME.match(target):
            continue
        file_part, _, fragment = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        where = "%s:%d: %s" % (os.path.relpath(path, ROOT), number, target)
        if not os.path.exists(resolved):
            problems.append("%s (no such file: %s)" % (where, os.path.relpath(resolved, ROOT)))
            continue
        if fragment:
            if os.path.isdir(resolved) or not resolved.endswith(".md"):
                problems.append("%s (an anchor into %s, which is not a Markdown file)"
                                % (where, os.path.relpath(resolved, ROOT)))
            elif fragment not in anchors(resolved):
                problems.append("%s (no heading or anchor #%s in %s)"
                                % (where, fragment, os.path.relpath(resolved, ROOT)))
    return problems


def main():
    files = documents()
    problems = [problem for path in files for problem in check(path)]
    if problems:
        print("check-links: %d broken:\n  %s" % (len(problems), "\n  ".join(problems)), file=sys.stderr)
        return 1
    count = sum(1 for path in files for _ in targets(open(path, encoding="utf-8").read()))
    print("check-links: %d files, %d links (relative ones resolved, anchors found)" % (len(files), count))
    return 0


if __name__ == "__main__":
    sys.exit(main())

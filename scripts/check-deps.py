#!/usr/bin/env python3
"""`make check-deps` (part of `make test`): every Swift target's declared dependencies in Package.swift
equal the modules its files import, so the module map cannot drift from the code.

Reads Package.swift's `.target`, `.testTarget` and `.executableTarget` entries (name and the string
dependencies), and every `import` line (any attribute or access level) of the target's Swift files.
The toolchain's modules (Foundation, Glibc, Testing, ...) are not dependencies. A target's files are
in its `path:` when it has one. A plain target in Tests/ (`path: "Tests/..."`) is test support: only
test targets may depend on it, and it has no place in the module map. Exits 1 naming each
target that imports what it does not declare, or declares what none of its files import, and each
Swift target that does not build with the shared `swiftSettings` (ExistentialAny,
InternalImportsByDefault, MemberImportVisibility).

It also checks that the module map (between the `module-map` markers, in docs/architecture.md) is the
one made from Package.swift: every product target, layer by layer (a target sits above everything it
depends on), with the comment written above it in Package.swift and its dependencies edge for edge.
The map is looked for in every Markdown file of the documentation (README.md, the other top-level
*.md, docs/*.md), so it may move; exactly one file must hold it, and the errors name that file.
`scripts/check-deps.py --write` rewrites that block."""
import glob
import os
import re
import sys
import textwrap

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TOOLCHAIN = {"Foundation", "FoundationEssentials", "Glibc", "Testing", "XCTest", "Synchronization", "Dispatch",
             "_Concurrency", "Darwin", "Musl"}
TARGET = re.compile(r'\.(target|testTarget|executableTarget)\(\s*name:\s*"([^"]+)"(.*?)\)\s*,?\s*\n', re.S)
DEPENDENCIES = re.compile(r'dependencies:\s*\[([^\]]*)\]', re.S)
IMPORT = re.compile(r'^\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)', re.M)


REQUIRED_FEATURES = ("InternalImportsByDefault", "MemberImportVisibility", "ExistentialAny")
PATH = re.compile(r'\bpath:\s*"([^"]+)"')


def directory_of(kind, name, rest):
    """A target's directory: its `path:`, else Tests/<name> for a test target and Sources/<name>."""
    path = PATH.search(rest)
    if path:
        return os.path.join(ROOT, path.group(1))
    return os.path.join(ROOT, "Tests" if kind == "testTarget" else "Sources", name)


def is_test_support(kind, rest):
    """A plain target that lives in Tests/ (`path: "Tests/…"`): support code for test targets only."""
    path = PATH.search(rest)
    return kind == "target" and path is not None and path.group(1).startswith("Tests/")


def settings_problems():
    """Every Swift target builds with the shared `swiftSettings`, which enables the import rules."""
    text = open(os.path.join(ROOT, "Package.swift")).read()
    shared = re.search(r'let swiftSettings: \[SwiftSetting\] = \[(.*?)\n\]', text, re.S)
    problems = []
    for feature in REQUIRED_FEATURES:
        if not shared or '.enableUpcomingFeature("%s")' % feature not in shared.group(1):
            problems.append("Package.swift: swiftSettings does not enable %s" % feature)
    for match in TARGET.finditer(text):
        kind, name, rest = match.groups()
        directory = directory_of(kind, name, rest)
        if not any(f.endswith(".swift") for _, _, fs in os.walk(directory) for f in fs):
            continue  # a C target
        if "swiftSettings: swiftSettings" not in rest:
            problems.append("%s: does not build with swiftSettings (the shared import rules)" % name)
    return problems


def targets():
    text = open(os.path.join(ROOT, "Package.swift")).read()
    found = {}
    for match in TARGET.finditer(text):
        kind, name, rest = match.groups()
        deps = DEPENDENCIES.search(rest)
        found[name] = (kind, set(re.findall(r'"([^"]+)"', deps.group(1))) if deps else set(),
                       directory_of(kind, name, rest), is_test_support(kind, rest))
    return found


def imports(directory):
    names = set()
    for base, _, files in os.walk(directory):
        for file in files:
            if file.endswith(".swift"):
                with open(os.path.join(base, file), encoding="utf-8") as fh:
                    names.update(IMPORT.findall(fh.read()))
    return names - TOOLCHAIN


BEGIN = "<!-- module-map: made from Package.swift by scripts/check-deps.py --write; make check-deps checks it -->"
END = "<!-- module-map end -->"
ENTRY = re.compile(r'((?:[ \t]*//[^\n]*\n)*)[ \t]*\.(target|executableTarget|systemLibrary)\(\s*name:\s*"([^"]+)"(.*?)\)\s*,?\s*\n', re.S)


def product_targets():
    """name -> (description, dependencies) for every non-test target, comments from Package.swift."""
    text = open(os.path.join(ROOT, "Package.swift")).read()
    found = {}
    for match in ENTRY.finditer(text):
        comments, kind, name, rest = match.groups()
        if is_test_support(kind, rest):
            continue  # not part of the product: no place in the module map
        lines = [line.strip()[2:].strip() for line in comments.splitlines()]
        lines = [line for line in lines if line and not line.startswith("MARK:")]
        deps = DEPENDENCIES.search(rest) if kind != "systemLibrary" else None
        found[name] = (" ".join(lines), re.findall(r'"([^"]+)"', deps.group(1)) if deps else [])
    return found


def module_map():
    entries = product_targets()
    layer = {}

    def height(name):
        if name not in layer:
            layer[name] = 1 + max((height(dep) for dep in entries[name][1]), default=-1)
        return layer[name]

    for name in entries:
        height(name)
    out = ["```"]
    for level in sorted(set(layer.values()), reverse=True):
        out.append("── layer %d %s" % (level, "─" * 88))
        for name in sorted((n for n in entries if layer[n] == level), key=lambda n: (n.startswith("C"), n.lower())):
            description, deps = entries[name]
            out += textwrap.wrap("%s: %s" % (name, description or "(no comment in Package.swift)"), 104,
                                 subsequent_indent="    ", break_on_hyphens=False)
            if deps:
                ordered = sorted(deps, key=lambda d: (-layer[d], d.lower()))
                out += textwrap.wrap("→ " + ", ".join(ordered), 104, initial_indent="    ", subsequent_indent="      ",
                                     break_on_hyphens=False)
    out.append("```")
    return "\n".join(out)


def module_map_files():
    """The documentation files holding the module map's begin marker (one, when all is well)."""
    candidates = sorted(set(glob.glob(os.path.join(ROOT, "*.md")))
                        | set(glob.glob(os.path.join(ROOT, "docs", "*.md"))))
    return [path for path in candidates if BEGIN in open(path, encoding="utf-8").read()]


def check_module_map(write):
    files = module_map_files()
    if not files:
        return ["no documentation file holds the module map (README.md, *.md and docs/*.md were searched for %r; "
                "it belongs in docs/architecture.md)" % BEGIN]
    if len(files) > 1:
        return ["the module map is in more than one file (%s): keep one"
                % ", ".join(os.path.relpath(f, ROOT) for f in files)]
    path = files[0]
    name = os.path.relpath(path, ROOT)
    text = open(path, encoding="utf-8").read()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(END) < text.index(BEGIN):
        return ["%s: the module map needs one %r and, after it, one %r" % (name, BEGIN, END)]
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    made = head + BEGIN + "\n" + module_map() + "\n" + END + tail
    if made == text:
        return []
    if write:
        open(path, "w", encoding="utf-8").write(made)
        print("check-deps: %s's module map rewritten from Package.swift" % name)
        return []
    return ["%s: the module map differs from Package.swift: run python3 scripts/check-deps.py --write" % name]


def main():
    declared = targets()
    problems = []
    support = {name for name, (_, _, _, test_support) in declared.items() if test_support}
    for name, (kind, deps, directory, test_support) in sorted(declared.items()):
        if kind != "testTarget" and not test_support:
            for module in sorted(deps & support):
                problems.append("%s depends on %s, which is test support (test targets only)" % (name, module))
        if not os.path.isdir(directory):
            problems.append("%s: no directory %s" % (name, os.path.relpath(directory, ROOT)))
            continue
        used = imports(directory) - {name}
        if not used and not any(f.endswith(".swift") for _, _, fs in os.walk(directory) for f in fs):
            continue  # a C target: its dependencies are #includes, not imports
        for module in sorted(used - deps):
            problems.append("%s imports %s but does not declare it in Package.swift" % (name, module))
        for module in sorted(deps - used):
            problems.append("%s declares %s but none of its files imports it" % (name, module))
    for kind in ("Sources", "Tests"):
        for name in sorted(os.listdir(os.path.join(ROOT, kind))):
            path = os.path.join(ROOT, kind, name)
            swift = os.path.isdir(path) and any(f.endswith(".swift") for _, _, fs in os.walk(path) for f in fs)
            if swift and name not in declared and path not in {d for _, _, d, _ in declared.values()}:
                problems.append("%s/%s is not a target in Package.swift" % (kind, name))
    problems += settings_problems()
    problems += check_module_map("--write" in sys.argv[1:])
    if problems:
        print("check-deps:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print("check-deps: %d targets, every declared dependency imported and every import declared; "
          "%s's module map matches Package.swift" % (len(declared), os.path.relpath(module_map_files()[0], ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`make check-deps` (part of `make test`): every Swift target's declared dependencies in Package.swift
equal the modules its files import, so the module map cannot drift from the code.

Reads Package.swift's `.target`, `.testTarget` and `.executableTarget` entries (name and the string
dependencies), and every `import` line (any attribute or access level) of the target's Swift files.
The toolchain's modules (Foundation, Glibc, Testing, ...) are not dependencies. Exits 1 naming each
target that imports what it does not declare, or declares what none of its files import."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TOOLCHAIN = {"Foundation", "FoundationEssentials", "Glibc", "Testing", "XCTest", "Synchronization", "Dispatch",
             "_Concurrency", "Darwin", "Musl"}
TARGET = re.compile(r'\.(target|testTarget|executableTarget)\(\s*name:\s*"([^"]+)"(.*?)\)\s*,?\s*\n', re.S)
DEPENDENCIES = re.compile(r'dependencies:\s*\[([^\]]*)\]', re.S)
IMPORT = re.compile(r'^\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)', re.M)


def targets():
    text = open(os.path.join(ROOT, "Package.swift")).read()
    found = {}
    for match in TARGET.finditer(text):
        kind, name, rest = match.groups()
        deps = DEPENDENCIES.search(rest)
        found[name] = (kind, set(re.findall(r'"([^"]+)"', deps.group(1))) if deps else set())
    return found


def imports(directory):
    names = set()
    for base, _, files in os.walk(directory):
        for file in files:
            if file.endswith(".swift"):
                with open(os.path.join(base, file), encoding="utf-8") as fh:
                    names.update(IMPORT.findall(fh.read()))
    return names - TOOLCHAIN


def main():
    declared = targets()
    problems = []
    for name, (kind, deps) in sorted(declared.items()):
        directory = os.path.join(ROOT, "Tests" if kind == "testTarget" else "Sources", name)
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
            if swift and name not in declared:
                problems.append("%s/%s is not a target in Package.swift" % (kind, name))
    if problems:
        print("check-deps: Package.swift and the imports disagree:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print("check-deps: %d targets, every declared dependency imported and every import declared" % len(declared))
    return 0


if __name__ == "__main__":
    sys.exit(main())

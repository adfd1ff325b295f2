#!/usr/bin/env python3
"""Run by `make check-deps` (part of `make test`): no Swift file imports a project module it does not use.

For every Swift file in Sources/ and Tests/ (generated code left out), each `import X` of a module of
this package must be used by that file, judged by the names X gives the file:

- a Swift module (Sources/X): its declarations that are `public`, `open` or `package` (under
  `@testable import` also the internal ones): types, functions, variables, type aliases, operators,
  enum cases and protocol requirements, at the top level and as members of its types and extensions.
  Members count because the import rules (MemberImportVisibility) ask for the import of the module
  that declares a member the file uses, even when the file never names the member's type.
- a C module (Sources/CX, a system-library target or CPushgateProto): the functions, types, macros
  and enum constants its headers declare, and its structs' fields (its shim.h or umbrella header,
  and the headers those include from the same library); and any word with a prefix at least five
  of those names share (`SSL_`, `nghttp2_`, `PQ`), for the functions OpenSSL declares by macro.

The file uses X when one of those names appears in it as a word, outside comments (an operator: as
its characters). The toolchain's modules (Foundation, Glibc, Synchronization, Dispatch, Testing, ...)
are not checked: their names are too many and too common to tell a use from a coincidence.

Where a file needs an import for something no name shows (a conformance declared in X, say), the
import line says so with a trailing `// check-imports: keep`.

scripts/check-imports-pending.txt lists findings waiting for a fix in another change (one
`path: module` per line); they are reported but do not fail the check, and a line there that is no
longer a finding fails it (the list only shrinks).

Exits 1 naming each file and the import it does not use. Every run first checks itself on a planted
file (two unused imports, one used, one kept: exactly the first two must be found); `--self-test`
runs only that.
"""
import glob
import os
import re
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PENDING = os.path.join(ROOT, "scripts", "check-imports-pending.txt")
KEEP = "check-imports: keep"
IMPORT = re.compile(
    r'^[ \t]*((?:@\w+[ \t]+)*)(?:(?:public|package|internal|private|fileprivate)[ \t]+)?import[ \t]+'
    r'(?:(?:struct|class|enum|protocol|func|var|let|typealias)[ \t]+)?(\w+)(?:\.(\w+))?(.*)$', re.M)
WORD = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
INCLUDE_DIRS = ["/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu"] + sorted(
    glob.glob("/usr/include/*/"))


def strip_comments(text):
    """The Swift or C text without its comments; string literals are kept (a name in one counts)."""
    out = []
    i, n = 0, len(text)
    depth = 0
    in_string = None
    while i < n:
        if depth:
            if text.startswith("/*", i):
                depth += 1
                i += 2
            elif text.startswith("*/", i):
                depth -= 1
                i += 2
            else:
                i += 1
            continue
        if in_string:
            if text.startswith(in_string, i):
                out.append(in_string)
                i += len(in_string)
                in_string = None
            elif text[i] == "\\" and i + 1 < n:
                out.append(text[i:i + 2])
                i += 2
            else:
                out.append(text[i])
                i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            depth = 1
            i += 2
        elif text.startswith('"""', i):
            in_string = '"""'
            out.append(in_string)
            i += 3
        elif text[i] == '"':
            in_string = '"'
            out.append('"')
            i += 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# A Swift declaration: its modifiers, its kind and its name.
DECLARATION = re.compile(
    r'((?:(?:@[\w.]+(?:\([^()]*\))?|public|open|package|internal|private|fileprivate|final|static|class|'
    r'nonisolated|override|mutating|nonmutating|convenience|required|indirect|lazy|weak|unowned|dynamic|'
    r'prefix|postfix|infix|consuming|borrowing|isolated|distributed)\s+)*)'
    r'(struct|class|enum|protocol|actor|extension|typealias|func|var|let|case|operator|macro|associatedtype)\s+'
    r'([A-Za-z_][\w.]*|[-+*/%=<>!&|^~?.]+)')
TYPE_KINDS = {"struct", "class", "enum", "protocol", "actor", "extension"}


def exported_names(text, testable):
    """Names a Swift file of a module gives the files that import it (see the module docstring)."""
    text = strip_comments(text)
    names = set()
    operators = set()
    # One entry per open brace: the kind of declaration it opened (None: a body of code) and
    # whether that declaration is visible to importers.
    stack = []
    pending = None  # the type or extension whose brace comes next
    token = re.compile(r'[{}]|' + DECLARATION.pattern)
    for match in token.finditer(text):
        piece = match.group(0)
        if piece == "{":
            stack.append(pending or (None, False))
            pending = None
            continue
        if piece == "}":
            if stack:
                stack.pop()
            pending = None
            continue
        modifiers, kind, name = match.group(1), match.group(2), match.group(3)
        if any(scope[0] not in TYPE_KINDS or not scope[1] for scope in stack):
            continue  # local to a body of code, or inside a type importers cannot see
        outer = stack[-1][0] if stack else None
        words = set(re.findall(r'\w+', modifiers))
        if words & {"private", "fileprivate"}:
            visible = False
        elif words & {"public", "open", "package"}:
            visible = True
        elif outer == "protocol" or (outer == "enum" and kind == "case"):
            visible = True  # a requirement or a case: as visible as its protocol or enum
        else:
            visible = testable  # internal (a `public extension` names its members' access too)
            if outer == "extension" and stack[-1][2:] == ("public",):
                visible = True
        if kind in TYPE_KINDS:
            if kind == "extension":
                pending = ("extension", True, "public" if words & {"public", "package"} else "")
            else:
                pending = (kind, visible)
                if visible:
                    names.add(name.split(".")[-1])
            continue
        if not visible:
            continue
        if kind == "operator" or not re.match(r'[A-Za-z_]', name):
            operators.add(name)
        elif kind == "case":
            line = text[match.start(3):text.find("\n", match.start(3))]
            names.update(re.findall(r'(?:^|,)\s*`?([A-Za-z_]\w*)', re.sub(r'\([^()]*\)', '', line)))
        else:
            names.add(name.split(".")[0])
    return names, operators


def swift_modules():
    modules = {}
    for directory in sorted(glob.glob(os.path.join(ROOT, "Sources", "*"))):
        files = [os.path.join(d, f) for d, _, fs in os.walk(directory) for f in fs if f.endswith(".swift")]
        if files:
            modules[os.path.basename(directory)] = files
    return modules


def c_header_names(path, seen, library, root=None):
    """Declared names of a C header and of the headers it includes from the same library. A header
    of this package (`root`: its module map's folder) has its includes followed whatever their
    library, save libc's general headers."""
    if path in seen or not os.path.exists(path):
        return set()
    seen.add(path)
    text = strip_comments(open(path, errors="replace").read())
    names = set()
    names.update(re.findall(r'^\s*#\s*define\s+(\w+)', text, re.M))
    names.update(re.findall(r'\b([A-Za-z_]\w*)\s*\(', text))
    names.update(re.findall(r'\b(?:struct|enum|union)\s+(\w+)', text))
    names.update(re.findall(r'\}\s*(\w+)\s*;', text))
    names.update(re.findall(r'typedef\b[^;{}]*?\b(\w+)\s*;', text))
    names.update(re.findall(r'typedef\b[^;{}]*?\(\s*\*\s*(\w+)\s*\)', text))
    for body in re.findall(r'\benum\b[^{;]*\{([^}]*)\}', text):
        names.update(re.findall(r'(?:^|,)\s*([A-Za-z_]\w*)', body))
    # A C struct's fields are members the file reaches through the module too (MemberImportVisibility).
    for body in re.findall(r'\b(?:struct|union)\b\s*\w*\s*\{([^{}]*)\}', text):
        names.update(re.findall(r'(\w+)\s*(?:\[[^\]]*\]\s*)*(?::\s*\d+\s*)?[;,]', body))
    names -= C_KEYWORDS
    for quoted, angled in re.findall(r'#\s*include\s*(?:"([^"]+)"|<([^>]+)>)', text):
        include = quoted or angled
        if quoted:
            candidate = os.path.join(os.path.dirname(path), include)
            if root and not os.path.exists(candidate):
                candidate = os.path.join(root, include)
        else:
            if root and include not in LIBC:
                if not path.startswith(ROOT):
                    continue
                own = include.split("/")[0] if "/" in include else "\0"
                found = next((os.path.join(d, include) for d in INCLUDE_DIRS
                              if os.path.exists(os.path.join(d, include))), None)
                if found:
                    names |= c_header_names(found, seen, own)
                continue
            if not include.startswith(library + "/"):
                continue  # another library's header (libc and the like)
            candidate = next((os.path.join(d, include) for d in INCLUDE_DIRS
                              if os.path.exists(os.path.join(d, include))), None)
        if candidate:
            names |= c_header_names(candidate, seen, library, root if quoted else None)
    return names


C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "typeof", "__attribute__",
              "int", "char", "void", "long", "short", "unsigned", "signed", "const", "static", "inline",
              "struct", "enum", "union", "typedef", "extern", "double", "float", "volatile", "else", "do",
              "case", "default", "break", "continue", "goto", "register", "restrict", "auto", "_Bool",
              "__declspec", "__inline", "__restrict", "alignof", "_Alignof", "offsetof"}


LIBC = ("stdlib.h", "stdint.h", "stddef.h", "stdbool.h", "string.h", "stdio.h")


def c_modules():
    """C module name -> the names its headers declare: the shim's (or umbrella header's) own, and
    those of each header it includes, with the headers that one includes from its own directory
    (openssl/ssl.h brings openssl/*.h; libc's general headers are not followed)."""
    modules = {}
    for modulemap in glob.glob(os.path.join(ROOT, "Sources", "C*", "**", "module.modulemap"), recursive=True):
        text = open(modulemap).read()
        name = re.search(r'module\s+(\w+)', text).group(1)
        names = set()
        for header in re.findall(r'header\s+"([^"]+)"', text):
            shim = os.path.join(os.path.dirname(modulemap), header)
            names |= c_header_names(shim, set(), "\0", os.path.dirname(modulemap))
            for include in re.findall(r'#\s*include\s*<([^>]+)>', strip_comments(open(shim).read())):
                if include in LIBC:
                    continue
                library = include.split("/")[0] if "/" in include else "\0"
                path = next((os.path.join(d, include) for d in INCLUDE_DIRS
                             if os.path.exists(os.path.join(d, include))), None)
                if path:
                    names |= c_header_names(path, set(), library)
        modules[name] = (names, c_prefixes(names))
    return modules


def c_prefixes(names):
    """The prefixes (`SSL_`, `nghttp2_`, `PQ`...) shared by at least 5 of a C module's names: a word
    with one of them counts as a use too, for the functions OpenSSL declares through macros
    (DECLARE_PEM_rw and the like) that no pattern here reads."""
    counts = {}
    for name in names:
        match = re.match(r'([A-Za-z][A-Za-z0-9]+_|PQ|SQLITE_|sqlite3_)', name)
        if match and len(match.group(1)) >= 3 or (match and match.group(1) == "PQ"):
            counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return {prefix for prefix, count in counts.items() if count >= 5}


C_MODULES = set()


def module_names():
    """Module name -> (names, operators, testable names, testable operators); for a C module the
    operators' places hold its name prefixes (``c_prefixes``)."""
    result = {}
    for module, files in swift_modules().items():
        public, operators, internal, internal_operators = set(), set(), set(), set()
        for path in files:
            text = open(path).read()
            names, ops = exported_names(text, testable=False)
            public |= names
            operators |= ops
            names, ops = exported_names(text, testable=True)
            internal |= names
            internal_operators |= ops
        result[module] = (public, operators, internal | public, internal_operators | operators)
    for module, (names, prefixes) in c_modules().items():
        prefixes = tuple(sorted(prefixes))
        result[module] = (names, prefixes, names, prefixes)
        C_MODULES.add(module)
    return result


def checked_files():
    for top in ("Sources", "Tests"):
        for directory, _, files in os.walk(os.path.join(ROOT, top)):
            if "/Generated" in directory or "/interop" in directory:
                continue
            for name in sorted(files):
                if name.endswith(".swift"):
                    yield os.path.join(directory, name)


def findings(files, modules):
    found = []
    for path in files:
        text = open(path).read()
        body = strip_comments(IMPORT.sub("", text))
        words = set(WORD.findall(body))
        for match in IMPORT.finditer(text):
            attributes, module, member, rest = match.groups()
            if module not in modules or KEEP in rest:
                continue
            names, operators, testable_names, testable_operators = modules[module]
            if "@testable" in attributes:
                names, operators = testable_names, testable_operators
            if member:
                used = member in words
            elif module in C_MODULES:
                used = bool(words & names) or any(word.startswith(operators) for word in words if "_" in word
                                                   or word.startswith("PQ"))
            else:
                used = bool(words & names) or any(op in body for op in operators)
            if not used:
                found.append("%s: %s" % (os.path.relpath(path, ROOT), module))
    return found


def pending():
    if not os.path.exists(PENDING):
        return set()
    return {line.strip() for line in open(PENDING) if line.strip() and not line.startswith("#")}


def self_test(modules):
    """A file with two imports it does not use (a Swift module, a C module), one it uses and one kept
    by the comment: exactly the first two must be found."""
    text = ("import CZlib\nimport PushTLS\nimport PushCore\nimport PushPosix  // %s\n\n"
            "func planted() -> JSONValue { .null }\n" % KEEP)
    with tempfile.TemporaryDirectory() as directory:
        planted = os.path.join(directory, "Planted.swift")
        with open(planted, "w") as out:
            out.write(text)
        found = findings([planted], modules)
        expected = ["%s: %s" % (os.path.relpath(planted, ROOT), module) for module in ("CZlib", "PushTLS")]
    if found != expected:
        print("check-imports --self-test: expected %s, found %s" % (expected, found), file=sys.stderr)
        return 1
    print("check-imports --self-test: the planted unused imports were found, the used and the kept one not")
    return 0


def main():
    modules = module_names()
    if "--self-test" in sys.argv:
        return self_test(modules)
    if self_test(modules):
        return 1  # the check itself no longer finds a planted unused import
    found = findings(checked_files(), modules)
    waiting = pending()
    problems = [f for f in found if f not in waiting]
    fixed = sorted(waiting - set(found))
    for line in sorted(set(found) & waiting):
        print("check-imports: pending (scripts/check-imports-pending.txt): %s" % line)
    if problems or fixed:
        for line in problems:
            print("check-imports: unused import: %s" % line, file=sys.stderr)
        for line in fixed:
            print("check-imports: no longer found, remove it from scripts/check-imports-pending.txt: %s" % line,
                  file=sys.stderr)
        return 1
    print("check-imports: every project-module import of %d files is used, %d pending" % (
        len(list(checked_files())), len(waiting)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Where a callgrind dump's instructions go, by library (exclusive cost), per unit of work.

  callgrind_by_library.py ANNOTATE_TXT COUNT

ANNOTATE_TXT is `callgrind_annotate --threshold=100 --auto=no DUMP | swift demangle --simplified`;
COUNT the Sends (or tokens) the dump holds. Swift's runtime is split into reference counting,
object allocation and the rest of the standard library, since those are what Swift code costs
beyond its own instructions."""
import collections
import re
import sys

REFCOUNT = re.compile(r"swift_(retain|release|bridgeObject|unknownObject|isUnique|weak|unowned|nonatomic)|RefCount")
ALLOC = re.compile(r"swift_(allocObject|deallocObject|slowAlloc|slowDealloc|deallocClassInstance|setDealloc"
                   r"|initStackObject|deallocUninitialized|deallocPartialClassInstance)")
# The frames every thread's cost is inclusive under (callgrind lists them as exclusive).
OUTER = re.compile(r"start_thread|clone\.S|threadMain|startThread|spawn\(name")


def main(path, count):
    totals = collections.Counter()
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", line.rstrip())
        if not m or "PROGRAM TOTALS" in m.group(2):
            continue
        cost, rest = int(m.group(1).replace(",", "")), m.group(2)
        cut = rest.rfind(" [")
        function, library = (rest[:cut], rest[cut + 2:-1].split("/")[-1]) if cut > 0 else (rest, "?")
        if OUTER.search(function):
            continue
        if library == "pushgate":
            key = "Pushgate's Swift code"
        elif library.startswith("libswiftCore"):
            key = ("Swift reference counting" if REFCOUNT.search(function)
                   else "Swift object allocation" if ALLOC.search(function) else "Swift standard library")
        else:
            key = re.sub(r"\.so.*", "", library)
        totals[key] += cost
    everything = sum(totals.values())
    print("| by library (exclusive) | per unit | share |")
    print("| --- | ---: | ---: |")
    for key, cost in totals.most_common():
        if cost / count >= 10:
            print("| %s | %s | %.1f %% |" % (key, format(round(cost / count), ","), 100 * cost / everything))
    print("| **total** | **%s** | |" % format(round(everything / count), ","))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

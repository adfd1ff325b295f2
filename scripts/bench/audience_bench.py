"""Issue 45's rows of `make bench`: the 1M-subscriber Publish on PostgreSQL (beside run_bench's
SQLite runs of the same size), and `pushgate import` of 1,000,000 rows into SQLite: its rate, bad
rows named by line, and a kill -9 in the middle followed by a re-run that must leave exactly the
rows of the input. Called from run_bench.py; its rows and targets go into the same table."""
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import time
import urllib.parse

import run_bench as rb

# Lines of the import's input that are bad on purpose (1-based), each with the field it gets wrong.
BAD_LINES = {1000: "token", 500000: "app", 999999: "topics"}


def postgres_database(base, name):
    """A fresh database on the bench's PostgreSQL server; its URL."""
    subprocess.run(["psql", "-qAtX", "-v", "ON_ERROR_STOP=1", base, "-c", "DROP DATABASE IF EXISTS %s WITH (FORCE)" % name,
                    "-c", "CREATE DATABASE %s" % name], check=True, capture_output=True, timeout=60)
    return urllib.parse.urlunsplit(urllib.parse.urlsplit(base)._replace(path="/" + name))


def drop_database(base, name):
    proc = subprocess.run(["psql", "-qAtX", base, "-c", "DROP DATABASE IF EXISTS %s WITH (FORCE)" % name],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        print("bench: could not drop database %s: %s" % (name, proc.stderr.strip()))


def run_postgres_publish(r, big, rounds=2):
    """`pushgate bench --mode publish --store <fresh database>`, `rounds` times."""
    base = os.environ.get("PUSHGATE_TEST_PG_URL")
    if not base:
        return {}
    results = {}
    for round_ in range(1, rounds + 1):
        name = "bench_publish_%d" % round_
        url = postgres_database(base, name)
        try:
            results["publish-pg-%d" % round_] = r.bench(
                "pushgate-publish-%s-postgres-%d" % (big, round_),
                ["--mode", "publish", "--subscribers", big, "--connections", "4", "--store", url], timeout=1200)
        finally:
            drop_database(base, name)
    return results


def write_input(path, rows):
    """`rows` JSON Lines rows of random tokens, every third on two topics, BAD_LINES broken as they say."""
    with open(path, "w") as fh:
        for n in range(1, rows + 1):
            # SHA-256 of the row number: tokens in no order, as a real registry's are (sorted tokens
            # would append to the token index, the easy case).
            row = {"app": "bench", "token": hashlib.sha256(b"%d" % n).hexdigest(),
                   "topics": ["all", "third"] if n % 3 == 0 else ["all"]}
            if n % 10 == 0:
                row["user_id"] = "user-%d" % (n // 10)
            field = BAD_LINES.get(n)
            if field == "token":
                row["token"] = "not-a-token"
            elif field == "app":
                row["app"] = "nope"
            elif field == "topics":
                row["topics"] = ["bad name!"]
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")


# `pushgate import`'s default --batch-rows: a kill leaves a whole number of these.
IMPORT_BATCH = 50000


def committed_endpoints(path):
    """Endpoints committed in the SQLite file at `path` so far (0 while it is not there yet)."""
    if not os.path.exists(path):
        return 0
    try:
        with sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=0.05) as db:
            return db.execute("SELECT count(*) FROM endpoints").fetchone()[0]
    except sqlite3.Error:
        return 0


def run_import(r, work, quick):
    rows = 200000 if quick else 1000000
    source = os.path.join(work, "import-input.jsonl")
    write_input(source, rows)
    result = {"rows": rows, "bad_expected": len([n for n in BAD_LINES if n <= rows])}

    def config(name):
        path = os.path.join(work, name + ".json")
        with open(path, "w") as fh:
            json.dump({"store": os.path.join(work, name + ".db"), "apps": [
                {"name": "bench", "platform": "apns", "bundle_id": rb.TOPIC, "team_id": "BENCHTEAM1",
                 "key_id": "BENCHKEY01", "key_file": "/nonexistent/AuthKey.p8"}]}, fh)
        return path

    # One whole import into a new store: the rate, and the bad rows reported by line.
    first = config("import-whole")
    proc = r.run("import-%d-rows" % rows, [rb.BIN, "import", "--config", first, source], timeout=600)
    result["exit"] = proc.returncode
    result["summary"] = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    reported = {}
    for line in proc.stderr.splitlines():
        if line.startswith("pushgate import: line "):
            number, _, rest = line[len("pushgate import: line "):].partition(": ")
            reported[int(number)] = rest
    result["bad_reported"] = {str(n): reported.get(n, "") for n in BAD_LINES if n <= rows}
    result["bad_named"] = all(reported.get(n, "").startswith(field) for n, field in BAD_LINES.items() if n <= rows)
    words = result["summary"].replace("(", " ").split()
    try:
        result["rows_per_second"] = int(words[words.index("rows/s)") - 1])
        result["seconds"] = float(words[words.index("s") - 1])
    except (ValueError, IndexError):
        result["rows_per_second"] = None
    result["store_bytes"] = os.path.getsize(os.path.join(work, "import-whole.db"))

    # kill -9 in the middle, then the same command again: exactly the input's good rows, each once.
    second = config("import-killed")
    argv = [rb.BIN, "import", "--config", second, "--quiet", source]
    r.commands.append(("import-kill-9-and-rerun", " ".join(argv[1:]) + " (SIGKILL once a batch is in; then again)"))
    child = subprocess.Popen([rb.BIN] + argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killed_db = os.path.join(work, "import-killed.db")
    # Killed a moment after its first batch is committed, whatever this machine's speed.
    deadline = time.time() + 120
    while child.poll() is None and time.time() < deadline and committed_endpoints(killed_db) == 0:
        time.sleep(0.05)
    time.sleep(0.5)
    killed = child.poll() is None
    child.send_signal(signal.SIGKILL)
    child.communicate()
    with sqlite3.connect("file:%s?mode=ro" % killed_db, uri=True) as db:
        result["endpoints_after_kill"] = db.execute("SELECT count(*) FROM endpoints").fetchone()[0]
    good = [n for n in range(1, rows + 1) if n not in BAD_LINES]
    # Killed with work left, and every batch (IMPORT_BATCH good rows) wholly in or out.
    result["killed_mid_import"] = (killed and 0 < result["endpoints_after_kill"] < len(good)
                                   and result["endpoints_after_kill"] % IMPORT_BATCH == 0)
    proc = r.run("import-rerun-after-kill", argv, timeout=600)
    result["rerun_exit"] = proc.returncode
    result["rerun_summary"] = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    with sqlite3.connect("file:%s?mode=ro" % os.path.join(work, "import-killed.db"), uri=True) as db:
        result["endpoints_after_rerun"] = db.execute("SELECT count(*) FROM endpoints").fetchone()[0]
        result["subscriptions_after_rerun"] = db.execute("SELECT count(*) FROM subscriptions").fetchone()[0]
    result["endpoints_expected"] = len(good)
    result["subscriptions_expected"] = sum(2 if n % 3 == 0 else 1 for n in good)
    return result


def rows(res, row):
    runs = [res.get("publish-pg-%d" % n) for n in (1, 2)]
    done = [p for p in runs if p]
    if done:
        row("**Publish** to %s subscribers, **PostgreSQL** store, 4 APNs conns: subscribers/s (median of %d)" % (
                rb.fmt(done[0]["subscribers"]), len(done)),
            rb.fmt(rb.median([p["subscribers_per_second"] for p in done])), "-", "-",
            "delivered %s of %s" % (rb.fmt(min(p["delivered"] for p in done)), rb.fmt(done[0]["subscribers"])), "-",
            "fan-out done in %s s; the subscribers loaded 50,000 a transaction by the bench" % ", ".join(
                "%.2f" % p["seconds"] for p in done))
    imp = res.get("import")
    if imp:
        row("**pushgate import** of %s JSON Lines rows into SQLite (%d bad on purpose): rows/s" % (
                rb.fmt(imp["rows"]), imp["bad_expected"]),
            rb.fmt(imp.get("rows_per_second")), "-", "-",
            "bad rows reported: %s" % "; ".join("line %s: %s" % kv for kv in imp["bad_reported"].items()), "-",
            "%s; store %s bytes a row (endpoint, 1.33 subscriptions)" % (
                imp["summary"], rb.fmt(imp["store_bytes"] / max(1, imp["rows"]))))
        row("**pushgate import**, kill -9 half a second after its first batch is in, then the same command again", "-", "-", "-", "-", "-",
            "%s endpoints when killed; after the re-run %s endpoints and %s subscriptions (input: %s and %s); "
            "re-run: %s" % (rb.fmt(imp["endpoints_after_kill"]), rb.fmt(imp["endpoints_after_rerun"]),
                            rb.fmt(imp["subscriptions_after_rerun"]), rb.fmt(imp["endpoints_expected"]),
                            rb.fmt(imp["subscriptions_expected"]), imp["rerun_summary"]))


def ratio(a, b):
    return a / b if a is not None and b else None


def targets(res, target, ceiling4, sqlite_runs):
    sqlite_rate = rb.median([p["subscribers_per_second"] for p in sqlite_runs]) if sqlite_runs else None
    r_pub = ratio(sqlite_rate, ceiling4)
    target("Publish to 1,000,000 subscribers, 4 APNs conns ≥ 0.85× the h2load ceiling, 4 conns (issue 45)",
           "%s / %s = %s× (median of %d fan-outs, delivery log off)" % (
               rb.fmt(sqlite_rate), rb.fmt(ceiling4), rb.fmt(r_pub, 2), len(sqlite_runs)),
           None if r_pub is None else r_pub >= 0.85)
    runs = [res.get("publish-pg-%d" % n) for n in (1, 2)]
    pg = [p for p in runs if p and p["delivered"] == p["subscribers"]]
    pg_rate = rb.median([p["subscribers_per_second"] for p in pg]) if pg else None
    r_pg = ratio(pg_rate, sqlite_rate)
    ran = any(runs)
    target("Publish to 1,000,000 subscribers: PostgreSQL ≥ 0.8× SQLite (issue 45)",
           "%s / %s = %s× (medians; %d of %d runs complete)" % (
               rb.fmt(pg_rate), rb.fmt(sqlite_rate), rb.fmt(r_pg, 2), len(pg), len([x for x in runs if x])),
           None if not ran else (r_pg is not None and r_pg >= 0.8 and len(pg) == len([x for x in runs if x])))
    imp = res.get("import")
    if imp:
        rate = imp.get("rows_per_second")
        target("pushgate import of %s rows ≥ 100,000 rows/s on SQLite, bad rows named by line (issue 45)" % rb.fmt(
                   imp["rows"]), "%s rows/s; %d of %d bad rows named by line and field" % (
                   rb.fmt(rate), sum(1 for v in imp["bad_reported"].values() if v), imp["bad_expected"]),
               rate is not None and rate >= 100000 and imp["bad_named"] and imp["exit"] == 1)
        exact = (imp["endpoints_after_rerun"] == imp["endpoints_expected"]
                 and imp["subscriptions_after_rerun"] == imp["subscriptions_expected"])
        target("kill -9 mid-import and a re-run give exactly the input's endpoints (issue 45)",
               "%s of %s endpoints after the kill; %s after the re-run" % (
                   rb.fmt(imp["endpoints_after_kill"]), rb.fmt(imp["endpoints_expected"]),
                   rb.fmt(imp["endpoints_after_rerun"])),
               exact and imp["killed_mid_import"] and imp.get("rerun_exit") == 1)

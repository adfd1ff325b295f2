"""`pushgate import` / `pushgate export` (issue 45, part 3): JSON Lines and CSV in, bad rows reported by
line number without stopping, upserts by (app, token) so a re-run is idempotent and a kill -9 is
resumable, and an export that imports back into the same endpoints and subscriptions. Results are read
through the gateway's Registry API (a `pushgate serve` on the same store) or through `pushgate export`."""
import csv
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import time

import grpc
import pytest

from conftest import ROOT, Server, app_config
from pushgate.v1 import registry_pb2, registry_pb2_grpc

BIN = os.environ.get("PUSHGATE_BIN", os.path.join(ROOT, ".build", "debug", "pushgate"))
SUMMARY = re.compile(r"imported (\d+) rows? \((\d+) endpoints? created, (\d+) existing, (\d+) subscriptions? created\), "
                     r"(\d+) bad rows?, in [\d.]+ s \([\d.,]+ rows/s\)")
REPORT = re.compile(r"pushgate import: line (\d+): (.+)")
CSV_HEADER = "app,token,user_id,custom_user_data,enabled,topics"


def token(n):
    return "%064x" % n


@pytest.fixture(scope="module", autouse=True)
def commands_exist():
    """Fails (not skips) every test when the binary has no import/export command."""
    for command in ("import", "export"):
        proc = subprocess.run([BIN, command, "--help"], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, "`pushgate %s --help` exited %d:\n%s%s" % (
            command, proc.returncode, proc.stdout, proc.stderr)


class Store:
    """A config (apps "demo" and "voip", both APNs) whose `store` is a fresh SQLite file."""

    def __init__(self, directory, lookalike):
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.db = os.path.join(directory, "pushgate.db")
        self.apps = [app_config("demo", "com.example.demo", lookalike), app_config("voip", "com.example.voip", lookalike)]
        self.config = os.path.join(directory, "import-config.json")
        with open(self.config, "w") as fh:
            json.dump({"store": self.db, "apps": self.apps}, fh)
        self.servers = 0

    def file(self, name, text):
        path = os.path.join(self.directory, name)
        with open(path, "w", newline="", encoding="utf-8") as fh:
            fh.write(text)
        return path

    def run(self, command, *args, stdin=None, timeout=120):
        return subprocess.run([BIN, command, "--config", self.config] + list(args), input=stdin,
                              capture_output=True, text=True, encoding="utf-8", timeout=timeout)

    def import_(self, *args, stdin=None, status=0):
        proc = self.run("import", *args, stdin=stdin)
        assert proc.returncode == status, "import exited %d, wanted %d:\n%s%s" % (
            proc.returncode, status, proc.stdout, proc.stderr)
        return proc

    def export(self, *args):
        proc = self.run("export", *args)
        assert proc.returncode == 0, "export exited %d:\n%s%s" % (proc.returncode, proc.stdout, proc.stderr)
        return proc.stdout

    def snapshot(self):
        """Through a gateway on the store: {(app, token): {id, enabled, custom_user_data, user_id, topics}}
        (topics: every subscription's topic, sorted, duplicates kept) and the sorted topic names."""
        self.servers += 1
        server = serve(self, "gateway%d" % self.servers)
        try:
            with grpc.insecure_channel(server.address) as channel:
                registry = registry_pb2_grpc.RegistryStub(channel)
                endpoints = paged(registry.ListEndpoints, registry_pb2.ListEndpointsRequest, "endpoints")
                subscriptions = paged(registry.ListSubscriptions, registry_pb2.ListSubscriptionsRequest, "subscriptions")
                topics = paged(registry.ListTopics, registry_pb2.ListTopicsRequest, "topics")
        finally:
            server.stop()
        by_id = {e.id: {"id": e.id, "enabled": e.enabled, "custom_user_data": e.custom_user_data, "user_id": e.user_id,
                        "topics": []} for e in endpoints}
        assert len(by_id) == len(endpoints), "duplicate endpoint ids"
        for s in subscriptions:
            assert s.endpoint_id in by_id, "subscription %s of an unlisted endpoint" % s.id
            by_id[s.endpoint_id]["topics"].append(s.topic)
        answer = {}
        for e in endpoints:
            by_id[e.id]["topics"].sort()
            assert (e.app, e.token) not in answer, "duplicate endpoint for %s/%s" % (e.app, e.token)
            answer[(e.app, e.token)] = by_id[e.id]
        return answer, sorted(t.name for t in topics)


def serve(store, name):
    """A gateway on the store, its config file in a directory of its own."""
    directory = os.path.join(store.directory, name)
    os.makedirs(directory, exist_ok=True)
    return Server({"apps": store.apps}, directory, store=store.db)


def paged(call, request, field):
    items, page_token = [], ""
    while True:
        page = call(request(page_size=500, page_token=page_token), timeout=30)
        items += list(getattr(page, field))
        page_token = page.next_page_token
        if not page_token:
            return items


@pytest.fixture
def store(tmp_path, lookalike):
    return Store(str(tmp_path / "store"), lookalike)


def summary(proc):
    """(rows, created, existing, subscriptions created, bad) from the last stdout line."""
    lines = proc.stdout.strip().splitlines()
    m = SUMMARY.fullmatch(lines[-1].strip()) if lines else None
    assert m, "no summary as the last stdout line:\n%r" % proc.stdout
    return tuple(int(g) for g in m.groups())


def reports(proc):
    """{line number: what follows "line N: "} from stderr; every non-empty stderr line must be a report."""
    found = {}
    for line in proc.stderr.splitlines():
        if not line.strip():
            continue
        m = REPORT.fullmatch(line)
        assert m, "stderr line is not `pushgate import: line N: ...`: %r" % line
        assert int(m.group(1)) not in found, "line %s reported twice" % m.group(1)
        found[int(m.group(1))] = m.group(2)
    return found


def check_reports(proc, expected):
    """`expected`: {line: field or None}; the field must be named before the report's first colon."""
    found = reports(proc)
    assert sorted(found) == sorted(expected), proc.stderr
    for line, field in expected.items():
        if field is not None:
            assert field in found[line].split(":")[0], "line %d should name %r: %r" % (line, field, found[line])


def jsonl(*rows):
    return "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows)


def exported(text, fmt="jsonl"):
    """An export as [(app, token, user_id, custom_user_data, enabled, sorted topics)] in its order."""
    if fmt == "csv":
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader)
        assert ",".join(header) == CSV_HEADER, header
        raw = [dict(zip(header, row)) for row in reader if row]
    else:
        raw = [json.loads(line) for line in text.splitlines() if line.strip()]
    rows = []
    for r in raw:
        enabled = r.get("enabled")
        if fmt == "csv":
            enabled = {"true": True, "false": False}.get(enabled, enabled)
        topics = r.get("topics") or []
        if isinstance(topics, str):
            topics = [t for t in topics.split(";") if t]
        rows.append((r["app"], r["token"], r.get("user_id") or "", r.get("custom_user_data") or "", enabled,
                     tuple(sorted(topics))))
    return rows


def test_jsonl_import_creates_endpoints_topics_and_subscriptions(store):
    t1, t2, t3 = token(0x101), token(0x102), token(0x103)
    path = store.file("devices.jsonl", jsonl(
        {"app": "demo", "token": t1.upper(), "user_id": "alice", "custom_user_data": '{"plan": "pro"}',
         "topics": ["news", "sports"]},
        {"app": "demo", "token": t2, "enabled": False},
        "",
        {"app": "voip", "token": t3, "custom_user_data": "\u00e9" * 1024, "enabled": True, "topics": ["news"]}))
    proc = store.import_(path)
    assert summary(proc) == (3, 3, 0, 3, 0)
    assert "rows/s" not in proc.stderr and reports(proc) == {}, "no progress line when stderr is not a tty"
    endpoints, topics = store.snapshot()
    assert set(endpoints) == {("demo", t1), ("demo", t2), ("voip", t3)}, "tokens stored lowercase"
    e1, e2, e3 = endpoints[("demo", t1)], endpoints[("demo", t2)], endpoints[("voip", t3)]
    assert (e1["user_id"], e1["custom_user_data"], e1["enabled"], e1["topics"]) == \
        ("alice", '{"plan": "pro"}', True, ["news", "sports"])
    assert (e2["user_id"], e2["custom_user_data"], e2["enabled"], e2["topics"]) == ("", "", False, [])
    assert (e3["user_id"], e3["custom_user_data"], e3["enabled"], e3["topics"]) == ("", "\u00e9" * 1024, True, ["news"])
    assert topics == ["news", "sports"]


def test_csv_import_with_quoted_fields_and_columns_in_any_order(store):
    t1, t2, t3, t4 = token(0x201), token(0x202), token(0x203), token(0x204)
    path = store.file("devices.csv",
                      "topics,custom_user_data,token,enabled,app,user_id\n"
                      '"news;sports","hello, ""world""",%s,true,demo,alice\n'
                      ',"line1\nline2",%s,false,demo,\n'
                      "weather,,%s,,voip,bob\n"
                      '"a;b;c",plain,%s,,demo,"carol"\n' % (t1.upper(), t2, t3, t4))
    proc = store.import_(path)  # csv from the file name
    assert summary(proc) == (4, 4, 0, 6, 0)
    endpoints, topics = store.snapshot()
    assert set(endpoints) == {("demo", t1), ("demo", t2), ("voip", t3), ("demo", t4)}
    got = {k: (e["user_id"], e["custom_user_data"], e["enabled"], e["topics"]) for k, e in endpoints.items()}
    assert got[("demo", t1)] == ("alice", 'hello, "world"', True, ["news", "sports"])
    assert got[("demo", t2)] == ("", "line1\nline2", False, [])
    assert got[("voip", t3)] == ("bob", "", True, ["weather"])
    assert got[("demo", t4)] == ("carol", "plain", True, ["a", "b", "c"])
    assert topics == ["a", "b", "c", "news", "sports", "weather"]


def test_bad_jsonl_rows_are_reported_by_line_and_skipped(store):
    good = [("demo", token(0x301)), ("voip", token(0x302)), ("demo", token(0x308)), ("demo", token(0x30B)),
            ("voip", token(0x30D))]
    path = store.file("mixed.jsonl", jsonl(
        {"app": "demo", "token": token(0x301), "topics": ["ok"]},                               # 1
        "this is not json",                                                                     # 2
        "",                                                                                     # 3 (blank)
        {"app": "demo"},                                                                        # 4 token
        {"app": "demo", "token": "xyz"},                                                        # 5 token
        {"app": "voip", "token": token(0x302)},                                                 # 6
        {"app": "nope", "token": token(0x303)},                                                 # 7 app
        {"app": "demo", "token": token(0x304), "colour": "red"},                                # 8 colour
        {"app": "demo", "token": token(0x305), "enabled": "true"},                              # 9 enabled
        {"app": "demo", "token": token(0x306), "custom_user_data": "x" * 2049},                 # 10
        {"app": "demo", "token": token(0x307), "topics": ["fine-here", "bad name!"]},           # 11 topics
        {"app": "demo", "token": token(0x308), "custom_user_data": "\u00e9" * 1024},            # 12 (2048 bytes)
        "[1, 2]",                                                                               # 13 not an object
        {"app": "demo", "token": token(0x309), "user_id": "u" * 257},                           # 14 user_id
        {"app": "demo", "token": token(0x30A), "topics": "ok"},                                 # 15 topics
        {"app": "demo", "token": token(0x30B).upper(), "topics": ["ok"]},                       # 16
        {"token": token(0x30C)},                                                                # 17 app
        {"app": "voip", "token": token(0x30D), "topics": ["ok"]}))                              # 18
    proc = store.import_(path, status=1)
    check_reports(proc, {2: None, 4: "token", 5: "token", 7: "app", 8: "colour", 9: "enabled",
                         10: "custom_user_data", 11: "topics", 13: None, 14: "user_id", 15: "topics", 17: "app"})
    assert summary(proc) == (5, 5, 0, 3, 12)
    endpoints, topics = store.snapshot()
    assert sorted(endpoints) == sorted(good), "exactly the good rows, none of the bad ones"
    assert topics == ["ok"], "a bad row creates no topic"
    assert [endpoints[k]["topics"] for k in good] == [["ok"], [], [], ["ok"], ["ok"]]


def test_bad_csv_rows_are_reported_by_the_line_their_record_starts_on(store):
    path = store.file("mixed.csv",
                      "app,token,enabled,custom_user_data\n"          # 1
                      "demo,%s,true,plain\n"                          # 2
                      'demo,%s,,"first\nsecond"\n'                    # 3-4
                      "demo,zz,,\n"                                   # 5 token
                      'nope,%s,,"multi\nline"\n'                      # 6-7 app
                      "demo,%s,yes,\n"                                # 8 enabled
                      'voip,%s,false,"a ""quoted"" word"\n'           # 9
                      % (token(0x401), token(0x402), token(0x403), token(0x404), token(0x405)))
    proc = store.import_(path, status=1)
    check_reports(proc, {5: "token", 6: "app", 8: "enabled"})
    assert summary(proc) == (3, 3, 0, 0, 3)
    assert exported(store.export("--format", "jsonl")) == [
        ("demo", token(0x401), "", "plain", True, ()), ("demo", token(0x402), "", "first\nsecond", True, ()),
        ("voip", token(0x405), "", 'a "quoted" word', False, ())]


def test_import_is_idempotent_and_updates_existing_endpoints(store):
    t1, t2 = token(0x501), token(0x502)
    first = store.file("first.jsonl", jsonl(
        {"app": "demo", "token": t1, "user_id": "u1", "custom_user_data": "one", "topics": ["news"]},
        {"app": "demo", "token": t2, "topics": ["news", "sports"]},
        {"app": "voip", "token": t1, "custom_user_data": "same token, other app"}))
    assert summary(store.import_(first)) == (3, 3, 0, 3, 0)
    before, topics_before = store.snapshot()
    assert len(before) == 3
    assert summary(store.import_(first)) == (3, 0, 3, 0, 0)
    assert store.snapshot() == (before, topics_before), "a re-run changes nothing (same ids, no duplicates)"
    assert topics_before == ["news", "sports"]

    update = store.file("update.jsonl", jsonl(
        {"app": "demo", "token": t1.upper(), "user_id": "u2", "custom_user_data": "changed", "enabled": False,
         "topics": ["sports"]},
        {"app": "demo", "token": t2, "topics": ["news"]}))
    assert summary(store.import_(update)) == (2, 0, 2, 1, 0)
    after, topics = store.snapshot()
    assert set(after) == set(before) and all(after[k]["id"] == before[k]["id"] for k in before)
    assert after[("demo", t1)] == dict(before[("demo", t1)], user_id="u2", custom_user_data="changed", enabled=False,
                                       topics=["news", "sports"]), "topics are added, none removed"
    assert after[("demo", t2)] == before[("demo", t2)]
    assert after[("voip", t1)] == before[("voip", t1)]

    # Empty CSV cells and absent JSON members leave the endpoint as it is.
    cells = store.file("cells.csv", CSV_HEADER + "\ndemo,%s,,,,\nvoip,%s,,,false,\n" % (t2, t1))
    assert summary(store.import_(cells)) == (2, 0, 2, 0, 0)
    enable = store.file("enable.jsonl", jsonl({"app": "demo", "token": t1, "enabled": True}))
    assert summary(store.import_(enable)) == (1, 0, 1, 0, 0)
    last, topics_last = store.snapshot()
    assert last[("demo", t2)] == before[("demo", t2)]
    assert last[("voip", t1)] == dict(before[("voip", t1)], enabled=False)
    assert last[("demo", t1)] == dict(after[("demo", t1)], enabled=True)
    assert topics_last == ["news", "sports"]


ROWS = 50_000


def bulk_topics(i):
    return [[], ["bulk-a"], ["bulk-a", "bulk-b"], ["bulk-c"]][i % 4]


def stored_endpoints(db):
    """Progress detection only (when to kill): rows in the store's endpoint table, read-only; 0 if unknown."""
    if not os.path.exists(db):
        return 0
    try:
        conn = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=0.05)
        try:
            names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                     if "endpoint" in n.lower()]
            return max([conn.execute('SELECT count(*) FROM "%s"' % n).fetchone()[0] for n in names] or [0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_kill_9_mid_import_then_rerun_completes_it(store):
    expected = [("demo", token(0xB0000 + i), "user-%d" % (i % 100), "row-%d" % i, True, tuple(bulk_topics(i)))
                for i in range(ROWS)]
    path = store.file("bulk.jsonl", jsonl(*({"app": a, "token": t, "user_id": u, "custom_user_data": c,
                                               "topics": list(ts)} for a, t, u, c, _, ts in expected)))
    proc = subprocess.Popen([BIN, "import", "--config", store.config, "--batch-rows", "1000", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.time()
    try:
        while proc.poll() is None and time.time() - started < 60:
            if stored_endpoints(store.db) > 0 or time.time() - started > 3:
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    killed = proc.returncode == -signal.SIGKILL
    partial = exported(store.export("--format", "jsonl"))
    n = len(partial)
    if killed:
        assert n % 1000 == 0 and n < ROWS, "a kill loses at most the batch in flight, never half of one (%d)" % n
    else:
        assert proc.returncode == 0 and n == ROWS, "finished before the kill (%s) with %d rows" % (proc.returncode, n)
    assert partial == expected[:n], "committed rows are whole rows (all their topics), in input order"

    again = store.import_("--batch-rows", "1000", path)
    subs_before = sum(len(r[5]) for r in expected[:n])
    assert summary(again) == (ROWS, ROWS - n, n, sum(len(r[5]) for r in expected) - subs_before, 0)
    assert exported(store.export("--format", "jsonl")) == expected, "exactly 50,000 endpoints, each with its topics"


def test_export_round_trips_through_import(tmp_path, lookalike):
    original = Store(str(tmp_path / "original"), lookalike)
    t1, t2, t3, t4 = token(0x601), token(0x602), token(0x603), token(0x604)
    odd = 'a, "b"\nc'
    server = serve(original, "api")
    try:
        with grpc.insecure_channel(server.address) as channel:
            registry = registry_pb2_grpc.RegistryStub(channel)
            for name in ("news", "sports"):
                registry.CreateTopic(registry_pb2.CreateTopicRequest(name=name), timeout=10)
            create = lambda app, t, **kw: registry.CreateEndpoint(  # noqa: E731
                registry_pb2.CreateEndpointRequest(app=app, token=t, **kw), timeout=10).id
            e1 = create("demo", t1, custom_user_data=odd, user_id="u1")
            e2 = create("voip", t2)
            e3 = create("demo", t3, custom_user_data="\u00e9 \u00fcn\u00efcode \u2713")
            e4 = create("demo", t4, user_id="u4")
            registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=e2, enabled=False), timeout=10)
            for e, topic in ((e1, "news"), (e1, "sports"), (e2, "sports"), (e4, "news")):
                registry.Subscribe(registry_pb2.SubscribeRequest(topic=topic, endpoint_id=e), timeout=10)
    finally:
        server.stop()
    rows = [("demo", t1, "u1", odd, True, ("news", "sports")), ("voip", t2, "", "", False, ("sports",)),
            ("demo", t3, "", "\u00e9 \u00fcn\u00efcode \u2713", True, ()), ("demo", t4, "u4", "", True, ("news",))]

    first_jsonl = original.export()  # stdout, jsonl by default
    assert exported(first_jsonl) == rows, "every endpoint, in creation order"
    assert exported(original.export("--app", "voip")) == [rows[1]]
    csv_path = os.path.join(original.directory, "out.csv")
    original.export(csv_path)  # csv from the file name
    with open(csv_path, newline="", encoding="utf-8") as fh:
        first_csv = fh.read()
    assert first_csv.splitlines()[0] == CSV_HEADER
    assert exported(first_csv, "csv") == rows
    assert exported(original.export("--format", "csv"), "csv") == rows

    strip = lambda snap: ({k: dict(v, id=None) for k, v in snap[0].items()}, snap[1])  # noqa: E731
    want = strip(original.snapshot())
    for fmt, text in (("jsonl", first_jsonl), ("csv", first_csv)):
        copy = Store(str(tmp_path / ("copy-" + fmt)), lookalike)
        source = copy.file("in." + fmt, text)
        assert summary(copy.import_(source)) == (4, 4, 0, 4, 0)
        again = copy.export("--format", fmt)
        assert exported(again, fmt) == rows
        assert sorted(again.splitlines()) == sorted((first_jsonl if fmt == "jsonl" else first_csv).splitlines()), \
            "the same export text, line for line"
        assert strip(copy.snapshot()) == want, "the same endpoints and subscriptions (%s)" % fmt


@pytest.mark.parametrize("header, named", [("app,user_id", "token"), ("token,topics", "app"),
                                           ("app,token,colour", "colour")])
def test_csv_header_problems_exit_2_before_importing_anything(store, header, named):
    kept = store.file("kept.jsonl", jsonl({"app": "demo", "token": token(0x701)}))
    store.import_(kept)
    cells = {"app": "demo", "token": token(0x702), "user_id": "alice", "topics": "news", "colour": "red"}
    body = "\n".join(",".join(cells[c] for c in header.split(",")) for _ in range(3))
    proc = store.import_(store.file("bad-header.csv", header + "\n" + body + "\n"), status=2)
    assert named in proc.stderr, proc.stderr
    assert exported(store.export()) == [("demo", token(0x701), "", "", True, ())]


def test_import_reads_stdin(store):
    proc = store.import_("-", stdin=jsonl({"app": "demo", "token": token(0x801).upper(), "topics": ["news"]}))
    assert summary(proc) == (1, 1, 0, 1, 0)
    proc = store.import_("--format", "csv", stdin="token,app,topics\n%s,voip,news;sports\n" % token(0x802))
    assert summary(proc) == (1, 1, 0, 2, 0)
    assert exported(store.export("-")) == [("demo", token(0x801), "", "", True, ("news",)),
                                           ("voip", token(0x802), "", "", True, ("news", "sports"))]


def test_usage_errors_exit_2(store):
    path = store.file("ok.jsonl", jsonl({"app": "demo", "token": token(0x901)}))
    for args in (["--config", store.config, "--no-such-flag", path], [path],
                 ["--config", store.config, os.path.join(store.directory, "missing.jsonl")],
                 ["--config", os.path.join(store.directory, "missing.json"), path]):
        proc = subprocess.run([BIN, "import"] + args, capture_output=True, text=True, encoding="utf-8", timeout=30)
        assert proc.returncode == 2, "%s exited %d:\n%s%s" % (args, proc.returncode, proc.stdout, proc.stderr)
    # Nothing was imported, so there is no store yet: export says so rather than making an empty one.
    proc = store.run("export")
    assert proc.returncode == 2 and "no such file" in proc.stderr, proc.stderr
    assert not os.path.exists(store.db)
    # A directory as the input is a usage error too.
    proc = subprocess.run([BIN, "import", "--config", store.config, store.directory], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 2 and "is a directory" in proc.stderr, proc.stderr


def test_spreadsheet_csv_and_wide_exports(store, tmp_path, lookalike):
    """What spreadsheets write (a byte order mark, TRUE/FALSE) imports; an unclosed quote costs only
    its own line; an endpoint of more topics than a row may hold exports as several rows that import
    back (review findings)."""
    csv_text = ("\ufeffapp,token,enabled\r\n"
                "demo,%s,TRUE\r\n"
                "demo,\"%s,FALSE\r\n"
                "demo,%s,FALSE\r\n") % (token(0xA01), token(0xA02), token(0xA03))
    proc = store.import_(store.file("excel.csv", csv_text), status=1)
    found = reports(proc)
    assert list(found) == [3] and "quote" in found[3], proc.stderr
    rows = {r[1]: r for r in exported(store.export())}
    assert set(rows) == {token(0xA01), token(0xA03)}
    # 130 topics: the import takes at most 100 a row, so the export writes two rows for it.
    topics = ["t%03d" % n for n in range(130)]
    first = store.file("wide1.jsonl", jsonl({"app": "demo", "token": token(0xA04), "topics": topics[:100]}))
    second = store.file("wide2.jsonl", jsonl({"app": "demo", "token": token(0xA04), "topics": topics[100:]}))
    store.import_(first)
    store.import_(second)
    text = store.export("--app", "demo")
    wide = [json.loads(line) for line in text.splitlines() if token(0xA04) in line]
    assert len(wide) == 2 and sum(len(w["topics"]) for w in wide) == 130
    copy = Store(str(tmp_path / "copy"), lookalike)
    copy.import_(copy.file("in.jsonl", text))
    again = [json.loads(line) for line in copy.export("--app", "demo").splitlines() if token(0xA04) in line]
    assert sorted(t for w in again for t in w["topics"]) == topics


def test_an_import_beside_a_running_gateway_leaves_it_serving(store):
    """docs/import.md: the import may run while a gateway uses the same SQLite file. Each batch (50,000
    rows by default) holds the write lock while it is written, so the gateway's store calls wait for it;
    none may wait past SQLite's busy_timeout (5 s), which would fail the call and turn the store-backed
    services NOT_SERVING. 150,000 rows of tokens in no order (three default batches), while a client
    creates endpoints and checks health throughout: every call answered, every check SERVING, no store
    failure in the gateway's log, and the gateway's own writes are there beside the imported rows."""
    import hashlib
    import threading
    from grpc.health.v1 import health_pb2, health_pb2_grpc

    rows = 150000
    path = store.file("beside.jsonl", "".join(
        json.dumps({"app": "demo", "token": hashlib.sha256(b"%d" % n).hexdigest(), "topics": ["bulk"]}) + "\n"
        for n in range(rows)))
    server = serve(store, "beside")
    calls, failures, slowest, created = [0], [], [0.0], []
    done = threading.Event()

    def client():
        with grpc.insecure_channel(server.address) as channel:
            registry = registry_pb2_grpc.RegistryStub(channel)
            health = health_pb2_grpc.HealthStub(channel)
            n = 0
            while not done.is_set():
                n += 1
                started = time.time()
                try:
                    created.append(registry.CreateEndpoint(
                        registry_pb2.CreateEndpointRequest(app="demo", token=token(0xD0000 + n)), timeout=15).id)
                    status = health.Check(health_pb2.HealthCheckRequest(service="pushgate.v1.Registry"),
                                          timeout=15).status
                    if status != health_pb2.HealthCheckResponse.SERVING:
                        failures.append("health %s after call %d" % (status, n))
                except grpc.RpcError as error:
                    failures.append("call %d: %s %s" % (n, error.code(), error.details()))
                slowest[0] = max(slowest[0], time.time() - started)
                calls[0] = n
                time.sleep(0.02)

    thread = threading.Thread(target=client, daemon=True)
    try:
        thread.start()
        proc = store.run("import", path, "--quiet", timeout=300)
        done.set()
        thread.join(30)
        print("\nimport beside a gateway: %s; %d client calls meanwhile, slowest %.2f s" % (
            proc.stdout.strip().splitlines()[-1], calls[0], slowest[0]))
        assert proc.returncode == 0, proc.stderr
        assert summary(proc) == (rows, rows, 0, rows, 0)
        assert not failures, failures[:5]
        assert calls[0] >= 5, "the client barely ran while the import did (%d calls)" % calls[0]
        assert not any("the store is failing" in line for line in server.log), "".join(server.log[-10:])
        with grpc.insecure_channel(server.address) as channel:
            registry = registry_pb2_grpc.RegistryStub(channel)
            for endpoint_id in (created[0], created[-1]):
                assert registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint_id), timeout=10).id == endpoint_id
    finally:
        done.set()
        server.stop()

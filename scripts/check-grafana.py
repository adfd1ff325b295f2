#!/usr/bin/env python3
"""Checks a Grafana dashboard (docs/grafana/pushgate-dashboard.json) against what Grafana needs and,
with --metrics, against what the gateway serves on /metrics. Part of `make test` through
Tests/interop/test_grafana_dashboard.py. Standard library only.

    check-grafana.py DASHBOARD [--metrics FILE_OR_URL]

Structure: a title, a uid, an integer schemaVersion; every panel has a type, a title and a gridPos
that fits the 24-column grid without overlapping another; every panel but a row has a unit and
targets, each with an expr and a refId unique within its panel; panels, targets and query
variables take their data source from the dashboard's datasource variable (type `datasource`,
query `prometheus`); every `$variable` a query uses is defined (or one of Grafana's `$__…`);
every `${NAME}` is a variable or declared in `__inputs`, and every `__inputs` entry is used.

Metrics: each PromQL expr (and each `label_values(...)` variable query) is tokenized; its metric
names are the identifiers outside label matchers, strings and `[...]` ranges that are not followed
by `(` and are not PromQL keywords. With --metrics (a Prometheus text exposition in a file, or an
http(s) URL to scrape), every name must be a `# TYPE` family, or a histogram family's `_bucket`,
`_sum` or `_count` (a summary's `_sum`/`_count`), or a counter family's name plus `_total`; a
histogram is never referenced bare. Label names are checked where the exposition shows them (a
family without samples gets its name checked only): a matcher `{label…}` against the sample lines
of that very name (so `le` only on `_bucket`), a `by`/`without`/`on`/`ignoring`/`group_left`/
`group_right` label against every metric in its expr (labels that label_replace, label_join or
count_values create count too). `instance` and `job` are added by Prometheus and always allowed.

Exits 1 listing every problem, else 0 with a one-line summary."""
import argparse
import json
import re
import sys
import urllib.request

TARGET_LABELS = {"instance", "job"}
# Not metric names when not followed by `(`: binary operators, modifiers, grouping keywords, literals.
KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
    "atan2", "inf", "nan", "start", "end",
}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
# Aggregation operators, which may take their grouping before their parentheses: `sum by (app) (…)`.
AGGREGATIONS = {
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk",
    "quantile", "limitk", "limit_ratio",
}
# Functions whose string arguments name a label they create: (function, argument index).
LABEL_CREATORS = {("label_replace", 1), ("label_join", 1), ("count_values", 0)}
IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
LABEL_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)[A-Za-z0-9_]*")
GRAFANA_VAR = re.compile(r"\$\{([A-Za-z0-9_.]+)(?::[^}]*)?\}|\$([A-Za-z0-9_]+)|\[\[([A-Za-z0-9_.]+)(?::[^\]]*)?\]\]")
OPERATORS = ["==", "!=", ">=", "<=", "=~", "!~", "+", "-", "*", "/", "%", "^", "<", ">", "=", "@", ":"]
UID = re.compile(r"[A-Za-z0-9_-]{1,40}$")


class PromQLError(Exception):
    pass


def tokenize(expr):
    """(kind, text) pairs: ident, number, string, var (a Grafana variable), punct, op."""
    tokens = []
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c.isspace():
            i += 1
        elif c == "#":
            while i < n and expr[i] != "\n":
                i += 1
        elif c in "\"'`":
            j = i + 1
            while j < n and expr[j] != c:
                if expr[j] == "\\" and c != "`":
                    j += 1
                j += 1
            if j >= n:
                raise PromQLError("unterminated string starting at %d" % i)
            tokens.append(("string", expr[i + 1:j]))
            i = j + 1
        elif c == "$" or expr.startswith("[[", i):
            m = GRAFANA_VAR.match(expr, i)
            if not m:
                raise PromQLError("stray %r at %d" % (c, i))
            tokens.append(("var", next(g for g in m.groups() if g)))
            i = m.end()
        elif c.isdigit() or (c == "." and i + 1 < n and expr[i + 1].isdigit()):
            m = NUMBER.match(expr, i)
            tokens.append(("number", m.group(0)))
            i = m.end()
        elif IDENT.match(expr, i):
            m = IDENT.match(expr, i)
            tokens.append(("ident", m.group(0)))
            i = m.end()
        elif c in "(){}[],":
            tokens.append(("punct", c))
            i += 1
        else:
            for op in OPERATORS:
                if expr.startswith(op, i):
                    tokens.append(("op", op))
                    i += len(op)
                    break
            else:
                raise PromQLError("unexpected %r at %d" % (c, i))
    return tokens


class Reference:
    """What one expr refers to: metric names (each with the labels its matchers name), grouping
    labels, labels the expr creates, and Grafana variables."""

    def __init__(self):
        self.selectors = []  # (metric name, [label names in its matchers])
        self.grouping = []
        self.created = set()
        self.variables = set()

    @property
    def metrics(self):
        return [name for name, _ in self.selectors]


def analyze(expr):
    tokens = tokenize(expr)
    ref = Reference()
    ref.variables = {text for kind, text in tokens if kind == "var"}
    for kind, text in tokens:  # `app=~"$app"`; label_replace's `$1` is a capture group
        if kind == "string":
            ref.variables |= {name for m in GRAFANA_VAR.finditer(text)
                              for name in m.groups() if name and not name.isdigit()}
    calls = []  # open parentheses: [function name or None, argument index]
    i = 0

    def peek(k):
        return tokens[k] if k < len(tokens) else (None, None)

    def matchers(k):
        """Parses `{…}` from k (the `{`); answers (label names, __name__ value or None, index after)."""
        labels, name = [], None
        k += 1
        while True:
            kind, text = peek(k)
            if kind is None:
                raise PromQLError("unclosed {")
            if (kind, text) == ("punct", "}"):
                return labels, name, k + 1
            if (kind, text) == ("punct", ","):
                k += 1
                continue
            if kind == "string" and peek(k + 1)[0] != "op":  # a quoted metric name: {"name"}
                name = text
                k += 1
                continue
            if kind not in ("ident", "string"):
                raise PromQLError("expected a label name in {...}, got %r" % text)
            op_kind, op = peek(k + 1)
            value_kind, value = peek(k + 2)
            if op_kind != "op" or op not in ("=", "!=", "=~", "!~") or value_kind != "string":
                raise PromQLError("bad label matcher after %r" % text)
            if text == "__name__" and op == "=":
                name = value
            elif text != "__name__":
                labels.append(text)
            k += 3

    def grouping(k):
        """Parses `by (a, b)` (or without, on, …) from k (the keyword); answers the index after `)`."""
        keyword = tokens[k][1]
        if peek(k + 1) != ("punct", "("):
            raise PromQLError("%s without (" % keyword)
        k += 2
        while peek(k) != ("punct", ")"):
            k_kind, label = peek(k)
            if k_kind is None:
                raise PromQLError("unclosed %s (" % keyword)
            if k_kind == "ident":
                ref.grouping.append(label)
            elif (k_kind, label) != ("punct", ","):
                raise PromQLError("unexpected %r in %s (...)" % (label, keyword))
            k += 1
        return k + 1

    while i < len(tokens):
        kind, text = tokens[i]
        if kind == "punct" and text == "[":
            depth = 1
            i += 1
            while depth:
                k, t = peek(i)
                if k is None:
                    raise PromQLError("unclosed [")
                if k == "punct" and t in "[]":
                    depth += 1 if t == "[" else -1
                i += 1
            continue
        if kind == "punct" and text == "{":
            labels, name, i = matchers(i)
            if name is None:
                raise PromQLError("a selector without a metric name")
            ref.selectors.append((name, labels))
            continue
        if kind == "punct" and text == "(":
            calls.append([None, 0])
            i += 1
            continue
        if kind == "punct" and text == ")":
            if not calls:
                raise PromQLError("unbalanced )")
            calls.pop()
            i += 1
            continue
        if kind == "punct" and text == ",":
            if calls:
                calls[-1][1] += 1
            i += 1
            continue
        if kind == "punct" and text == "}":
            raise PromQLError("unbalanced }")
        if kind == "punct" and text == "]":
            raise PromQLError("unbalanced ]")
        if kind == "string" and calls and (calls[-1][0], calls[-1][1]) in LABEL_CREATORS:
            ref.created.add(text)
        if kind == "ident":
            following = peek(i + 1)
            lowered = text.lower()
            if following[0] == "ident" and following[1].lower() in ("by", "without") and lowered in AGGREGATIONS:
                # `sum by (labels) (…)`: the grouping, then the aggregation's parentheses.
                k = grouping(i + 1)
                if peek(k) != ("punct", "("):
                    raise PromQLError("%s %s (...) without its argument" % (text, following[1]))
                calls.append([lowered, 0])
                i = k + 1
                continue
            if following == ("punct", "("):
                if lowered in GROUPING:
                    i = grouping(i)
                    continue
                calls.append([lowered, 0])
                i += 2
                continue
            if text.lower() in KEYWORDS:
                i += 1
                continue
            labels = []
            if following == ("punct", "{"):
                labels, _, end = matchers(i + 1)
                ref.selectors.append((text, labels))
                i = end
                continue
            ref.selectors.append((text, labels))
        i += 1
    if calls:
        raise PromQLError("unclosed (")
    return ref


class Exposition:
    """Families (`# TYPE`) and, per sample name, the label names its sample lines carry."""

    def __init__(self, text):
        self.types = {}
        self.sample_labels = {}
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                parts = line.split(None, 3)
                if len(parts) >= 4 and parts[1] == "TYPE":
                    self.types[parts[2]] = parts[3].strip()
                continue
            m = IDENT.match(line)
            if not m:
                continue
            name = m.group(0)
            self.sample_labels.setdefault(name, set()).update(self._labels(line[m.end():]))

    @staticmethod
    def _labels(rest):
        names = set()
        if not rest.startswith("{"):
            return names
        i = 1
        while i < len(rest):
            while i < len(rest) and rest[i] in " ,":
                i += 1
            if i < len(rest) and rest[i] == "}":
                break
            m = LABEL_START.match(rest, i)
            if not m:
                break
            names.add(m.group(0))
            i = m.end()
            while i < len(rest) and rest[i] in " =":
                i += 1
            if i >= len(rest) or rest[i] != '"':
                break
            i += 1
            while i < len(rest) and rest[i] != '"':
                i += 2 if rest[i] == "\\" else 1
            i += 1
        return names

    def resolve(self, name):
        """(family, problem): the family a referenced name belongs to, or why it does not."""
        kind = self.types.get(name)
        if kind == "histogram":
            return None, "%s is a histogram: use %s_bucket, _sum or _count" % (name, name)
        if kind is not None:
            return name, None
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix):
                base = name[: -len(suffix)]
                base_kind = self.types.get(base)
                if base_kind == "histogram" or (base_kind == "summary" and suffix != "_bucket"):
                    return base, None
                if base_kind is not None:
                    return None, "%s: %s is a %s, not a histogram" % (name, base, base_kind)
        if name.endswith("_total") and self.types.get(name[: -len("_total")]) == "counter":
            return name[: -len("_total")], None
        return None, "%s is not a metric family of the exposition" % name

    def labels_of(self, name):
        """Label names of the sample lines named `name`, or None when there are none."""
        labels = self.sample_labels.get(name)
        return None if labels is None else labels | TARGET_LABELS


def datasource_ok(ds, variable):
    allowed = {"$" + variable, "${%s}" % variable}
    if isinstance(ds, str):
        return ds in allowed
    if isinstance(ds, dict):
        return ds.get("uid") in allowed and ds.get("type", "prometheus") == "prometheus"
    return False


def check(dashboard_path, metrics_source):
    problems = []
    try:
        with open(dashboard_path, encoding="utf-8") as fh:
            raw = fh.read()
        dashboard = json.loads(raw)
    except (OSError, ValueError) as error:
        return ["%s: %s" % (dashboard_path, error)], None
    if not isinstance(dashboard, dict):
        return ["the dashboard is not a JSON object"], None

    exposition = None
    if metrics_source:
        try:
            if re.match(r"https?://", metrics_source):
                with urllib.request.urlopen(metrics_source, timeout=10) as response:
                    text = response.read().decode("utf-8")
            else:
                with open(metrics_source, encoding="utf-8") as fh:
                    text = fh.read()
        except (OSError, ValueError) as error:
            return ["--metrics %s: %s" % (metrics_source, error)], None
        exposition = Exposition(text)
        if not exposition.types:
            problems.append("--metrics %s: no '# TYPE' line" % metrics_source)

    for key in ("title", "uid"):
        if not isinstance(dashboard.get(key), str) or not dashboard[key].strip():
            problems.append("dashboard: no %s" % key)
    if isinstance(dashboard.get("uid"), str) and not UID.match(dashboard["uid"]):
        problems.append("dashboard: uid %r is not 1-40 letters, digits, '-' or '_'" % dashboard["uid"])
    if not isinstance(dashboard.get("schemaVersion"), int) or isinstance(dashboard.get("schemaVersion"), bool):
        problems.append("dashboard: schemaVersion is not an integer")

    # Template variables.
    templating = dashboard.get("templating", {"list": []})
    variables = templating.get("list") if isinstance(templating, dict) else None
    if not isinstance(variables, list):
        problems.append("dashboard: templating.list is not a list")
        variables = []
    names = [v.get("name") for v in variables if isinstance(v, dict)]
    for name in sorted({n for n in names if names.count(n) > 1}, key=str):
        problems.append("templating: variable %r defined twice" % name)
    datasource_vars = [v for v in variables if isinstance(v, dict) and v.get("type") == "datasource"]
    ds_var = None
    if len(datasource_vars) != 1:
        problems.append("templating: %d datasource variables, want exactly one (type datasource, query prometheus)"
                        % len(datasource_vars))
    else:
        ds_var = datasource_vars[0].get("name")
        if datasource_vars[0].get("query") != "prometheus":
            problems.append("templating: variable %r: query %r, want 'prometheus'"
                            % (ds_var, datasource_vars[0].get("query")))
    defined = set(n for n in names if isinstance(n, str))

    references = []  # (where, Reference)
    queries = 0

    def analyze_into(where, expr):
        try:
            ref = analyze(expr)
        except PromQLError as error:
            problems.append("%s: cannot read expr: %s: %s" % (where, error, expr))
            return
        references.append((where, ref))
        for variable in sorted(ref.variables):
            if variable not in defined and not variable.startswith("__"):
                problems.append("%s: uses undefined variable $%s" % (where, variable))

    for variable in variables:
        if not isinstance(variable, dict):
            problems.append("templating: a variable is not an object")
            continue
        where = "variable %r" % variable.get("name")
        if not isinstance(variable.get("name"), str) or not variable["name"]:
            problems.append("templating: a variable without a name")
        if variable.get("type") != "query":
            continue
        if ds_var and not datasource_ok(variable.get("datasource"), ds_var):
            problems.append("%s: datasource %r does not reference $%s" % (where, variable.get("datasource"), ds_var))
        query = variable.get("query")
        text = query.get("query") if isinstance(query, dict) else query
        if not isinstance(text, str) or not text.strip():
            problems.append("%s: no query" % where)
            continue
        m = re.match(r"\s*label_values\(\s*(.*?)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$", text, re.S)
        if m:
            analyze_into(where, m.group(1))
            if references and references[-1][0] == where:
                references[-1][1].grouping.append(m.group(2))
        elif re.match(r"\s*(label_values|label_names|metrics|query_result)\(", text):
            m2 = re.match(r"\s*query_result\((.*)\)\s*$", text, re.S)
            if m2:
                analyze_into(where, m2.group(1))
        else:
            analyze_into(where, text)

    # Panels.
    ids = {}
    panel_count = 0

    def check_panels(panels, where, check_overlap):
        nonlocal panel_count, queries
        if not isinstance(panels, list):
            problems.append("%s: panels is not a list" % where)
            return
        cells = {}
        for index, panel in enumerate(panels):
            if not isinstance(panel, dict):
                problems.append("%s: panel %d is not an object" % (where, index))
                continue
            title = panel.get("title")
            here = "panel %r (id %s)" % (title, panel.get("id"))
            panel_count += 1
            if not isinstance(panel.get("type"), str) or not panel["type"]:
                problems.append("%s: no type" % here)
            if not isinstance(title, str) or not title.strip():
                problems.append("%s: no title" % here)
            pid = panel.get("id")
            if not isinstance(pid, int):
                problems.append("%s: no integer id" % here)
            elif pid in ids:
                problems.append("%s: id %d also used by panel %r" % (here, pid, ids[pid]))
            else:
                ids[pid] = title
            grid = panel.get("gridPos")
            if not isinstance(grid, dict) or not all(isinstance(grid.get(k), int) for k in "hwxy"):
                problems.append("%s: gridPos needs integers h, w, x, y" % here)
            elif grid["h"] < 1 or grid["w"] < 1 or grid["x"] < 0 or grid["y"] < 0 or grid["x"] + grid["w"] > 24:
                problems.append("%s: gridPos %r is outside the 24-column grid" % (here, grid))
            elif check_overlap:
                for x in range(grid["x"], grid["x"] + grid["w"]):
                    for y in range(grid["y"], grid["y"] + grid["h"]):
                        if (x, y) in cells:
                            problems.append("%s: overlaps panel %r" % (here, cells[(x, y)]))
                            break
                        cells[(x, y)] = title
                    else:
                        continue
                    break
            if panel.get("type") == "row":
                nested = panel.get("panels", [])
                if nested:
                    # A collapsed row keeps its panels inside; an open one has none there.
                    check_panels(nested, here, False)
                continue
            if ds_var and not datasource_ok(panel.get("datasource"), ds_var):
                problems.append("%s: datasource %r does not reference $%s" % (here, panel.get("datasource"), ds_var))
            defaults = (panel.get("fieldConfig") or {}).get("defaults") or {}
            if not isinstance(defaults.get("unit"), str) or not defaults["unit"]:
                problems.append("%s: no unit (fieldConfig.defaults.unit)" % here)
            targets = panel.get("targets")
            if not isinstance(targets, list) or not targets:
                problems.append("%s: no targets" % here)
                continue
            refs = set()
            for number, target in enumerate(targets):
                if not isinstance(target, dict):
                    problems.append("%s: target %d is not an object" % (here, number))
                    continue
                ref_id = target.get("refId")
                there = "%s target %s" % (here, ref_id if isinstance(ref_id, str) else number)
                if not isinstance(ref_id, str) or not ref_id:
                    problems.append("%s: no refId" % there)
                elif ref_id in refs:
                    problems.append("%s: refId used twice in the panel" % there)
                else:
                    refs.add(ref_id)
                if "datasource" in target and ds_var and not datasource_ok(target["datasource"], ds_var):
                    problems.append("%s: datasource %r does not reference $%s" % (there, target["datasource"], ds_var))
                expr = target.get("expr")
                if not isinstance(expr, str) or not expr.strip():
                    problems.append("%s: no expr" % there)
                    continue
                queries += 1
                analyze_into(there, expr)

    check_panels(dashboard.get("panels"), "dashboard", True)
    if panel_count == 0:
        problems.append("dashboard: no panels")

    # ${NAME} references and __inputs.
    inputs = dashboard.get("__inputs", [])
    declared = set()
    if not isinstance(inputs, list):
        problems.append("dashboard: __inputs is not a list")
        inputs = []
    for entry in inputs:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("name", "type")):
            problems.append("__inputs: an entry without a name and type")
            continue
        declared.add(entry["name"])
        if entry["type"] == "datasource" and not entry.get("pluginId"):
            problems.append("__inputs: %s has no pluginId" % entry["name"])
    used = set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", raw))
    for name in sorted(used - declared - defined):
        if not name.startswith("__"):
            problems.append("dashboard: ${%s} is neither a variable nor declared in __inputs" % name)
    for name in sorted(declared - used):
        problems.append("__inputs: %s is declared but ${%s} is not used" % (name, name))

    # Metric names and labels against the exposition.
    families = set()
    labelled = set()
    for where, ref in references:
        known = []  # label sets of the expr's metrics, where the exposition shows them
        unknown = False
        for name, labels in ref.selectors:
            if exposition is None:
                families.add(name)
                continue
            family, problem = exposition.resolve(name)
            if problem:
                problems.append("%s: %s" % (where, problem))
                unknown = True
                continue
            families.add(family)
            have = exposition.labels_of(name)
            if have is None:
                unknown = True
                continue
            labelled.add(family)
            known.append(have)
            for label in labels:
                if label not in have:
                    problems.append("%s: %s has no label %r (it has: %s)"
                                    % (where, name, label, ", ".join(sorted(have - TARGET_LABELS)) or "none"))
        for label in ref.grouping:
            if not LABEL_NAME.match(label):
                problems.append("%s: %r is not a label name" % (where, label))
            elif exposition is not None and known and not unknown \
                    and label not in ref.created and not any(label in have for have in known):
                problems.append("%s: label %r is on none of %s"
                                % (where, label, ", ".join(sorted(set(ref.metrics)))))
    return problems, (panel_count, queries, families, labelled)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dashboard")
    parser.add_argument("--metrics", metavar="FILE_OR_URL",
                        help="a Prometheus text exposition (file, or http URL to scrape) to check names and labels")
    args = parser.parse_args(argv)
    problems, stats = check(args.dashboard, args.metrics)
    if problems:
        print("%s: %d problem%s" % (args.dashboard, len(problems), "" if len(problems) == 1 else "s"))
        for problem in problems:
            print("  " + problem)
        return 1
    panels, queries, families, labelled = stats
    if args.metrics:
        print("%s: ok: %d panels, %d queries, %d metric families all served by %s (labels checked on %d with samples)"
              % (args.dashboard, panels, queries, len(families), args.metrics, len(labelled)))
    else:
        print("%s: ok: %d panels, %d queries, %d metric names (not checked: no --metrics)"
              % (args.dashboard, panels, queries, len(families)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

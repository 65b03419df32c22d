#!/usr/bin/env python3
"""Check that every metric and label used by the dashboard and the alert rules exists.

Usage:
  ops_names.py --contract dashboards/contract-metrics.md  [--dashboard F] [--alerts F]
  ops_names.py --scrape METRICS.txt    [--dashboard F] [--alerts F]
  ops_names.py --promql-rules OUT.yml  [--dashboard F]   # dashboard exprs as rules, for `promtool check rules`

The known metrics come either from the stable metric table (dashboards/contract-metrics.md) or from a
real /metrics scrape (`# TYPE` lines give base names: a histogram `x` is queried
as `x_bucket`, `x_sum`, `x_count`). Exits 1 listing every unknown name or label.
Standard library only (no PyYAML): alert expressions are read with a small
reader that understands `expr: ...` and `expr: |` blocks.
"""
import argparse
import json
import re
import sys

HIST_SUFFIXES = ("_bucket", "_sum", "_count")
# Series Prometheus makes itself for every target.
SYNTHETIC = {"up": set()}
TARGET_LABELS = {"job", "instance"}
PROMQL_WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
    "and", "or", "unless", "inf", "nan", "atan2",
}
# Grafana's own variables, replaced before parsing.
GRAFANA_VARS = {"$__rate_interval": "1m", "$__interval": "1m", "$__range": "1h", "$upstream": ".*"}


def contract_metrics(path):
    """{name: (type, labels)} from the `| metric | type | labels |` table."""
    out = {}
    row = re.compile(r"^\|\s*`([a-zA-Z_:][a-zA-Z0-9_:]*)`\s*\|\s*(\w+)\s*\|(.*)\|\s*$")
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = row.match(line)
            if not m or m.group(2) not in ("counter", "gauge", "histogram", "summary"):
                continue
            labels_text = re.sub(r"\([^)]*\)", "", m.group(3))
            labels = {l.strip() for l in labels_text.split(",")}
            labels = {l for l in labels if re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", l)}
            out[m.group(1)] = (m.group(2), labels)
    if not out:
        sys.exit(f"ops_names: no metric table found in {path}")
    return out


def scrape_metrics(path):
    """{name: (type, labels)} from Prometheus text format."""
    types, labels = {}, {}
    sample = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+\S+")
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# TYPE "):
                parts = line.split()
                if len(parts) >= 4:
                    types[parts[2]] = parts[3]
                    labels.setdefault(parts[2], set())
                continue
            m = sample.match(line)
            if not m:
                continue
            name = m.group(1)
            family = name
            for suffix in HIST_SUFFIXES:
                if name.endswith(suffix) and types.get(name[: -len(suffix)]) in ("histogram", "summary"):
                    family = name[: -len(suffix)]
            names = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or ""))
            labels.setdefault(family, set()).update(names - {"le", "quantile"})
    return {n: (t, labels.get(n, set())) for n, t in types.items()}


def resolve(name, known):
    """(labels allowed on the series, error or None) for a series name."""
    if name in SYNTHETIC:
        return SYNTHETIC[name] | TARGET_LABELS, None
    entry = known.get(name)
    if entry:
        if entry[0] in ("histogram", "summary"):
            return set(), f"{name} is a {entry[0]}: query {name}_bucket/_sum/_count"
        return entry[1] | TARGET_LABELS, None
    for suffix in HIST_SUFFIXES:
        base = name[: -len(suffix)]
        if name.endswith(suffix) and known.get(base, ("",))[0] in ("histogram", "summary"):
            extra = {"le"} if suffix == "_bucket" else set()
            return known[base][1] | TARGET_LABELS | extra, None
    # OpenMetrics scrapes name counters without `_total` in `# TYPE`.
    if name.endswith("_total") and known.get(name[:-6], ("",))[0] == "counter":
        return known[name[:-6]][1] | TARGET_LABELS, None
    return set(), f"unknown metric {name}"


def strip_strings(expr):
    return re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)


def analyse(expr, known):
    """Errors for one PromQL expression: unknown metrics, unknown labels."""
    for var, value in GRAFANA_VARS.items():
        expr = expr.replace(var, value)
    errors = []
    text = strip_strings(expr)
    text = re.sub(r"\[[^\]]*\]", "", text)
    used_labels = set()
    selectors = []
    for m in re.finditer(r"\{([^}]*)\}", text):
        used_labels.update(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", m.group(1)))
    text_nosel = re.sub(r"\{[^}]*\}", " ", text)
    for m in re.finditer(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", text_nosel):
        used_labels.update(l.strip() for l in m.group(1).split(",") if l.strip())
    text_nosel = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text_nosel)
    for m in re.finditer(r"(?<![A-Za-z0-9_:.])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?", text_nosel):
        word, call = m.group(1), m.group(2)
        if call or word in PROMQL_WORDS:
            continue
        selectors.append(word)
    allowed = set(TARGET_LABELS)
    for name in selectors:
        labels, err = resolve(name, known)
        if err:
            errors.append(err)
        allowed |= labels
    if not selectors:
        errors.append("no metric in expression")
    if errors:
        return selectors, errors  # label checks mean nothing against an unknown metric
    for label in sorted(used_labels - allowed):
        errors.append(f"label {label} is not a label of {', '.join(sorted(set(selectors)))}")
    return selectors, errors


def dashboard_exprs(path):
    """[(where, expr, legend)] of every panel target and the label_values variables."""
    with open(path, encoding="utf-8") as f:
        dash = json.load(f)
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((f"panel '{p.get('title')}'", t["expr"], t.get("legendFormat", "")))
            walk(p.get("panels", []))

    walk(dash.get("panels", []))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        m = re.fullmatch(r"\s*label_values\(\s*(.+?)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*", q)
        if m:
            out.append((f"variable ${v.get('name')}", f"count by ({m.group(2)}) ({m.group(1)})", ""))
    return out


def alert_exprs(path):
    """[(where, expr)] of every `expr:` in a rule file (plain or block scalar)."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    name = "?"
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*-?\s*(?:alert|record):\s*(\S+)", line)
        if m:
            name = m.group(1)
        m = re.match(r"^(\s*)expr:\s*(.*)$", line)
        if m:
            indent, value = len(m.group(1)), m.group(2).strip()
            if value in ("|", "|-", "|+", ">", ">-", ">+"):
                block = []
                i += 1
                while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                    block.append(lines[i])
                    i += 1
                out.append((f"rule {name}", "\n".join(block)))
                continue
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            out.append((f"rule {name}", value))
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--contract")
    src.add_argument("--scrape")
    src.add_argument("--promql-rules", metavar="OUT")
    ap.add_argument("--dashboard", default="dashboards/a2a-tap.json")
    ap.add_argument("--alerts", default="dashboards/alerts.yml")
    args = ap.parse_args()

    dash = dashboard_exprs(args.dashboard)
    if args.promql_rules:
        with open(args.promql_rules, "w", encoding="utf-8") as f:
            f.write("groups:\n  - name: dashboard-exprs\n    rules:\n")
            for n, (_, expr, _) in enumerate(dash):
                for var, value in GRAFANA_VARS.items():
                    expr = expr.replace(var, value)
                f.write(f"      - record: dashboard_expr_{n}\n        expr: {json.dumps(expr)}\n")
        print(f"ops_names: wrote {len(dash)} dashboard expressions to {args.promql_rules}")
        return 0

    known = contract_metrics(args.contract) if args.contract else scrape_metrics(args.scrape)
    where_from = args.contract or args.scrape
    problems, used = [], set()
    exprs = [(w, e, l) for w, e, l in dash] + [(w, e, "") for w, e in alert_exprs(args.alerts)]
    for where, expr, legend in exprs:
        names, errors = analyse(expr, known)
        used.update(names)
        if errors:
            problems.extend(f"{where}: {e}" for e in errors)
            continue
        allowed = set(TARGET_LABELS)
        for n in names:
            allowed |= resolve(n, known)[0]
        for label in re.findall(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}", legend):
            if label not in allowed:
                errors.append(f"legend uses label {label} that no metric of the query has")
        problems.extend(f"{where}: {e}" for e in errors)
    print(f"ops_names: {len(exprs)} expressions, {len(used)} series names checked against {where_from}")
    print("ops_names: names used: " + ", ".join(sorted(used)))
    if problems:
        print("ops_names: MISSING or WRONG:", file=sys.stderr)
        for p in sorted(set(problems)):
            print(f"  {p}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

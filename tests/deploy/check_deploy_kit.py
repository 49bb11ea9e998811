#!/usr/bin/env python3
"""The deploy kit (deploy/) checked against the real kairo: every metric the Grafana dashboard, the alert rules and
the autoscaler use is one a running `kairo serve` exports on /metrics, and every `kairo serve` flag the Kubernetes
manifests and the Dockerfile pass exists (`kairo serve --help`). Ports, probe paths and names that must agree
between the files are checked too.

  check_deploy_kit.py KAIRO SOURCE_DIR [EMULATOR...]

The exposition comes from a real server on the demo model (under two names, so the several-model series are there
too), started with an API-keys file so the per-key series are exported too. Fails with one line per problem.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

KEY = "sk-deploy-kit-test"
# Names Prometheus itself attaches to every scrape target.
PROMETHEUS_OWN = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}
PROMQL_WORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset",
                "bool", "inf", "nan"}

problems = []


def problem(msg):
    problems.append(msg)


def start_server(kairo, model, workdir):
    keys = os.path.join(workdir, "keys.json")
    with open(keys, "w") as f:
        json.dump({"keys": [{"name": "deploy-kit", "key": KEY}]}, f)
    log_path = os.path.join(workdir, "serve.log")
    log = open(log_path, "w")
    # Two models (the demo model under two names), so the model-switch series of a several-model server are exported
    # too; a one-model server exports the rest of them alike.
    proc = subprocess.Popen(kairo + ["serve", "--model", "demo=" + model, "--model", "demo-b=" + model, "--port", "0",
                                     "--no-access-log", "--shutdown-timeout", "1", "--api-keys-file", keys],
                            stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 60
    while time.time() < deadline:
        text = open(log_path).read()
        if "kairo serve: ready" in text:
            port = re.search(r"listening on http://[^:]*:(\d+)", text).group(1)
            return proc, int(port)
        if proc.poll() is not None:
            sys.exit("kairo serve exited early:\n" + text)
        time.sleep(0.1)
    proc.kill()
    sys.exit("kairo serve did not become ready in 60 s:\n" + open(log_path).read())


def get(port, path, auth=True):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if auth:
        req.add_header("Authorization", "Bearer " + KEY)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def exported_names(exposition):
    """Series names a query can use (every sample's name, and each histogram's _bucket/_sum/_count), and the metric
    family names prose may mention (a histogram by its own name)."""
    series, families = set(), set()
    for line in exposition.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            families.add(name)
            series.update([name + s for s in ("_bucket", "_sum", "_count")] if kind == "histogram" else [name])
        elif line and not line.startswith("#"):
            series.add(re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", line).group(0))
    return series, families | series


def promql_metrics(expr):
    """Metric names in a PromQL expression: identifiers that are not functions, keywords or label names."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)
    e = re.sub(r"\{[^}]*\}", "", e)      # label matchers
    e = re.sub(r"\[[^\]]*\]", "", e)     # ranges and subqueries
    e = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)  # label lists
    e = re.sub(r"\$\{?\w+\}?", "", e)    # Grafana variables
    names = set()
    for m in re.finditer(r"(?<![A-Za-z0-9_.:])[A-Za-z_:][A-Za-z0-9_:]*", e):
        if e[m.end():].lstrip().startswith("(") or m.group(0).lower() in PROMQL_WORDS:
            continue
        names.add(m.group(0))
    return names


def check_metrics(where, names, exported):
    for name in sorted(names):
        if name not in exported and name not in PROMETHEUS_OWN:
            problem(f"{where}: metric {name} is not in kairo's /metrics")


def dashboard_queries(dash):
    for panel in dash.get("panels", []):
        for inner in [panel] + panel.get("panels", []):
            for t in inner.get("targets", []):
                yield f"panel '{inner.get('title')}'", t["expr"]


def check_dashboard(path, exported):
    dash = json.load(open(path))
    variables = dash["templating"]["list"]
    if not any(v["type"] == "datasource" and v["query"] == "prometheus" for v in variables):
        problem(f"{path}: no Prometheus datasource variable")
    n = 0
    for where, expr in dashboard_queries(dash):
        n += 1
        check_metrics(f"{path}: {where}", promql_metrics(expr), exported)
    for v in variables:
        if v["type"] != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.match(r"\s*label_values\(\s*([^,]+),", q)
        if m:
            check_metrics(f"{path}: variable {v['name']}", promql_metrics(m.group(1)), exported)
    for panel in dash["panels"]:
        if panel["type"] != "row" and panel.get("datasource", {}).get("uid") != "${datasource}":
            problem(f"{path}: panel '{panel['title']}' does not use the datasource variable")
    return n


def check_alerts(path, exported):
    rules = [r for g in yaml.safe_load(open(path))["groups"] for r in g["rules"]]
    for r in rules:
        check_metrics(f"{path}: alert {r['alert']}", promql_metrics(r["expr"]), exported)
    return len(rules)


def serve_flags(kairo):
    out = subprocess.run(kairo + ["serve", "--help"], capture_output=True, text=True, check=True).stdout
    flags = set()
    for m in re.finditer(r"^\s+((?:-\w,)?--[\w-]+)", out, re.M):
        flags.update(m.group(1).split(","))
    return flags


def check_serve_args(where, args, flags):
    if not args or args[0] != "serve":
        problem(f"{where}: the arguments should start with the serve subcommand, not {args[:1]}")
    for a in args[1:]:
        if a.startswith("-") and a.split("=", 1)[0] not in flags:
            problem(f"{where}: `kairo serve` has no flag {a.split('=', 1)[0]}")


def arg_value(args, flag):
    return args[args.index(flag) + 1] if flag in args else None


def check_kubernetes(kdir, flags, exported):
    docs = {}
    for name in sorted(os.listdir(kdir)):
        for doc in yaml.safe_load_all(open(os.path.join(kdir, name))):
            if doc and "kind" in doc:
                docs[doc["kind"]] = doc
    deployment = docs["Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    args = container.get("args", [])
    if "command" in container:  # else the image's ENTRYPOINT, kairo
        args = container["command"][1:] + args
    check_serve_args(f"{kdir}/deployment.yaml", args, flags)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    if str(ports.get("http")) != arg_value(args, "--port"):
        problem(f"{kdir}/deployment.yaml: containerPort http {ports.get('http')} is not --port {arg_value(args, '--port')}")
    if arg_value(args, "--host") != "0.0.0.0":
        problem(f"{kdir}/deployment.yaml: --host must be 0.0.0.0 in a pod (kairo listens on 127.0.0.1 by default)")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get_ = container[probe]["httpGet"]
        if get_["path"] != "/health" or get_["port"] not in ports:
            problem(f"{kdir}/deployment.yaml: {probe} should GET /health on a named container port")
    if docs["Service"]["spec"]["ports"][0]["targetPort"] not in ports:
        problem(f"{kdir}/service.yaml: targetPort is not a container port name")
    endpoint = docs["PodMonitor"]["spec"]["podMetricsEndpoints"][0]
    if endpoint["port"] not in ports or endpoint["path"] != "/metrics":
        problem(f"{kdir}/podmonitor.yaml: should scrape /metrics on a container port name")
    hpa = docs["HorizontalPodAutoscaler"]
    if hpa["spec"]["scaleTargetRef"]["name"] != deployment["metadata"]["name"]:
        problem(f"{kdir}/hpa.yaml: scaleTargetRef is not the Deployment")
    # The HPA's pods metric is a kairo series renamed by the prometheus-adapter rule.
    adapter = yaml.safe_load(open(os.path.join(kdir, "prometheus-adapter-values.yaml")))
    served = set()
    for rule in adapter["rules"]["custom"]:
        series = re.match(r"[A-Za-z_:][\w:]*", rule["seriesQuery"]).group(0)
        check_metrics(f"{kdir}/prometheus-adapter-values.yaml", {series}, exported)
        as_ = rule["name"]["as"].replace("${1}", r"\1")
        served.add(re.sub(rule["name"]["matches"], as_, series))
    for m in hpa["spec"]["metrics"]:
        name = m["pods"]["metric"]["name"]
        if name not in served:
            problem(f"{kdir}/hpa.yaml: pods metric {name} is not one the prometheus-adapter rules serve ({served})")


def check_dockerfile(path, flags):
    text = open(path).read()
    exec_form = {k: json.loads(v) for k, v in re.findall(r"^(CMD|ENTRYPOINT)\s+(\[.*\])\s*$", text, re.M)}
    if exec_form.get("ENTRYPOINT") != ["kairo"]:
        problem(f"{path}: ENTRYPOINT should be [\"kairo\"]")
    cmd = exec_form.get("CMD", [])
    check_serve_args(f"{path}: CMD", cmd, flags)
    exposed = re.findall(r"^EXPOSE\s+(\d+)", text, re.M)
    health = re.search(r"^HEALTHCHECK[\s\S]*?http://127\.0\.0\.1:(\d+)(/\S*)", text, re.M)
    if exposed != [arg_value(cmd, "--port")] or not health or health.group(1) != exposed[0]:
        problem(f"{path}: EXPOSE {exposed}, CMD --port {arg_value(cmd, '--port')} and the HEALTHCHECK port differ")
    if health and health.group(2) != "/health":
        problem(f"{path}: HEALTHCHECK should GET /health")
    if "--target kairo" not in text:
        problem(f"{path}: should build only the kairo target")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    kairo = sys.argv[3:] + [sys.argv[1]]  # an emulator (cross builds) runs the binary
    src = sys.argv[2]
    deploy = os.path.join(src, "deploy")
    with tempfile.TemporaryDirectory() as workdir:
        proc, port = start_server(kairo, os.path.join(src, "models", "aidreams260K.gguf"), workdir)
        try:
            health = get(port, "/health", auth=False)
            metrics_status, exposition = get(port, "/metrics")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    # The probes rely on this: unauthenticated, 200 once the model is loaded.
    if health[0] != 200 or json.loads(health[1]).get("status") != "ok":
        problem(f"GET /health on a ready server: {health}")
    if metrics_status != 200:
        sys.exit(f"GET /metrics: {metrics_status} {exposition}")
    exported, mentionable = exported_names(exposition)
    flags = serve_flags(kairo)
    n_panels = check_dashboard(os.path.join(deploy, "grafana", "kairo.json"), exported)
    n_alerts = check_alerts(os.path.join(deploy, "prometheus", "alerts.yml"), exported)
    check_kubernetes(os.path.join(deploy, "kubernetes"), flags, exported)
    check_dockerfile(os.path.join(deploy, "docker", "Dockerfile"), flags)
    # Names mentioned anywhere in the kit (descriptions, comments) must be real too. Every kairo metric name has an
    # underscore; image tags such as kairo:latest have none.
    for root, _, files in os.walk(deploy):
        for name in files:
            path = os.path.join(root, name)
            mentioned = set(re.findall(r"kairo:[A-Za-z_][A-Za-z0-9]*_[A-Za-z0-9_]*", open(path).read()))
            check_metrics(path, mentioned, mentionable)
    for p in problems:
        print("deploy kit:", p)
    if problems:
        return 1
    print(f"deploy kit: {n_panels} dashboard queries, {n_alerts} alerts, the Kubernetes manifests and the "
          f"Dockerfile agree with kairo's /metrics ({len(exported)} series names) and `kairo serve --help` "
          f"({len(flags)} flags)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Alerts that fire (issue #54): redis_exporter (Debian's prometheus-redis-exporter) scrapes a live
server with redis/bloomery_metrics.lua, the scrape is parsed as Prometheus text, and the rules of
docs/alerts/bloomery.rules.yml, evaluated by promtool on the scraped values, fire for the key over
its limit and for no other. Redis 7.0 leaves the module's INFO section out of `INFO` and
`INFO all`, and redis_exporter reads only the INFO fields it knows: the script is the way in."""
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request

import pytest
import redis

from conftest import free_port

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "redis", "bloomery_metrics.lua")
RULES = os.path.join(ROOT, "docs", "alerts", "bloomery.rules.yml")
OPERATING = os.path.join(ROOT, "docs", "OPERATING.md")
EXPORTER = (os.environ.get("BLOOMERY_REDIS_EXPORTER") or shutil.which("prometheus-redis-exporter")
            or shutil.which("redis_exporter"))
PROMTOOL = shutil.which("promtool")
# python3-prometheus-client: the parser Prometheus's own Python client uses.
text_string_to_metric_families = pytest.importorskip(
    "prometheus_client.parser").text_string_to_metric_families
INSTANCE = "redis:6379"  # the instance label Prometheus would add at scrape time

needs_exporter = pytest.mark.skipif(
    EXPORTER is None, reason="redis_exporter missing (apt-get install prometheus-redis-exporter)")


def madd(r, command, key, keys):
    for start in range(0, len(keys), 5000):
        r.execute_command(command, key, *keys[start:start + 5000])


def wait_for(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def bf_totals(r):
    return r.info("bf")


def make_ok_near_over(r):
    """One filter in each state, as test_health.py makes them: a chain with a few keys (ok), a
    NONSCALING filter past 90% of its capacity (near_limit) and a window of time that takes three
    times its capacity in one window (over_limit)."""
    r.execute_command("BF.RESERVE", "ok", 0.01, 1_000)
    madd(r, "BF.MADD", "ok", [f"o{i}" for i in range(100)])
    r.execute_command("BF.RESERVE", "near", 0.01, 10_000, "NONSCALING")
    madd(r, "BF.MADD", "near", [f"n{i}" for i in range(9_500)])
    r.execute_command("BFW.RESERVE", "over", 0.01, 2_000, "WINDOW", "1h")
    madd(r, "BFW.MADD", "over", [f"w{i}" for i in range(6_000)])
    # INFO bf's totals follow within a second or two (the module's timer); the script reads them.
    wait_for(lambda: bf_totals(r)["bf_filters_near_limit"] == 1
             and bf_totals(r)["bf_filters_over_limit"] == 1)


class Exporter:
    """redis_exporter on 127.0.0.1 on a free port, scraping `server` with the script."""

    def __init__(self, server, directory):
        self.port = free_port()
        self.log_path = os.path.join(str(directory), "exporter.log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [EXPORTER, "--redis.addr", f"redis://127.0.0.1:{server.port}",
                 "--web.listen-address", f"127.0.0.1:{self.port}", "--script", SCRIPT],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while True:
            try:
                self.scrape()
                return
            except (urllib.error.URLError, ConnectionError):
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis_exporter did not start:\n{self.log()}")
            time.sleep(0.1)

    def scrape(self):
        """GET /metrics: the text, as Prometheus reads it."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=20) as reply:
            return reply.read().decode("utf-8")

    def script_values(self):
        """redis_script_values{key=...} of one scrape, parsed as Prometheus text, as {key: value}."""
        text = self.scrape()
        values = {}
        for family in text_string_to_metric_families(text):
            if family.name == "redis_script_values":
                for sample in family.samples:
                    values[sample.labels["key"]] = sample.value
        assert values, f"no redis_script_values in the scrape:\n{text[-3000:]}\n{self.log()}"
        return values

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-3000:]

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def exporter(tmp_path):
    started = []

    def start(server):
        e = Exporter(server, tmp_path)
        started.append(e)
        return e

    yield start
    for e in started:
        e.stop()


def promtool_test(tmp_path, values, expected_over):
    """Runs promtool's rule test: the docs' rules on `values` (a scrape's redis_script_values) held
    for 20 minutes, expecting BloomeryRedisFilterOverLimit for the keys of `expected_over` alone.
    Returns promtool's result."""
    series = []
    for key, value in sorted(values.items()):
        labels = f'instance="{INSTANCE}",job="redis",key="{key}"'
        series.append(f"      - series: '{{__name__=\"redis_script_values\",{labels}}}'\n"
                      f"        values: '{value!r}x20'\n")
    alerts = "".join(
        f"          - exp_labels: {{severity: critical, instance: \"{INSTANCE}\", job: redis, "
        f"key: \"bf_over_limit:{key}\", filter: \"{key}\"}}\n"
        f"            exp_annotations:\n"
        f"              summary: \"Redis key {key} on {INSTANCE} is over its limit: FPR "
        f"{values['bf_over_limit:' + key]!r}x planned\"\n" for key in expected_over)
    test = (f"rule_files:\n  - {RULES}\n"
            "evaluation_interval: 1m\n"
            "tests:\n  - interval: 1m\n    input_series:\n" + "".join(series) +
            "    alert_rule_test:\n      - eval_time: 10m\n"
            "        alertname: BloomeryRedisFilterOverLimit\n"
            "        exp_alerts:" + ("\n" + alerts if alerts else " []\n"))
    path = tmp_path / "scraped.test.yml"
    path.write_text(test)
    return subprocess.run([PROMTOOL, "test", "rules", str(path)], capture_output=True, text=True,
                          timeout=60)


@needs_exporter
def test_a_scrape_shows_each_state_and_the_over_rule_fires_for_the_over_key_alone(
        make_server, exporter, tmp_path):
    server = make_server()
    r = server.client()
    make_ok_near_over(r)
    # And a key half-way through BF.LOADCHUNK: no filter yet, BF.INFO answers an error, which
    # must not fail the scrape.
    iterator, data = r.execute_command("BF.SCANDUMP", "ok", 0)
    r.execute_command("BF.LOADCHUNK", "pending", iterator, data)
    assert r.type("pending") == b"bloomeryf"
    values = exporter(server).script_values()

    # The totals of INFO bf, and one series per filter that is not ok, named by its key.
    assert values["bf_filters"] == 3
    assert values["bf_filters_near_limit"] == 1 and values["bf_filters_over_limit"] == 1
    per_key = {key: value for key, value in values.items()
               if key.startswith(("bf_near_limit:", "bf_over_limit:"))}
    assert set(per_key) == {"bf_near_limit:near", "bf_over_limit:over"}, values
    assert values["bf_over_limit:over"] > 1  # FPR over planned
    assert values["bf_over_limit:over"] == pytest.approx(values["bf_worst_fpr_ratio"])
    assert 0 < values["bf_near_limit:near"] <= 1
    assert values["bf_scan_complete"] == 1
    # As BF.INFO / BFW.INFO answer them.
    assert r.execute_command("BF.INFO", "ok", "HEALTH") == [b"ok"]
    assert r.execute_command("BF.INFO", "near", "HEALTH") == [b"near_limit"]

    if PROMTOOL is None:
        pytest.skip("promtool missing (apt-get install prometheus)")
    result = promtool_test(tmp_path, values, expected_over=["over"])
    assert result.returncode == 0, result.stdout + result.stderr
    # And the test can fail: expecting the rule for the near key too is refused.
    result = promtool_test(tmp_path, {**values, "bf_over_limit:near": values["bf_near_limit:near"]},
                           expected_over=["over"])
    assert result.returncode != 0


@needs_exporter
def test_a_full_nonscaling_filter_is_near_not_over(make_server, exporter):
    """NONSCALING filters filled to exactly their capacity (the keys past it refused): their bits
    read the planned FPR give or take a few percent, above it for some, which read over_limit
    (1.0076x, issue #54). Full is near_limit: no key is named over, and no over rule fires."""
    server = make_server()
    r = server.client()
    ratios = []
    for trial in range(6):
        key = f"full{trial}"
        r.execute_command("BF.RESERVE", key, 0.01, 10_000, "NONSCALING")
        madd(r, "BF.MADD", key, [f"{trial}-{i}" for i in range(12_000)])
        assert r.execute_command("BF.CARD", key) <= 10_300
        assert r.execute_command("BF.INFO", key, "HEALTH") == [b"near_limit"]
        ratios.append(float(r.execute_command("BF.INFO", key, "FPRRATIO")[0]))
    assert max(ratios) > 1, ratios  # the case that read over_limit is among them
    wait_for(lambda: bf_totals(r)["bf_filters_near_limit"] == 6)
    values = exporter(server).script_values()
    assert values["bf_filters_over_limit"] == 0
    assert sorted(key for key in values if ":" in key) == [
        f"bf_near_limit:full{trial}" for trial in range(6)]


@needs_exporter
def test_all_ok_costs_info_bf_alone(make_server, exporter):
    """With every filter ok the script reads INFO bf and scans nothing."""
    server = make_server()
    r = server.client()
    r.execute_command("BF.RESERVE", "ok", 0.01, 1_000)
    r.execute_command("BFW.RESERVE", "w", 0.01, 1_000, "WINDOW", "1h")
    r.config_resetstat()
    values = exporter(server).script_values()
    assert values["bf_filters"] == 2 and values["bf_scan_complete"] == 1
    assert not [key for key in values if ":" in key]
    stats = r.info("commandstats")
    assert "cmdstat_scan" not in stats and "cmdstat_bf.info" not in stats, stats


@needs_exporter
def test_the_scan_is_bounded(make_server, exporter):
    """Past 100,000 keys of a type the script stops scanning and says so; the totals stay."""
    server = make_server()
    r = server.client()
    r.execute_command("BFW.RESERVE", "over", 0.01, 200, "WINDOW", "1h")
    madd(r, "BFW.MADD", "over", [f"w{i}" for i in range(1_000)])
    wait_for(lambda: bf_totals(r)["bf_filters_over_limit"] == 1)
    r.execute_command("DEBUG", "POPULATE", 250_000)
    started = time.monotonic()
    values = exporter(server).script_values()
    print(f"a scrape (exporter start included) with 250,001 keys: {time.monotonic() - started:.3f} s")
    assert values["bf_scan_complete"] == 0
    assert values["bf_filters_over_limit"] == 1


def test_operating_md_shows_the_rules_file():
    """docs/OPERATING.md's rules are docs/alerts/bloomery.rules.yml, which the tests evaluate."""
    with open(OPERATING) as f:
        operating = f.read()
    with open(RULES) as f:
        rules = f.read()
    blocks = re.findall(r"```yaml\n(.*?)```", operating, re.S)
    assert rules in blocks, "docs/OPERATING.md's ```yaml block differs from bloomery.rules.yml"


def test_a_user_that_cannot_read_the_filters_fails_the_script(server):
    """Under ACLs, a user without BF.INFO / BFW.INFO gets an error, not a scrape that names no key
    (which would read as none over)."""
    r = server.client()
    r.execute_command("BFW.RESERVE", "over", 0.01, 200, "WINDOW", "1h")
    madd(r, "BFW.MADD", "over", [f"w{i}" for i in range(1_000)])
    wait_for(lambda: bf_totals(r)["bf_filters_over_limit"] == 1)
    with open(SCRIPT) as f:
        script = f.read()
    r.execute_command("ACL", "SETUSER", "exporter", "on", ">pw", "~*", "+eval", "+info", "+scan",
                      "+bf.info", "+bfw.info")
    r.execute_command("ACL", "SETUSER", "blind", "on", ">pw", "~*", "+eval", "+info", "+scan")
    reply = server.client(username="exporter", password="pw").eval(script, 0)
    assert b"bf_over_limit:over" in reply
    with pytest.raises(redis.ResponseError, match="can't run this command"):
        server.client(username="blind", password="pw").eval(script, 0)

# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""`bloomery info --metrics` read by Prometheus's own parsers: the Python client's text parser
(Debian's python3-prometheus-client) and `promtool check metrics` (Debian's prometheus), for files
whose names are not UTF-8 or need every escape. Prometheus drops a whole scrape it cannot parse."""

import os
import shutil
import subprocess

import pytest

CLI = os.environ.get("BLOOMERY_CLI")
pytestmark = pytest.mark.skipif(not CLI, reason="BLOOMERY_CLI (the bloomery tool) is not built")

# Not UTF-8: a lone continuation byte, an FF, a truncated three-byte sequence; then every escape.
NAMES = [b"metrics-\x80-\xff-\xe2\x82-end.bloom", b'metrics "quoted" \\ back\nslash.bloom',
         "metrics-\u00e9-\U0001F338.bloom".encode()]


def exposition(tmp_path):
    """info --metrics over a file of each name: (the bytes printed, the paths as bytes)."""
    keys = tmp_path / "keys.txt"
    keys.write_text("".join(f"key-{i}\n" for i in range(100)))
    paths = [os.fsencode(tmp_path) + b"/" + name for name in NAMES]
    for path in paths:
        subprocess.run([CLI, "build", "--capacity", "1000", "-o", path, str(keys)], check=True,
                       capture_output=True, timeout=60)
    run = subprocess.run([CLI, "info", "--metrics", *paths], capture_output=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout, paths


def test_prometheus_client_parses_metrics_of_names_that_are_not_utf8(tmp_path):
    try:
        from prometheus_client import parser
    except ImportError:
        pytest.fail("prometheus_client is not installed (Debian: apt-get install "
                    "python3-prometheus-client)")
    out, paths = exposition(tmp_path)
    text = out.decode("utf-8", errors="strict")  # the format is UTF-8: no invalid byte at all
    families = {f.name: f for f in parser.text_string_to_metric_families(text)}
    assert "bloomery_filter_health_ratio" in families
    state = families["bloomery_filter_state"]
    assert len(state.samples) == 3 * len(paths)
    # Each name as Python decodes it, every bad byte (a truncated sequence: its bytes) one U+FFFD.
    files = {s.labels["file"] for s in families["bloomery_filter_fill_ratio"].samples}
    assert files == {p.decode("utf-8", errors="replace") for p in paths}


def test_promtool_checks_metrics_of_names_that_are_not_utf8(tmp_path):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is not installed (Debian: apt-get install prometheus)")
    out, _ = exposition(tmp_path)
    run = subprocess.run([promtool, "check", "metrics"], input=out, capture_output=True,
                         timeout=60)
    report = (run.stdout + run.stderr).decode(errors="replace")
    # 0: clean; 3: lint advice only. bloomery_filter_estimated_count keeps its documented name,
    # which the linter would not end in _count; any other finding (1: a parse error) fails.
    assert run.returncode in (0, 3), report
    for line in report.splitlines():
        assert "bloomery_filter_estimated_count" in line and "_count" in line, report

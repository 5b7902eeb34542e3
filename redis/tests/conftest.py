# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Starts and stops redis-server processes with bloomery_redis.so for the tests.

Every server listens on 127.0.0.1 on a free port, keeps its files in its own temporary directory
and is stopped (killed if need be) when its test ends. The module and server paths come from
meson (BLOOMERY_REDIS_MODULE, BLOOMERY_REDIS_SERVER). With BLOOMERY_REDIS_PRELOAD (.ci/redis-asan:
a sanitizer runtime for a sanitized module) the servers run with it in LD_PRELOAD, and a test
whose servers' stderr holds a sanitizer report fails.
"""
import os
import random
import socket
import subprocess
import time

import pytest
import redis

MODULE = os.environ.get("BLOOMERY_REDIS_MODULE", "")
SERVER = os.environ.get("BLOOMERY_REDIS_SERVER", "/usr/bin/redis-server")
PRELOAD = os.environ.get("BLOOMERY_REDIS_PRELOAD", "")
START_TIMEOUT_S = 60 if PRELOAD else 20
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_cluster_port():
    """A free port p whose cluster bus port p + 10000 is free too (so p <= 55535)."""
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(20000, 45000)
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port pair for a cluster node")


class Server:
    """One redis-server with the module loaded."""

    def __init__(self, directory, module_args=(), config=(), port=None, preexec_fn=None):
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.port = port or free_port()
        self.module_args = list(module_args)
        self.config = list(config)
        self.preexec_fn = preexec_fn  # run in the server's process before exec (resource limits)
        self.process = None
        self.start()

    def start(self):
        args = [SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--save", "", "--appendonly", "no", "--daemonize", "no",
                "--logfile", os.path.join(self.dir, "redis.log"),
                "--enable-debug-command", "local",
                "--loadmodule", MODULE, *self.module_args]
        args += self.config
        env = dict(os.environ)
        if PRELOAD:
            env["LD_PRELOAD"] = PRELOAD
        # Appended across restarts: a sanitizer writes its reports here.
        with open(os.path.join(self.dir, "stderr.log"), "ab") as stderr:
            self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr,
                                            preexec_fn=self.preexec_fn, env=env)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if self.client().ping():
                    return
            except (redis.ConnectionError, redis.BusyLoadingError):
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start:\n{self.log()}")
            time.sleep(0.05)

    def client(self, **kwargs):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=60, **kwargs)

    def log(self):
        try:
            with open(os.path.join(self.dir, "redis.log")) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def sanitizer_report(self):
        try:
            with open(os.path.join(self.dir, "stderr.log"), errors="replace") as f:
                text = f.read()
        except OSError:
            return ""
        return text if any(report in text for report in SANITIZER_REPORTS) else ""

    def alive(self):
        return self.process.poll() is None and self.client().ping()

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        try:
            self.client().shutdown(nosave=True)
        except redis.RedisError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def restart(self):
        """Stops (saving nothing more) and starts again on the same port and directory."""
        self.stop()
        self.start()


@pytest.fixture
def make_server(tmp_path):
    servers = []

    def make(name="server", **kwargs):
        server = Server(tmp_path / name, **kwargs)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()
    for server in servers:
        report = server.sanitizer_report()
        assert not report, f"{server.dir}: sanitizer report:\n{report[-8000:]}"


@pytest.fixture
def server(make_server):
    return make_server()


@pytest.fixture
def r(server):
    return server.client()

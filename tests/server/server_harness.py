"""Shared helpers for the dacpp-server end-to-end tests: start the real binary on a free loopback port and talk
to it with grpcio (Debian python3-grpcio) through the messages protoc generated from server/proto/backend.proto.

Environment (set by CTest, server/CMakeLists.txt): DACPP_SERVER_BIN, DACPP_SERVER_PY (folder of backend_pb2.py),
DACPP_FIXTURES_DIR.
"""
import base64
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.environ.get("DACPP_SERVER_PY", ""))
import grpc  # noqa: E402
import backend_pb2 as pb  # noqa: E402

SERVER_BIN = os.environ.get("DACPP_SERVER_BIN", "")
FIXTURES = os.environ.get("DACPP_FIXTURES_DIR", os.path.join(os.path.dirname(__file__), "..", "fixtures"))
TINY_MODEL = os.path.join(FIXTURES, "tiny-da2.gguf")
MONO_MODEL = os.path.join(FIXTURES, "models", "da3mono_tiny")
IMAGE = os.path.join(FIXTURES, "images", "sample_small.png")

# A small processing size keeps each inference of the tiny model in the milliseconds on a busy machine.
FAST_OPTIONS = ("size:70", "threads:2")

RPCS = {
    "Health": (pb.HealthMessage, pb.Reply),
    "Free": (pb.HealthMessage, pb.Result),
    "Predict": (pb.PredictOptions, pb.Reply),
    "LoadModel": (pb.ModelOptions, pb.Result),
    "GenerateImage": (pb.GenerateImageRequest, pb.Result),
    "Status": (pb.HealthMessage, pb.StatusResponse),
    "Depth": (pb.DepthRequest, pb.DepthResponse),
}


def free_ports(n):
    """n distinct loopback ports free now: every socket stays bound until all are picked, so two cannot coincide."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_port():
    return free_ports(1)[0]


def image_b64(path=IMAGE):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


class Server:
    """One dacpp-server process; stderr is collected in self.stderr_lines."""

    def __init__(self, env=None, http=False, args=()):
        if http:
            self.port, self.http_port = free_ports(2)
        else:
            self.port, self.http_port = free_port(), None
        cmd = [SERVER_BIN, "--addr", "127.0.0.1:%d" % self.port]
        if http:
            cmd += ["--http-addr=127.0.0.1:%d" % self.http_port]
        cmd += list(args)
        full_env = dict(os.environ)
        full_env.pop("DACPP_FAULT", None)
        full_env.pop("LOCALAI_GRPC_AUTH_TOKEN", None)
        full_env.update(env or {})
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=full_env, text=True)
        self.stderr_lines = []
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        self.channel = grpc.insecure_channel("127.0.0.1:%d" % self.port, options=[
            ("grpc.max_receive_message_length", 50 * 1000 * 1000),
            ("grpc.max_send_message_length", 50 * 1000 * 1000)])
        self.token = None

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line.rstrip("\n"))

    def call(self, rpc, request=None, timeout=30, metadata=None):
        req_type, resp_type = RPCS[rpc]
        fn = self.channel.unary_unary("/backend.Backend/" + rpc, request_serializer=req_type.SerializeToString,
                                      response_deserializer=resp_type.FromString)
        if metadata is None and self.token:
            metadata = [("authorization", "Bearer " + self.token)]
        return fn(request if request is not None else req_type(), timeout=timeout, metadata=metadata)

    def wait_ready(self, timeout=15):
        deadline = time.time() + timeout
        last = None
        # Poll the port first: a gRPC channel that failed to connect backs off for a second or more.
        while time.time() < deadline and self.proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.02)
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("server exited early (%s): %s" % (self.proc.returncode, self.stderr()))
            try:
                if self.call("Health", timeout=1).message == b"OK":
                    return
            except grpc.RpcError as e:
                last = e
            time.sleep(0.05)
        raise AssertionError("server not ready: %s; stderr: %s" % (last, self.stderr()))

    def load(self, model=TINY_MODEL, options=FAST_OPTIONS, **kw):
        return self.call("LoadModel", pb.ModelOptions(Model=os.path.basename(model), ModelFile=model,
                                                      Options=list(options), **kw))

    def stderr(self):
        return "\n".join(self.stderr_lines[-40:])

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.channel.close()
        self._reader.join(timeout=2)
        bad = [l for l in self.stderr_lines if "Sanitizer" in l or "runtime error:" in l]
        if bad:  # an ASan/UBSan build reports through stderr, of the front or of the worker ("[worker] ")
            raise AssertionError("sanitizer report in server stderr:\n" + "\n".join(self.stderr_lines[-60:]))
        return self.proc.returncode


class ServerTestCase(unittest.TestCase):
    """One dacpp-server (default arguments) shared by the tests of a class: started and ready before the first,
    stopped after the last."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server()
        cls.srv.wait_ready()

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()


def grpc_error(callable_):
    """Runs callable_ and returns the grpc.RpcError it raises (fails if it does not)."""
    try:
        callable_()
    except grpc.RpcError as e:
        return e
    raise AssertionError("expected an RPC error")


def child_pids(pid):
    """Direct children of `pid` (the worker of a dacpp-server): the processes whose parent (field 4 of /proc/P/stat,
    a process id, whichever of its threads forked) is `pid`. (Reading /proc/pid/task/*/children instead lost the
    worker when one of the server's threads exited during the scan: the scan stopped at the first missing task.)"""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone since the listing
        if len(fields) > 1 and int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(name))
    return sorted(out)


def worker_pid(server_pid, seconds=5):
    """The one worker of a dacpp-server, waiting up to `seconds` for exactly one child to show."""
    deadline = time.time() + seconds
    while True:
        children = child_pids(server_pid)
        if len(children) == 1 or time.time() > deadline:
            if len(children) != 1:
                raise AssertionError("dacpp-server %d has children %s, expected one worker" % (server_pid, children))
            return children[0]
        time.sleep(0.05)


def pid_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def http(port, method, path, body=None, headers=None):
    """(status, body bytes) of one HTTP request to 127.0.0.1:port."""
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()

"""REST surface: POST /v1/depth with LocalAI's JSON schema, /healthz, /metrics and the web viewer page."""
import json
import re
import shutil
import struct
import subprocess
import tempfile
import time
import unittest

from server_harness import IMAGE, SERVER_BIN, TINY_MODEL, Server, http, image_b64, pb


class RestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server(http=True)
        cls.srv.wait_ready()
        assert cls.srv.load().success

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def post(self, body):
        data = body if isinstance(body, (str, bytes)) else json.dumps(body)
        status, raw = http(self.srv.http_port, "POST", "/v1/depth", data, {"Content-Type": "application/json"})
        return status, json.loads(raw)

    def test_depth_default_flags(self):
        status, j = self.post({"image": "data:image/png;base64," + image_b64()})
        self.assertEqual(status, 200, j)
        self.assertEqual(len(j["depth"]), j["width"] * j["height"])
        self.assertIs(j["is_metric"], False)
        for absent in ("confidence", "sky", "extrinsics", "points", "point_colors"):
            self.assertNotIn(absent, j)

    def test_depth_numbers_read_back_to_the_grpc_floats(self):
        # REST writes each float32 in its shortest round-trip form: read back as float32, every value equals the
        # one gRPC's Depth returns for the same image (bit for bit).
        status, j = self.post({"image": "data:image/png;base64," + image_b64()})
        self.assertEqual(status, 200, j)
        r = self.srv.call("Depth", pb.DepthRequest(src=IMAGE, include_depth=True))
        self.assertEqual((j["width"], j["height"]), (r.width, r.height))
        as_f32 = lambda xs: struct.pack("<%df" % len(xs), *xs)  # noqa: E731
        self.assertEqual(as_f32(j["depth"]), as_f32(list(r.depth)))

    def test_errors_use_localai_body_and_status(self):
        cases = [
            ({"image": image_b64()}, 400, "E_INVALID_ARGUMENT", "data: URI"),
            ({"image": "https://example.com/x.jpg"}, 400, "E_INVALID_ARGUMENT", "URL"),
            ("{not json", 400, "E_INVALID_ARGUMENT", "not JSON"),
            ({"image": "data:image/png;base64,AAAA"}, 400, "E_INVALID_ARGUMENT", "decode"),
            ({"image": "data:image/png;base64," + image_b64(), "include_sky": True}, 501, "E_UNSUPPORTED", "sky"),
            ({"image": "data:image/png;base64," + image_b64(), "model": "other"}, 404, "E_MODEL_MISMATCH",
             "model identity mismatch"),
            ({"image": "data:image/png;base64," + image_b64(), "include_depth": "yes"}, 400,
             "E_INVALID_ARGUMENT", "boolean"),
        ]
        for body, code, tag, word in cases:
            status, j = self.post(body)
            self.assertEqual(status, code, (body if isinstance(body, str) else list(body), j))
            self.assertEqual(j["error"]["code"], code)
            self.assertTrue(j["error"]["message"].startswith("[dacpp:%s]" % tag), j)
            self.assertIn(word, j["error"]["message"])

    def test_healthz_and_metrics(self):
        status, body = http(self.srv.http_port, "GET", "/healthz")
        self.assertEqual(status, 200)
        self.post({"image": "data:image/png;base64," + image_b64()})
        status, body = http(self.srv.http_port, "GET", "/metrics")
        text = body.decode()
        self.assertEqual(status, 200)
        self.assertRegex(text, r'dacpp_requests_total\{surface="rest",method="Depth"\} [1-9]')
        self.assertRegex(text, r'dacpp_request_duration_seconds_bucket\{method="Depth",le="\+Inf"\} [1-9]')
        self.assertRegex(text, r'dacpp_resident_memory_bytes\{process="worker"\} [1-9]')
        self.assertIn("dacpp_model_loaded 1", text)
        for line in text.splitlines():  # exposition format: comments or "name{labels} value"
            self.assertRegex(line, r'^(# (HELP|TYPE) .+|[a-z_]+(\{[^}]*\})? [0-9.e+-]+)$')

    def test_viewer_page_is_self_contained(self):
        status, body = http(self.srv.http_port, "GET", "/")
        self.assertEqual(status, 200)
        page = body.decode()
        self.assertIn("<canvas", page)
        self.assertIn("/v1/depth", page)
        self.assertIsNone(re.search(r'(src|href)\s*=\s*"https?:', page))
        node = shutil.which("node")
        if node:  # the script at least parses (no browser here to run it)
            script = re.search(r"<script>(.*)</script>", page, re.S).group(1)
            with tempfile.NamedTemporaryFile("w", suffix=".js") as f:
                f.write(script)
                f.flush()
                r = subprocess.run([node, "--check", f.name], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)


class StartupLoadTest(unittest.TestCase):
    """--model with --option KEY:VALUE: the start-up load takes LoadModel's options (how a standalone server picks
    device:cuda), and a bad one fails that load with its cause on stderr while the server keeps answering."""

    def depth_when_loaded(self, srv, seconds=30):
        body = json.dumps({"image": "data:image/png;base64," + image_b64()})
        deadline = time.time() + seconds
        while True:
            status, raw = http(srv.http_port, "POST", "/v1/depth", body, {"Content-Type": "application/json"})
            if status == 200 or time.time() > deadline:
                return status, json.loads(raw)
            time.sleep(0.1)

    def test_options_reach_the_startup_load(self):
        srv = Server(http=True, args=["--model", TINY_MODEL, "--option", "size:70", "--option=threads:1"])
        try:
            srv.wait_ready()
            status, j = self.depth_when_loaded(srv)
            self.assertEqual(status, 200, j)
            self.assertEqual(len(j["depth"]), j["width"] * j["height"])
            self.assertTrue(any("loaded 'tiny-da2'" in l for l in srv.stderr_lines), srv.stderr())
        finally:
            srv.stop()

    def test_a_bad_option_fails_the_startup_load_with_its_cause(self):
        srv = Server(http=True, args=["--model", TINY_MODEL, "--option", "device:nonsense"])
        try:
            srv.wait_ready()
            deadline = time.time() + 30
            while time.time() < deadline and not any("nonsense" in l for l in srv.stderr_lines):
                time.sleep(0.05)
            self.assertTrue(any("[dacpp:E_" in l and "nonsense" in l for l in srv.stderr_lines), srv.stderr())
            status, j = self.depth_when_loaded(srv, seconds=0)
            self.assertNotEqual(status, 200, j)
            self.assertIn("no model", j["error"]["message"])
        finally:
            srv.stop()

    def test_an_option_without_a_model_is_a_usage_error(self):
        proc = subprocess.run([SERVER_BIN, "--addr", "127.0.0.1:1", "--option", "device:cpu"], capture_output=True,
                              text=True, timeout=30)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--option applies to the start-up load", proc.stderr)


if __name__ == "__main__":
    unittest.main()

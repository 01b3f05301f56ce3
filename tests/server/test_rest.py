"""REST surface: POST /v1/depth with LocalAI's JSON schema, /healthz, /metrics and the web viewer page."""
import json
import re
import shutil
import subprocess
import tempfile
import unittest

from server_harness import Server, http, image_b64


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


if __name__ == "__main__":
    unittest.main()

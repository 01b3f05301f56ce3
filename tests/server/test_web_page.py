"""The web viewer at `/`, driven in headless Chromium: choose a photo, wait for its depth (turbo colour map) and its
point cloud to be drawn, fail on any browser console error, and save a screenshot as a test artefact.

Talks to chromedriver's W3C WebDriver HTTP API with urllib (no PyPI). Needs Debian's `chromium` and
`chromium-driver` (scripts/install-deps.sh); the test FAILS, not skips, when they are missing. The screenshot goes to
<build>/test-artifacts/web_page.png (the build folder above server/dacpp-server), or to $DACPP_TEST_ARTIFACTS/.
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import time
import unittest
import urllib.error
import urllib.request

from server_harness import IMAGE, SERVER_BIN, Server, free_port

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"  # W3C web element reference key

# Records page errors that a console log might miss (uncaught exceptions in promises, console.error).
ERROR_HOOK = """
window.__dacppErrors = [];
window.addEventListener('error', e => window.__dacppErrors.push('error: ' + (e.message || e.type)));
window.addEventListener('unhandledrejection', e => window.__dacppErrors.push('unhandled rejection: ' + e.reason));
const origError = console.error;
console.error = (...a) => { window.__dacppErrors.push('console.error: ' + a.join(' ')); origError(...a); };
"""

# What the page has drawn: the photo's natural size, the status line, and per canvas its size, the count of painted
# pixels (alpha > 0), of distinct colours among them, and the size it is shown at (CSS pixels).
PROBE = """
function stats(id) {
  const c = document.getElementById(id);
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let painted = 0; const colours = new Set();
  for (let i = 0; i < d.length; i += 4) {
    if (d[i + 3] === 0) continue;
    painted++;
    if (colours.size < 1000) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  }
  const r = c.getBoundingClientRect();
  return {w: c.width, h: c.height, painted, colours: colours.size, shown_w: r.width, shown_h: r.height};
}
const s = document.getElementById('status'), p = document.getElementById('photo'), r = p.getBoundingClientRect();
return {photo: {w: p.naturalWidth, h: p.naturalHeight, shown_w: r.width, shown_h: r.height},
        status: s.textContent, error: s.className === 'err', depth: stats('depth'), cloud: stats('cloud'),
        errors: window.__dacppErrors || []};
"""


def find_browser():
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def artefact_dir():
    d = os.environ.get("DACPP_TEST_ARTIFACTS") or os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(SERVER_BIN))), "test-artifacts")
    os.makedirs(d, exist_ok=True)
    return d


class WebDriver:
    """One chromedriver process and one headless Chromium session."""

    def __init__(self, browser, driver):
        self.port = free_port()
        self.proc = subprocess.Popen([driver, "--port=%d" % self.port], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = "http://127.0.0.1:%d" % self.port
        self.session = None
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                if self.request("GET", "/status")["ready"]:
                    break
            except (OSError, KeyError):
                pass
            if time.time() > deadline or self.proc.poll() is not None:
                raise AssertionError("chromedriver did not start on port %d" % self.port)
            time.sleep(0.05)
        caps = {"browserName": "chrome", "goog:loggingPrefs": {"browser": "ALL"},
                "goog:chromeOptions": {"binary": browser, "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1400,900", "--hide-scrollbars"]}}
        value = self.request("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
        self.session = value["sessionId"]

    def request(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read())["value"]
        except urllib.error.HTTPError as e:
            raise AssertionError("WebDriver %s %s: HTTP %d %s" % (method, path, e.code, e.read()[:2000])) from None

    def cmd(self, method, path, body=None):
        return self.request(method, "/session/%s%s" % (self.session, path), body)

    def script(self, source, *args):
        return self.cmd("POST", "/execute/sync", {"script": source, "args": list(args)})

    def console(self):
        """Browser log entries since the last call (chromedriver's logging extension)."""
        return self.cmd("POST", "/se/log", {"type": "browser"})

    def quit(self):
        try:
            if self.session:
                self.request("DELETE", "/session/%s" % self.session, timeout=10)
        except (AssertionError, OSError):
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class WebPageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        browser, driver = find_browser(), shutil.which("chromedriver")
        if not browser or not driver:  # a failure, not a skip: install-deps.sh installs both
            raise AssertionError("headless browser test needs chromium and chromedriver on PATH (found %s, %s); "
                                 "run scripts/install-deps.sh (Debian packages chromium chromium-driver)"
                                 % (browser, driver))
        cls.srv = Server(http=True)
        try:
            cls.srv.wait_ready()
            assert cls.srv.load().success
            cls.wd = WebDriver(browser, driver)
        except BaseException:
            cls.srv.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.wd.quit()
        cls.srv.stop()

    def wait_drawn(self, timeout=20):
        deadline = time.time() + timeout
        while True:
            s = self.wd.script(PROBE)
            done = s["depth"]["w"] > 1 and s["depth"]["painted"] > 0 and s["cloud"]["painted"] > 0
            if done or s["error"] or s["errors"] or time.time() > deadline:
                return s
            time.sleep(0.1)

    def test_photo_gives_depth_map_and_point_cloud(self):
        wd = self.wd
        wd.cmd("POST", "/goog/cdp/execute", {"cmd": "Page.addScriptToEvaluateOnNewDocument",
                                             "params": {"source": ERROR_HOOK}})
        wd.cmd("POST", "/url", {"url": "http://127.0.0.1:%d/" % self.srv.http_port})
        self.assertEqual(wd.cmd("GET", "/title"), "dacpp depth viewer")
        file_input = wd.cmd("POST", "/element", {"using": "css selector", "value": "#file"})[ELEMENT_KEY]
        wd.cmd("POST", "/element/%s/value" % file_input, {"text": os.path.abspath(IMAGE)})
        s = self.wait_drawn()
        shot = os.path.join(artefact_dir(), "web_page.png")
        with open(shot, "wb") as f:
            f.write(base64.b64decode(wd.cmd("GET", "/screenshot")))
        print("web page screenshot: %s" % shot)
        console = [e for e in wd.console() if e.get("level") in ("SEVERE", "ERROR")]

        self.assertFalse(s["error"], "page reported an error: %s" % s["status"])
        self.assertEqual(s["errors"], [], "page errors")
        self.assertEqual(console, [], "browser console errors")
        self.assertEqual((s["photo"]["w"], s["photo"]["h"]), (83, 61), s)  # sample_small.png
        # Photo and depth map are shown undistorted, side by side at one readable size (not 83 px thumbnails).
        for shown in (s["photo"], s["depth"]):
            self.assertGreaterEqual(shown["shown_w"], 200, s)
            self.assertAlmostEqual(shown["shown_w"] / shown["shown_h"], shown["w"] / shown["h"], delta=0.05, msg=s)
        self.assertAlmostEqual(s["photo"]["shown_w"], s["depth"]["shown_w"], delta=1, msg=s)
        # The depth canvas matches the size in the status line and is fully painted in many turbo colours.
        d = s["depth"]
        self.assertRegex(s["status"], r"^%dx%d depth in \d+ ms" % (d["w"], d["h"]))
        self.assertEqual(d["painted"], d["w"] * d["h"], s)
        self.assertGreater(d["colours"], 20, s)
        # The cloud: one point per pixel at this size, projected into the 640x480 canvas with the photo's colours.
        c = s["cloud"]
        self.assertGreater(c["painted"], 0.3 * d["w"] * d["h"], s)
        self.assertLess(c["painted"], c["w"] * c["h"] // 2, s)
        self.assertGreater(c["colours"], 20, s)
        self.assertEqual(self.srv.proc.poll(), None, self.srv.stderr())


if __name__ == "__main__":
    unittest.main()

"""Process lifecycle: --addr=HOST:PORT, unknown arguments ignored, SIGTERM stops the server (and its worker)
within 15 s even during a request, and the server exits when its parent process dies."""
import os
import signal
import socket
import subprocess
import threading
import time
import unittest

from server_harness import IMAGE, SERVER_BIN, Server, free_port, pb, pid_alive, worker_pid


def wait_gone(pid, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


class LifecycleTest(unittest.TestCase):
    def test_sigterm_during_request_stops_cleanly(self):
        srv = Server(args=["--some-future-flag"])
        srv.wait_ready()
        self.assertTrue(srv.load(options=["size:280", "threads:1"]).success)
        worker = worker_pid(srv.proc.pid)
        t = threading.Thread(target=lambda: self._swallow(srv))
        t.start()
        time.sleep(0.2)
        t0 = time.time()
        self.assertEqual(srv.stop(signal.SIGTERM, timeout=15), 0)
        self.assertLess(time.time() - t0, 15)
        t.join()
        self.assertTrue(wait_gone(worker, 5))
        self.assertTrue(any("ignoring unknown argument '--some-future-flag'" in l for l in srv.stderr_lines))

    @staticmethod
    def _swallow(srv):
        try:
            srv.call("Depth", pb.DepthRequest(src=IMAGE, include_depth=True), timeout=20)
        except Exception:  # noqa: BLE001 - the server may stop before answering
            pass

    def test_exits_when_parent_dies(self):
        port = free_port()
        # A shell parent that starts the server in the background and then waits; killing it orphans the server.
        parent = subprocess.Popen(["bash", "-c", '"$0" --addr=127.0.0.1:%d 2>/dev/null & echo $!; wait' % port,
                                   SERVER_BIN], stdout=subprocess.PIPE, text=True)
        server_pid = int(parent.stdout.readline())
        time.sleep(0.5)
        self.assertTrue(pid_alive(server_pid))
        parent.kill()
        parent.wait()
        self.assertTrue(wait_gone(server_pid, 10), "server %d outlived its parent" % server_pid)


class PortTakenTest(unittest.TestCase):
    """A port already in use fails the start with the cause, never a silent share of the port (SO_REUSEPORT)."""

    def _start_fails(self, args, holder=None):
        proc = subprocess.run([SERVER_BIN] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=30)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        return proc.stderr

    def test_same_port_for_grpc_and_http(self):
        port = free_port()
        err = self._start_fails(["--addr=127.0.0.1:%d" % port, "--http-addr=127.0.0.1:%d" % port])
        self.assertIn("[dacpp:E_IO] REST: cannot bind 127.0.0.1:%d" % port, err)

    def test_port_held_by_a_reuseport_listener(self):
        for flag in (["--addr"], ["--addr=127.0.0.1:0", "--http-addr"]):
            with self.subTest(flag=flag[-1]):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
                    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # as gRPC and httplib set it
                    held.bind(("127.0.0.1", 0))
                    held.listen()
                    port = held.getsockname()[1]
                    err = self._start_fails(flag[:-1] + ["%s=127.0.0.1:%d" % (flag[-1], port)])
                self.assertIn("[dacpp:E_IO]", err)
                self.assertIn(str(port), err)


class RunScriptTest(unittest.TestCase):
    def test_run_sh_execs_the_server(self):
        run_sh = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "server", "run.sh")
        port = free_port()
        env = dict(os.environ, DACPP_SERVER_BIN=SERVER_BIN)
        proc = subprocess.Popen([run_sh, "--addr", "127.0.0.1:%d" % port], env=env, stderr=subprocess.PIPE,
                                text=True)
        try:
            line = proc.stderr.readline()
            self.assertIn("gRPC listening on 127.0.0.1:%d" % port, line)
            with open("/proc/%d/cmdline" % proc.pid) as f:  # exec'd: the launcher's pid is the server
                self.assertIn("dacpp-server", f.read())
        finally:
            proc.send_signal(signal.SIGTERM)
            self.assertEqual(proc.wait(timeout=15), 0)
            proc.stderr.close()


if __name__ == "__main__":
    unittest.main()

"""Crash isolation: a worker that dies mid-request (DACPP_FAULT=worker.crash raises SIGSEGV in the forward pass)
costs that request an UNAVAILABLE carrying the signal, the stage and the worker's stderr; the worker is restarted
with the model reloaded and the next request succeeds."""
import os
import signal
import time
import unittest

import grpc

from server_harness import IMAGE, Server, child_pids, grpc_error, http, pb, pid_alive, worker_pid


class CrashTest(unittest.TestCase):
    def test_worker_crash_is_reported_and_recovered(self):
        srv = Server(env={"DACPP_FAULT": "worker.crash"}, http=True)
        try:
            srv.wait_ready()
            self.assertTrue(srv.load().success)
            first_worker = child_pids(srv.proc.pid)
            e = grpc_error(lambda: srv.call("Depth", pb.DepthRequest(src=IMAGE, include_depth=True)))
            self.assertEqual(e.code(), grpc.StatusCode.UNAVAILABLE)
            msg = e.details()
            self.assertTrue(msg.startswith("[dacpp:E_WORKER_CRASHED] "), msg)
            for word in ("during Depth", "SIGSEGV", "stage=backbone", "model=", "input=", "last worker stderr"):
                self.assertIn(word, msg)
            self.assertEqual(srv.call("Health").message, b"OK")
            r = srv.call("Depth", pb.DepthRequest(src=IMAGE, include_depth=True))
            self.assertEqual(len(r.depth), r.width * r.height)
            self.assertNotEqual(child_pids(srv.proc.pid), first_worker)
            self.assertTrue(any(l.startswith("[worker] dacpp: fatal: signal=SIGSEGV") for l in srv.stderr_lines),
                            srv.stderr())
            status, body = http(srv.http_port, "GET", "/metrics")
            self.assertEqual(status, 200)
            self.assertIn(b"dacpp_worker_restarts_total 1", body)
            self.assertIn(b'dacpp_errors_total{method="Depth",code="UNAVAILABLE"} 1', body)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_worker_killed_while_idle_is_restarted(self):
        srv = Server()
        try:
            srv.wait_ready()
            self.assertTrue(srv.load().success)
            self.assertGreater(len(srv.call("Depth", pb.DepthRequest(src=IMAGE, include_depth=True)).depth), 0)
            worker = worker_pid(srv.proc.pid)
            os.kill(worker, signal.SIGKILL)
            deadline = time.time() + 5
            while pid_alive(worker) and time.time() < deadline:
                time.sleep(0.05)
            r = srv.call("Depth", pb.DepthRequest(src=IMAGE, include_depth=True))
            self.assertGreater(len(r.depth), 0)
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()

"""Parallel requests: Depth calls from many client threads all succeed (the worker runs them in turn) while
Health and Status keep answering fast, never waiting on inference."""
import threading
import time
import unittest

from server_harness import IMAGE, Server, pb


class ConcurrencyTest(unittest.TestCase):
    def test_parallel_depth_with_fast_health(self):
        srv = Server()
        try:
            srv.wait_ready()
            self.assertTrue(srv.load(options=["size:140", "threads:1"]).success)
            results, errors = [], []

            def work():
                try:
                    for _ in range(2):
                        r = srv.call("Depth", pb.DepthRequest(src=IMAGE, include_depth=True), timeout=60)
                        results.append(len(r.depth))
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(e)

            threads = [threading.Thread(target=work) for _ in range(6)]
            for t in threads:
                t.start()
            health_ms, busy_seen = [], False
            while any(t.is_alive() for t in threads):
                t0 = time.time()
                self.assertEqual(srv.call("Health", timeout=5).message, b"OK")
                health_ms.append(1000 * (time.time() - t0))
                busy_seen |= srv.call("Status", timeout=5).state == pb.StatusResponse.BUSY
                time.sleep(0.02)
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            self.assertEqual(len(results), 12)
            self.assertEqual(len(set(results)), 1)
            self.assertTrue(busy_seen)
            health_ms.sort()
            self.assertLess(health_ms[len(health_ms) // 2], 250, health_ms)
        finally:
            srv.stop()


if __name__ == "__main__":
    unittest.main()

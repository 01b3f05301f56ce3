"""dacpp-server limits and states outside the normal flow: the response-size cap, requests before LoadModel."""
import unittest

import grpc

from server_harness import IMAGE, Server, grpc_error, pb


class ResponseLimitTest(unittest.TestCase):
    def test_oversized_response_is_resource_exhausted(self):
        srv = Server(args=["--max-response-bytes", "1000"])
        try:
            srv.wait_ready()
            self.assertTrue(srv.load().success)
            e = grpc_error(lambda: srv.call("Depth", pb.DepthRequest(src=IMAGE, include_depth=True)))
            self.assertEqual(e.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertTrue(e.details().startswith("[dacpp:E_RESPONSE_TOO_LARGE]"), e.details())
            self.assertIn("1000-byte limit", e.details())
        finally:
            srv.stop()


class BeforeLoadTest(unittest.TestCase):
    def test_health_before_load_and_no_model(self):
        srv = Server()
        try:
            srv.wait_ready()
            self.assertEqual(srv.call("Status").state, pb.StatusResponse.UNINITIALIZED)
            e = grpc_error(lambda: srv.call("Depth", pb.DepthRequest(src=IMAGE, include_depth=True)))
            self.assertEqual(e.code(), grpc.StatusCode.FAILED_PRECONDITION)
            self.assertTrue(e.details().startswith("[dacpp:E_NO_MODEL]"), e.details())
        finally:
            srv.stop()


if __name__ == "__main__":
    unittest.main()

"""LOCALAI_GRPC_AUTH_TOKEN: every RPC needs metadata "authorization: Bearer <token>" (UNAUTHENTICATED otherwise),
and REST POST /v1/depth needs the same Authorization header."""
import json
import unittest

import grpc

from server_harness import Server, grpc_error, http, image_b64


class AuthTest(unittest.TestCase):
    def test_token_is_enforced(self):
        srv = Server(env={"LOCALAI_GRPC_AUTH_TOKEN": "s3cret"}, http=True)
        try:
            srv.token = "s3cret"
            srv.wait_ready()
            self.assertTrue(srv.load().success)
            for md in ([], [("authorization", "Bearer wrong")], [("authorization", "s3cret")]):
                for rpc in ("Health", "Status", "Depth", "LoadModel"):
                    e = grpc_error(lambda: srv.call(rpc, metadata=md))
                    self.assertEqual(e.code(), grpc.StatusCode.UNAUTHENTICATED, (rpc, md))
                    self.assertTrue(e.details().startswith("[dacpp:E_UNAUTHENTICATED]"), e.details())
            self.assertEqual(srv.call("Health").message, b"OK")
            body = json.dumps({"image": "data:image/png;base64," + image_b64(), "include_depth": True})
            status, _ = http(srv.http_port, "POST", "/v1/depth", body, {"Content-Type": "application/json"})
            self.assertEqual(status, 401)
            status, _ = http(srv.http_port, "POST", "/v1/depth", body,
                             {"Content-Type": "application/json", "Authorization": "Bearer s3cret"})
            self.assertEqual(status, 200)
        finally:
            srv.stop()


if __name__ == "__main__":
    unittest.main()

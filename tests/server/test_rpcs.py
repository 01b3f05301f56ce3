"""Every RPC of dacpp-server's LocalAI backend on the tiny DA2 model, good and bad inputs (docs/SERVER.md)."""
import json
import os
import struct
import tempfile
import unittest

import grpc

from server_harness import FAST_OPTIONS, grpc_error, IMAGE, image_b64, pb, ServerTestCase, TINY_MODEL


class RpcTest(ServerTestCase):
    def setUp(self):
        r = self.srv.load()
        self.assertTrue(r.success, r.message)

    def depth(self, **kw):
        kw.setdefault("src", IMAGE)
        return self.srv.call("Depth", pb.DepthRequest(**kw))

    def assert_error(self, fn, code, tag, *words):
        e = grpc_error(fn)
        self.assertEqual(e.code(), code, e.details())
        self.assertTrue(e.details().startswith("[dacpp:%s] " % tag), e.details())
        for w in words:
            self.assertIn(w, e.details())
        return e

    def test_health_and_status(self):
        self.assertEqual(self.srv.call("Health").message, b"OK")
        st = self.srv.call("Status")
        self.assertEqual(st.state, pb.StatusResponse.READY)
        self.assertGreater(st.memory.total, 0)
        self.assertGreater(st.memory.breakdown["worker"], 0)

    def test_depth_from_path_and_base64(self):
        a = self.depth(include_depth=True)
        self.assertGreater(a.width, 0)
        self.assertEqual(len(a.depth), a.width * a.height)
        self.assertFalse(a.is_metric)
        self.assertEqual(len(a.confidence), 0)
        b = self.depth(src=image_b64(), include_depth=True)
        c = self.depth(src="data:image/png;base64," + image_b64(), include_depth=True)
        self.assertEqual(list(a.depth), list(b.depth))
        self.assertEqual(list(a.depth), list(c.depth))
        self.assertGreater(max(a.depth) - min(a.depth), 0)

    def test_localai_default_flags_skip_missing_outputs(self):
        r = self.depth(include_depth=True, include_confidence=True, include_pose=True, include_sky=True)
        self.assertEqual(len(r.depth), r.width * r.height)
        self.assertEqual(len(r.confidence) + len(r.sky) + len(r.extrinsics), 0)

    def test_outputs_the_model_lacks_are_unimplemented(self):
        self.assert_error(lambda: self.depth(include_depth=True, include_confidence=True),
                          grpc.StatusCode.UNIMPLEMENTED, "E_UNSUPPORTED", "include_confidence")
        self.assert_error(lambda: self.depth(include_sky=True), grpc.StatusCode.UNIMPLEMENTED, "E_UNSUPPORTED",
                          "sky")
        self.assert_error(lambda: self.depth(include_points=True), grpc.StatusCode.UNIMPLEMENTED,
                          "E_UNSUPPORTED", "include_points")
        self.assert_error(lambda: self.depth(include_depth=True, exports=["glb"]), grpc.StatusCode.UNIMPLEMENTED,
                          "E_UNSUPPORTED", "exports")

    def test_bad_inputs_are_invalid_argument(self):
        self.assert_error(lambda: self.depth(src=""), grpc.StatusCode.INVALID_ARGUMENT, "E_INVALID_ARGUMENT",
                          "empty")
        self.assert_error(lambda: self.depth(src="bm90IGFuIGltYWdl"), grpc.StatusCode.INVALID_ARGUMENT,
                          "E_INVALID_ARGUMENT", "decode")
        self.assert_error(lambda: self.depth(src="%%%not base64%%%"), grpc.StatusCode.INVALID_ARGUMENT,
                          "E_INVALID_ARGUMENT", "base64")
        self.assert_error(lambda: self.depth(src=image_b64()[:200]), grpc.StatusCode.INVALID_ARGUMENT,
                          "E_INVALID_ARGUMENT")
        self.assert_error(lambda: self.depth(include_depth=True, exports=["obj"]),
                          grpc.StatusCode.INVALID_ARGUMENT, "E_INVALID_ARGUMENT", "obj")
        self.assert_error(lambda: self.depth(src="/no/such/dir/x.png"), grpc.StatusCode.NOT_FOUND,
                          "E_NOT_FOUND")
        # The worker survives all of it.
        self.assertEqual(len(self.depth(include_depth=True).depth) > 0, True)

    def test_model_identity(self):
        name = os.path.basename(TINY_MODEL)
        self.assertGreater(len(self.depth(include_depth=True, ModelIdentity=name).depth), 0)
        self.assert_error(lambda: self.depth(include_depth=True, ModelIdentity="other.gguf"),
                          grpc.StatusCode.NOT_FOUND, "E_MODEL_MISMATCH", "model identity mismatch")

    def test_generate_image_writes_png(self):
        with tempfile.TemporaryDirectory() as d:
            dst = os.path.join(d, "depth.png")
            r = self.srv.call("GenerateImage", pb.GenerateImageRequest(src=IMAGE, dst=dst))
            self.assertTrue(r.success, r.message)
            with open(dst, "rb") as f:
                head = f.read(24)
            self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
            w, h = struct.unpack(">II", head[16:24])
            self.assertGreater(w * h, 0)
        self.assert_error(lambda: self.srv.call("GenerateImage", pb.GenerateImageRequest(src=IMAGE)),
                          grpc.StatusCode.INVALID_ARGUMENT, "E_INVALID_ARGUMENT", "dst")

    def test_predict_returns_json_stats(self):
        r = self.srv.call("Predict", pb.PredictOptions(Images=[image_b64()]))
        j = json.loads(r.message)
        self.assertGreater(j["depth_w"], 0)
        self.assertLess(j["depth_min"], j["depth_max"])
        self.assertEqual(len(j["extrinsics"]), 12)
        self.assert_error(lambda: self.srv.call("Predict", pb.PredictOptions()), grpc.StatusCode.INVALID_ARGUMENT,
                          "E_INVALID_ARGUMENT", "Images")

    def test_load_failures_are_reported_in_result(self):
        r = self.srv.call("LoadModel", pb.ModelOptions(Model="missing.gguf", ModelFile="/no/such/missing.gguf"))
        self.assertFalse(r.success)
        self.assertIn("[dacpp:E_NOT_FOUND]", r.message)
        self.assertIn("missing.gguf", r.message)
        with tempfile.NamedTemporaryFile(suffix=".gguf") as f:
            f.write(b"GGUF" + b"\0" * 60)
            f.flush()
            r = self.srv.call("LoadModel", pb.ModelOptions(Model="bad.gguf", ModelFile=f.name))
        self.assertFalse(r.success)
        self.assertIn("[dacpp:E_INVALID_MODEL]", r.message)
        r = self.srv.load(options=["size:zero"])
        self.assertFalse(r.success)
        self.assertIn("size:zero", r.message)
        self.assert_error(lambda: self.depth(include_depth=True), grpc.StatusCode.FAILED_PRECONDITION,
                          "E_NO_MODEL", "LoadModel")

    def test_load_options_size(self):
        r = self.srv.load(options=["size:42"])
        self.assertTrue(r.success, r.message)
        small = self.depth(include_depth=True)
        self.assertTrue(self.srv.load(options=["size:84"]).success)
        large = self.depth(include_depth=True)
        self.assertTrue(self.srv.load().success)
        # DA2 resizes its output back to the image, so the processing size shows in the values, not the shape.
        self.assertEqual(len(small.depth), len(large.depth))
        self.assertNotEqual(list(small.depth), list(large.depth))

    def test_load_options_precision_on_the_cpu(self):
        # f32 by default; bf16 opt-in (where oneDNN has bf16 kernels for this CPU: else a clear E_UNSUPPORTED);
        # f16 is a GPU precision.
        f32 = self.depth(include_depth=True)
        r = self.srv.load(options=list(FAST_OPTIONS) + ["precision:bf16"])
        if r.success:
            bf16 = self.depth(include_depth=True)
            self.assertEqual(len(bf16.depth), len(f32.depth))
            self.assertNotEqual(list(bf16.depth), list(f32.depth))
        else:
            self.assertIn("[dacpp:E_UNSUPPORTED]", r.message)
            self.assertIn("precision bf16 on the CPU", r.message)
        r = self.srv.load(options=list(FAST_OPTIONS) + ["precision:f16"])
        self.assertFalse(r.success)
        self.assertIn("[dacpp:E_UNSUPPORTED]", r.message)
        self.assertIn("precision f16 on the CPU", r.message)

    def test_localai_cuda_and_f16_flags(self):
        # F16Memory (YAML `f16: true`) is a GPU precision: on the CPU it is ignored with a warning, same depth.
        f32 = self.depth(include_depth=True)
        self.assertTrue(self.srv.load(F16Memory=True).success)
        self.assertEqual(list(self.depth(include_depth=True).depth), list(f32.depth))
        # CUDA (YAML `cuda: true`) asks for the GPU: here a clear error (no CUDA in this build, or no GPU answers),
        # on a GPU machine a load.
        r = self.srv.load(CUDA=True)
        if not r.success:
            self.assertTrue("[dacpp:E_UNSUPPORTED]" in r.message or "[dacpp:E_BACKEND]" in r.message, r.message)
            self.assertIn("cuda", r.message)
        r = self.srv.load(CUDA=True, MainGPU="x")
        self.assertFalse(r.success)
        self.assertIn("[dacpp:E_INVALID_ARGUMENT]", r.message)
        self.assertIn("device 'cuda:x'", r.message)
        # An explicit device option wins over the flag.
        self.assertTrue(self.srv.load(options=list(FAST_OPTIONS) + ["device:cpu"], CUDA=True).success)

    def test_free_then_depth_needs_a_model(self):
        r = self.srv.call("Free")
        self.assertTrue(r.success, r.message)
        self.assertEqual(self.srv.call("Status").state, pb.StatusResponse.UNINITIALIZED)
        self.assert_error(lambda: self.depth(include_depth=True), grpc.StatusCode.FAILED_PRECONDITION,
                          "E_NO_MODEL")

    def test_unknown_rpc_is_unimplemented(self):
        fn = self.srv.channel.unary_unary("/backend.Backend/Embedding", request_serializer=lambda m: b"",
                                          response_deserializer=lambda b: b)
        e = grpc_error(lambda: fn(None, timeout=5))
        self.assertEqual(e.code(), grpc.StatusCode.UNIMPLEMENTED)


if __name__ == "__main__":
    unittest.main()

"""Optional outputs by model family: DA3 mono gives sky, DA3 any-view gives confidence, pose and a point cloud
(checked by re-projecting the points with the returned camera); what a model lacks is UNIMPLEMENTED."""
import os
import tempfile
import unittest

import grpc
import numpy as np

from server_harness import FIXTURES, grpc_error, IMAGE, MONO_MODEL, pb, ServerTestCase

ANYVIEW_MODEL = os.path.join(FIXTURES, "models", "da3small_tiny")


class OutputsTest(ServerTestCase):
    def depth(self, **kw):
        return self.srv.call("Depth", pb.DepthRequest(src=IMAGE, **kw))

    def test_mono_sky(self):
        self.assertTrue(self.srv.load(model=MONO_MODEL).success)
        r = self.depth(include_depth=True, include_sky=True)
        self.assertEqual(len(r.sky), r.width * r.height)
        self.assertGreaterEqual(min(r.sky), 0.0)
        for flag in ("include_pose", "include_confidence", "include_points"):
            e = grpc_error(lambda: self.depth(**{flag: True}))
            self.assertEqual(e.code(), grpc.StatusCode.UNIMPLEMENTED, flag)
            self.assertIn(flag, e.details())

    def test_anyview_confidence_pose_points(self):
        self.assertTrue(self.srv.load(model=ANYVIEW_MODEL).success)
        r = self.depth(include_depth=True, include_confidence=True, include_pose=True)
        n = r.width * r.height
        self.assertEqual((len(r.depth), len(r.confidence)), (n, n))
        self.assertEqual((len(r.extrinsics), len(r.intrinsics)), (12, 9))
        self.assertGreater(min(r.confidence), 1.0)  # exp(x) + 1
        e = grpc_error(lambda: self.depth(include_sky=True))
        self.assertEqual(e.code(), grpc.StatusCode.UNIMPLEMENTED)

        conf = np.array(r.confidence, np.float32)
        thresh = float(np.median(conf))
        p = self.depth(include_points=True, points_conf_thresh=thresh)
        keep = (conf >= thresh) & (np.array(r.depth) > 0)
        self.assertEqual(p.num_points, int(keep.sum()))
        self.assertEqual((len(p.points), len(p.point_colors)), (3 * p.num_points, 3 * p.num_points))
        # Re-project: K (R X + t) must land on the pixels the points came from (the official convention: pixel
        # (u, v) at integer coordinates), at their depth.
        E = np.array(r.extrinsics, np.float64).reshape(3, 4)
        K = np.array(r.intrinsics, np.float64).reshape(3, 3)
        xyz = np.array(p.points, np.float64).reshape(-1, 3)
        cam = xyz @ E[:, :3].T + E[:, 3]
        uvw = cam @ K.T
        v, u = np.nonzero(keep.reshape(r.height, r.width))
        np.testing.assert_allclose(cam[:, 2], np.array(r.depth)[keep], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(uvw[:, 0] / uvw[:, 2], u, atol=1e-2)
        np.testing.assert_allclose(uvw[:, 1] / uvw[:, 2], v, atol=1e-2)

        colours = np.frombuffer(p.point_colors, np.uint8)
        self.assertGreater(colours.std(), 0)

    def test_anyview_exports(self):
        self.assertTrue(self.srv.load(model=ANYVIEW_MODEL).success)
        with tempfile.TemporaryDirectory() as d:
            r = self.depth(include_depth=True, exports=["glb", "colmap"], dst=os.path.join(d, "out"))
            self.assertEqual(list(r.export_paths), [os.path.join(d, "out", "pointcloud.glb"),
                                                    os.path.join(d, "out", "colmap")])
            with open(r.export_paths[0], "rb") as f:
                self.assertEqual(f.read(4), b"glTF")
            for name in ("cameras.bin", "images.bin", "points3D.bin"):
                self.assertGreater(os.path.getsize(os.path.join(r.export_paths[1], name)), 0)


if __name__ == "__main__":
    unittest.main()

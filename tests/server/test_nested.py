"""LoadModel options for DA3 nested and ray pose (docs/SERVER.md): `metric_model:` (depth-anything.cpp's two-file
nested layout; here both "files" are the official nested checkpoint folder, whose branches the importer picks) gives
depth in metres; `ray_pose:` is refused for a model without a ray head."""
import os
import unittest

import numpy as np

from server_harness import FIXTURES, pb, ServerTestCase, TINY_MODEL

NESTED = os.path.join(FIXTURES, "models", "da3nested_tiny")
VIEW = os.path.join(FIXTURES, "models", "da3small_tiny", "view3", "view0.png")
OPTIONS = ["size:210", "threads:2"]


class NestedTest(ServerTestCase):
    def depth(self):
        return self.srv.call("Depth", pb.DepthRequest(src=VIEW, include_depth=True, include_pose=True))

    def test_metric_model_option_gives_metres(self):
        r = self.srv.load(model=NESTED, options=OPTIONS + ["metric_model:" + NESTED])
        self.assertTrue(r.success, r.message)
        two = self.depth()
        self.assertTrue(two.is_metric)
        self.assertEqual((two.width, two.height), (210, 154))
        self.assertEqual(len(two.extrinsics), 12)
        self.assertTrue(self.srv.load(model=NESTED, options=OPTIONS).success)  # the folder alone: both branches
        one = self.depth()
        self.assertTrue(one.is_metric)
        np.testing.assert_allclose(np.array(two.depth), np.array(one.depth), rtol=1e-6)

    def test_bad_metric_model_and_ray_pose_are_refused(self):
        r = self.srv.load(model=NESTED, options=OPTIONS + ["metric_model:" + TINY_MODEL])
        self.assertFalse(r.success)
        self.assertIn("[dacpp:E_INVALID_MODEL]", r.message)
        self.assertIn("metric", r.message)
        r = self.srv.load(options=["ray_pose:true"])
        self.assertFalse(r.success)
        self.assertIn("[dacpp:E_UNSUPPORTED]", r.message)
        self.assertIn("ray head", r.message)
        r = self.srv.load(options=["ray_pose:maybe"])
        self.assertFalse(r.success)
        self.assertIn("ray_pose:true", r.message)


if __name__ == "__main__":
    unittest.main()

// DA3NESTED metric alignment: parity with the official NestedDepthAnything3Net steps, an exact known-scale case,
// torch.quantile semantics, and bad inputs.
#include "pipeline/nested_align.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <limits>
#include <string>

#include "core/error.h"
#include "geometry_fixtures.h"

namespace dacpp::pipeline {
namespace {

using testing::load_geometry;
using testing::rel_max_error;

void expect_official(const std::string& name) {
  const std::string p = "nested_" + name + "_";
  Tensor depth = load_geometry(p + "in_depth"), conf = load_geometry(p + "in_depth_conf");
  Tensor ext = load_geometry(p + "in_extrinsics");
  const NestedAlignResult r =
      nested_metric_align(depth, conf, ext, load_geometry(p + "in_intrinsics"), load_geometry(p + "in_metric_depth"),
                          load_geometry(p + "in_metric_sky"));
  const double want_scale = load_geometry(p + "out_scale").data<float>()[0];
  const double e_scale = std::fabs(r.scale_factor - want_scale) / std::fabs(want_scale);
  const double e_depth = rel_max_error(depth, load_geometry(p + "out_depth"));
  const double e_conf = rel_max_error(conf, load_geometry(p + "out_depth_conf"));
  const double e_ext = rel_max_error(ext, load_geometry(p + "out_extrinsics"));
  EXPECT_LE(e_scale, 1e-5) << name;
  EXPECT_LE(e_depth, 1e-4) << name;
  EXPECT_EQ(e_conf, 0.0) << name;
  EXPECT_LE(e_ext, 1e-5) << name;
  EXPECT_GT(r.sky_pixels, 0);
  std::printf("[nested %s] vs official: scale %.3g, depth %.3g, conf %.3g, extrinsics %.3g (s = %.6f)\n",
              name.c_str(), e_scale, e_depth, e_conf, e_ext, r.scale_factor);
}

TEST(NestedAlign, MatchesOfficial) { expect_official("basic"); }
TEST(NestedAlign, MatchesOfficialWithSkyCapAt200m) { expect_official("cap"); }

TEST(NestedAlign, CapFixtureHitsTheCap) {
  Tensor depth = load_geometry("nested_cap_in_depth"), conf = load_geometry("nested_cap_in_depth_conf");
  Tensor ext = load_geometry("nested_cap_in_extrinsics");
  const NestedAlignResult r = nested_metric_align(depth, conf, ext, load_geometry("nested_cap_in_intrinsics"),
                                                  load_geometry("nested_cap_in_metric_depth"),
                                                  load_geometry("nested_cap_in_metric_sky"));
  EXPECT_EQ(r.sky_depth, 200.0);
}

// depth = metric / 4 exactly, focal 300 (factor 1): s = 4, translations ×4, the sky row gets the 99th percentile.
TEST(NestedAlign, RecoversAnExactScale) {
  const int h = 5, w = 6;
  std::vector<float> d(h * w), c(h * w), m(h * w), sky(h * w, 0.0f);
  for (int i = 0; i < h * w; ++i) m[i] = 1.0f + 0.25f * i, d[i] = m[i] / 4, c[i] = 1.5f + (i % 7);
  for (int j = 0; j < w; ++j) sky[j] = 0.9f;
  Tensor depth = Tensor::from_vector({1, h, w}, d), conf = Tensor::from_vector({1, h, w}, c);
  Tensor ext = Tensor::from_vector({1, 3, 4}, {1, 0, 0, 0.5f, 0, 1, 0, -1, 0, 0, 1, 2});
  const Tensor k = Tensor::from_vector({1, 3, 3}, {290, 0, 3, 0, 310, 2.5f, 0, 0, 1});
  const NestedAlignResult r = nested_metric_align(depth, conf, ext, k, Tensor::from_vector({1, h, w}, m),
                                                  Tensor::from_vector({1, h, w}, sky));
  EXPECT_NEAR(r.scale_factor, 4.0, 1e-6);
  EXPECT_EQ(r.sky_pixels, w);
  EXPECT_NEAR(ext.data<float>()[3], 2.0f, 1e-5);
  EXPECT_NEAR(ext.data<float>()[11], 8.0f, 1e-5);
  // Non-sky depth is now metric: values 1 + 0.25 i for i = 6..29; 99th percentile at rank 0.99 * 23.
  const double q = 1.0 + 0.25 * (6 + 0.99 * 23);
  EXPECT_NEAR(r.sky_depth, q, 1e-5);
  for (int j = 0; j < w; ++j) {
    EXPECT_NEAR(depth.data<float>()[j], q, 1e-5);
    EXPECT_EQ(conf.data<float>()[j], 1.0f);
  }
  EXPECT_NEAR(depth.data<float>()[h * w - 1], m[h * w - 1], 1e-5);
}

TEST(NestedAlign, QuantileMatchesTorchLinear) {
  std::vector<float> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(quantile_linear(v, 0.5), 2.5);
  v = {4, 1, 3, 2};
  EXPECT_NEAR(quantile_linear(v, 0.99), 3.97, 1e-12);
  v = {7};
  EXPECT_DOUBLE_EQ(quantile_linear(v, 0.99), 7.0);
  v = {5, 5, 1};
  EXPECT_DOUBLE_EQ(quantile_linear(v, 1.0), 5.0);
}

void expect_invalid(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(NestedAlign, RejectsBadInputs) {
  const std::string p = "nested_basic_in_";
  const Tensor d0 = load_geometry(p + "depth"), c0 = load_geometry(p + "depth_conf");
  const Tensor e0 = load_geometry(p + "extrinsics"), k = load_geometry(p + "intrinsics");
  const Tensor m = load_geometry(p + "metric_depth"), sky = load_geometry(p + "metric_sky");
  auto run = [&](Tensor d, Tensor c, Tensor e, const Tensor& kk, const Tensor& mm, const Tensor& ss) {
    d = d.clone(), c = c.clone(), e = e.clone();
    nested_metric_align(d, c, e, kk, mm, ss);
  };
  const int64_t s = d0.dim(0), h = d0.dim(1), w = d0.dim(2);
  expect_invalid([&] { run(d0, c0.reshape({s, w, h}), e0, k, m, sky); }, "depth_conf: shape");
  expect_invalid([&] { run(d0, c0, e0.reshape({s, 4, 3}), k, m, sky); }, "extrinsics shape");
  expect_invalid([&] { run(d0, c0, e0, k.slice0(0, 1), m, sky); }, "intrinsics shape");
  expect_invalid([&] { run(d0.reshape({s * h, w}), c0, e0, k, m, sky); }, "depth: shape");
  Tensor bad = m.clone();
  bad.data<float>()[40] = std::numeric_limits<float>::infinity();
  expect_invalid([&] { run(d0, c0, e0, k, bad, sky); }, "metric_depth: non-finite value inf at flat index 40");
  Tensor all_sky = sky.clone();
  for (int64_t i = 0; i < all_sky.numel(); ++i) all_sky.data<float>()[i] = i < 8 ? 0.1f : 0.5f;
  expect_invalid([&] { run(d0, c0, e0, k, m, all_sky); }, "only 8 of");
  expect_invalid([&] { run(d0, c0, e0, k, Tensor::zeros(m.shape()), sky); }, "no pixel qualifies");
}

}  // namespace
}  // namespace dacpp::pipeline

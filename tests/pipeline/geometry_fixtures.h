// Test helpers for the geometry fixtures (tests/fixtures/geometry, made by scripts/parity/make_geometry_fixtures.py).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/tensor.h"
#include "util/npy_read.h"

namespace dacpp::testing {

inline Tensor load_geometry(const std::string& name) {
  const std::string path = std::string(DACPP_FIXTURES_DIR) + "/geometry/" + name + ".npy";
  NpyArray a;
  std::string err;
  if (!parse_npy(read_file_bytes(path), &a, &err)) {
    ADD_FAILURE() << path << ": " << err;
    return Tensor::zeros({1});
  }
  return Tensor::from_vector(a.shape, a.values, name);
}

// max |got − want| / max(max |want|, floor): the error relative to the tensor's own scale.
inline double rel_max_error(const Tensor& got, const Tensor& want, double floor = 1e-6) {
  EXPECT_EQ(shape_str(got.shape()), shape_str(want.shape()));
  if (got.numel() != want.numel()) return INFINITY;
  double diff = 0, scale = floor;
  for (int64_t i = 0; i < want.numel(); ++i) {
    diff = std::max(diff, std::fabs(double(got.data<float>()[i]) - want.data<float>()[i]));
    scale = std::max(scale, std::fabs(double(want.data<float>()[i])));
  }
  return diff / scale;
}

}  // namespace dacpp::testing

// What Runner::forward hands back is the caller's: a later forward (which reuses the runner's arena and, on a GPU,
// its staging buffer) must not change it. graph_replay_ms has nothing to time on the CPU.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/runner.h"
#include "util/runner_options.h"

namespace dacpp {
namespace {

const std::string kModel = std::string(DACPP_FIXTURES_DIR) + "/tiny-da2.gguf";

Tensor random_input(int64_t h, int64_t w, unsigned seed) {
  Tensor x = Tensor::empty({1, 3, h, w}, DType::F32, "input");
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = nd(rng);
  return x;
}

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

TEST(RunnerResults, EachForwardsResultIsTheCallers) {
  Runner runner(Model::load(kModel), testing::runner_options(2));
  const ForwardResult first = runner.forward(random_input(70, 84, 1));
  const std::vector<float> kept = values(first.depth);
  const ForwardResult second = runner.forward(random_input(70, 84, 2));
  EXPECT_EQ(values(first.depth), kept) << "the second forward overwrote the first result";
  EXPECT_NE(first.depth.raw(), second.depth.raw());
  EXPECT_NE(values(second.depth), kept) << "different inputs gave the same depth: the test proves nothing";
}

TEST(RunnerResults, NoGraphReplayTimeOnTheCpu) {
  Runner runner(Model::load(kModel), testing::runner_options(2));
  runner.forward(random_input(70, 84, 3));
  EXPECT_FALSE(runner.graph_replay_ms(3).has_value());
}

}  // namespace
}  // namespace dacpp

// The transformer blocks' residual updates in their GEMMs (layers::ResidualForm::InGemm: LayerScale folded into
// proj and fc2 / w3 at load, ops::linear_add adding each product to the f32 stream, the norms reading the stream
// alone): a GPU model's default, which DACPP_RESIDUAL_GEMM=1 asks for on the CPU too, so the fixtures check it
// against the official code at the same tolerance as the CPU's default form, through DA2, DA3 mono, DA3 any-view
// (RoPE, qk-norm, alternating attention) and the giant-style SwiGLU model, and in row chunks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/arena.h"
#include "engine/model.h"
#include "engine/runner.h"
#include "formats/gguf_test_util.h"
#include "formats/tensor_names.h"
#include "layers/linear.h"
#include "models/model_test_util.h"
#include "ops/context.h"
#include "ops/op_profile.h"
#include "ops/op_test_util.h"
#include "util/runner_options.h"

namespace dacpp {
namespace {

const std::string kDir = std::string(DACPP_FIXTURES_DIR) + "/models/";

// Sets DACPP_RESIDUAL_GEMM for the scope (models built meanwhile take that form), then restores it.
class ResidualFormEnv {
 public:
  explicit ResidualFormEnv(const char* value) {
    if (const char* old = std::getenv(kVar)) old_ = old;
    setenv(kVar, value, 1);
  }
  ~ResidualFormEnv() {
    if (old_)
      setenv(kVar, old_->c_str(), 1);
    else
      unsetenv(kVar);
  }
  ResidualFormEnv(const ResidualFormEnv&) = delete;
  ResidualFormEnv& operator=(const ResidualFormEnv&) = delete;

 private:
  static constexpr const char* kVar = "DACPP_RESIDUAL_GEMM";
  std::optional<std::string> old_;
};

struct Fixture {
  const char* dir;
  const char* checkpoint;  // inside dir, or "" for the folder
  const char* sub;         // the reference's subfolder ("" for the fixture's own)
};

Tensor input_of(const Fixture& f) {
  Tensor x = testing::load_npy(kDir + f.dir + "/" + f.sub + (f.sub[0] ? "/" : "") + "input.npy");
  const Shape s = x.shape();
  return s.size() == 5 ? x.reshape({s[0] * s[1], s[2], s[3], s[4]}) : x;  // DA3: [1, S, 3, H, W]
}

std::shared_ptr<const Model> load(const Fixture& f, const char* form, std::optional<DType> precision = std::nullopt) {
  const ResidualFormEnv env(form);
  LoadOptions lo;
  lo.precision = precision;
  return Model::load(kDir + f.dir + (f.checkpoint[0] ? std::string("/") + f.checkpoint : std::string()), lo);
}

const Fixture kFixtures[] = {
    {"da2_tiny_rel", "da2_tiny_rel.pth", ""},
    {"da3mono_tiny", "", ""},
    {"da3small_tiny", "", "view3"},
    {"da3giant_tiny", "", "view3"},
};

// Every stage against the official code's dumps at the default form's tolerance, and every block's two residual
// updates as linear_add (the op profile counts them): the form was taken, not silently skipped.
TEST(ResidualInGemm, MatchesTheOfficialCodeOnEveryFixture) {
  for (const Fixture& f : kFixtures) {
    SCOPED_TRACE(f.dir);
    if (!std::filesystem::exists(kDir + f.dir)) GTEST_SKIP() << "fixture " << f.dir << " absent";
    const std::shared_ptr<const Model> model = load(f, "1");
    Runner runner(model, testing::runner_options(2));
    ops::OpProfile profile;
    runner.set_op_profile(&profile);
    ForwardResult r = runner.forward(input_of(f), /*dump_stages=*/true);
    const std::string ref = kDir + f.dir + "/" + f.sub + (f.sub[0] ? "/" : "");
    for (int k = 0; k < 4; ++k) {
      const std::string feat = "feat" + std::to_string(k);
      testing::expect_close_to_npy(feat, r.dumps.tensors[feat], ref + feat + ".npy", 1e-5);
    }
    testing::expect_close_to_npy("depth", r.depth, ref + "depth.npy", 1e-5);
    int64_t adds = 0, linears = 0;
    for (const ops::OpProfile::Entry& e : profile.entries()) {
      if (e.op == "linear_add") adds += e.calls;
      if (e.op == "linear") linears += e.calls;
    }
    EXPECT_EQ(adds, 2 * model->config().vit.depth) << "each block's attention and FFN add to the stream";
    EXPECT_GT(linears, 0);
  }
}

// DACPP_RESIDUAL_GEMM=0 gives the separate update (no linear_add), and the two forms agree to f32 rounding.
TEST(ResidualInGemm, AgreesWithTheSeparateUpdate) {
  const Fixture& f = kFixtures[0];
  if (!std::filesystem::exists(kDir + f.dir)) GTEST_SKIP() << "fixture " << f.dir << " absent";
  const Tensor x = input_of(f);
  Runner separate(load(f, "0"), testing::runner_options(2));
  ops::OpProfile profile;
  separate.set_op_profile(&profile);
  const ForwardResult a = separate.forward(x);
  for (const ops::OpProfile::Entry& e : profile.entries()) EXPECT_NE(e.op, "linear_add");
  const ForwardResult b = Runner(load(f, "1"), testing::runner_options(2)).forward(x);
  EXPECT_LE(testing::rel_l2(b.depth, a.depth), 1e-6);
}

// A bf16 model on the CPU (weights packed for oneDNN, the add as the matmul's sum post-op): within bf16's bound of
// the official f32 outputs, as the Separate form is.
TEST(ResidualInGemm, Bf16OnTheCpuStaysWithinItsBound) {
  const Fixture& f = kFixtures[0];
  if (!std::filesystem::exists(kDir + f.dir)) GTEST_SKIP() << "fixture " << f.dir << " absent";
  std::shared_ptr<const Model> model;
  try {
    model = load(f, "1", DType::BF16);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Unsupported) GTEST_SKIP() << e.message();
    throw;
  }
  const ForwardResult r = Runner(model, testing::runner_options(2)).forward(input_of(f));
  testing::expect_close_to_npy("depth", r.depth, kDir + f.dir + "/depth.npy", 1e-2);
}

// A LayerScale that folds a weight past f32's range (finite factors, checked at load, whose product is not) is an
// InvalidModel error at load naming the weight and the scale, not an inf in the forward.
TEST(ResidualInGemm, AFoldThatOverflowsIsRefusedAtLoad) {
  testing::SyntheticModel synth;
  synth.fill_tensor(names::vit_block("vit", 1, "ls2"), 3e38f);
  synth.fill_tensor(names::vit_block("vit", 1, "mlp_fc2.weight"), 10.f);
  const std::shared_ptr<const ModelFile> file = synth.build();
  const ResidualFormEnv env("1");
  try {
    Model::from_file(file);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModel) << e.message();
    EXPECT_NE(e.message().find("mlp_fc2"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("ls2"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("overflows f32"), std::string::npos) << e.message();
  }
}

// A linear whose rows are scaled at load (a folded LayerScale) adds s ⊙ (x·Wᵀ + b) into the stream and has no
// other use: forward_into would hand out the scaled product as if it were the linear's own, so it is an Internal
// error; a row scale of the wrong shape is one at construction.
TEST(ResidualInGemm, ARowScaledLinearOnlyAddsIntoAStream) {
  constexpr int64_t in = 6, out = 4, rows = 3;
  const Tensor w = test::random_tensor({out, in}, 1, 0.5f, "lin.weight");
  const Tensor b = test::random_tensor({out}, 2, 0.5f, "lin.bias");
  const std::vector<TensorRecord> recs{{"lin.weight", DType::F32, w.shape(), w.raw(), w.nbytes()},
                                       {"lin.bias", DType::F32, b.shape(), b.raw(), b.nbytes()}};
  const ModelFile mf("lin.gguf", std::map<std::string, MetaValue>{}, recs, nullptr, w.nbytes() + b.nbytes());
  Tensor scale = test::output_tensor({out});
  for (int64_t o = 0; o < out; ++o) scale.data<float>()[o] = 0.25f * static_cast<float>(o + 1);
  const layers::Linear lin(mf, "lin", in, out, layers::Bias::Required, scale);
  ops::Context ctx(Device::cpu(), 1);
  HostArena arena(1 << 16);
  layers::Exec ex{ctx, arena};
  const Tensor x = test::random_tensor({rows, in}, 3, 1.f, "x");
  Tensor stream = test::random_tensor({rows, out}, 4, 1.f, "stream");
  std::vector<float> want(stream.data<float>(), stream.data<float>() + rows * out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double acc = b.data<float>()[o];
      for (int64_t k = 0; k < in; ++k) acc += double{x.data<float>()[r * in + k]} * w.data<float>()[o * in + k];
      want[static_cast<size_t>(r * out + o)] += scale.data<float>()[o] * static_cast<float>(acc);
    }
  lin.add_into(ex, x, stream);
  for (int64_t i = 0; i < rows * out; ++i)
    EXPECT_NEAR(stream.data<float>()[i], want[static_cast<size_t>(i)], 1e-5f) << "element " << i;
  Tensor y = test::output_tensor({rows, out});
  try {
    lin.forward_into(ex, x, y);
    ADD_FAILURE() << "forward_into of a row-scaled linear ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Internal) << e.message();
    EXPECT_NE(e.message().find("add_into"), std::string::npos) << e.message();
  }
  try {
    const layers::Linear bad(mf, "lin", in, out, layers::Bias::Required, test::output_tensor({out - 1}));
    ADD_FAILURE() << "a row scale of " << out - 1 << " values for " << out << " rows was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Internal) << e.message();
    EXPECT_NE(e.message().find("row scale"), std::string::npos) << e.message();
  }
}

// Row chunks (forward_rows_add): each chunk's rows of the stream updated by its own GEMMs.
TEST(ResidualInGemm, RowChunksMatchTheWholeRows) {
  const Fixture& f = kFixtures[0];
  if (!std::filesystem::exists(kDir + f.dir)) GTEST_SKIP() << "fixture " << f.dir << " absent";
  std::shared_ptr<const Model> model = load(f, "1");
  const Tensor x = input_of(f);
  const ForwardResult whole = Runner(model, testing::runner_options(2)).forward(x);
  for (int chunks = 2; chunks <= 4; ++chunks) {
    RunnerOptions o = testing::runner_options(2);
    o.row_chunks = chunks;
    const ForwardResult r = Runner(model, o).forward(x);
    EXPECT_LE(testing::rel_l2(r.depth, whole.depth), 1e-6) << chunks << " chunks";
  }
}

}  // namespace
}  // namespace dacpp

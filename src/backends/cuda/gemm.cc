#include "backends/cuda/gemm.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/tuning.h"

namespace dacpp::cuda {
namespace {

constexpr size_t kMaxPlans = 512;

cudaDataType_t cuda_type(DType dt) {
  switch (dt) {
    case DType::F32:
      return CUDA_R_32F;
    case DType::BF16:
      return CUDA_R_16BF;
    case DType::F16:
      return CUDA_R_16F;
    default:
      break;
  }
  DACPP_THROW(ErrorCode::Internal, "gemm: dtype ", dtype_name(dt), " reached cuBLASLt");
}

// Largest power of two <= 256 dividing the address (cuBLASLt's alignment preferences).
uint32_t alignment_of(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && a % al != 0) al >>= 1;
  return al;
}

using Key = std::array<int64_t, 20>;

Key key_of(const GemmSpec& s, const void* a, const void* b, const void* d, const void* bias) {
  return Key{s.m,
             s.n,
             s.k,
             s.trans_a,
             s.trans_b,
             s.lda,
             s.ldb,
             s.ldd,
             s.batch,
             s.stride_a,
             s.stride_b,
             s.stride_d,
             static_cast<int64_t>(s.dtype),
             static_cast<int64_t>(s.epilogue),
             alignment_of(a),
             alignment_of(b),
             alignment_of(d),
             bias ? alignment_of(bias) : 0,
             s.accumulate,
             s.d_f32};
}

// Descriptors and algorithm of one GEMM shape.
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;  // what algo needs (the heuristic's workspaceSize)
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

struct Preference {
  cublasLtMatmulPreference_t p = nullptr;
  ~Preference() {
    if (p) cublasLtMatmulPreferenceDestroy(p);
  }
};

void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const void* v, size_t sz, const char* what) {
  DACPP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, attr, v, sz), what, ": cublasLtMatmulDescSetAttribute");
}

void make_layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                 int64_t stride, const char* what, const char* which) {
  DACPP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(l, t, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
                     what, ": layout of ", which);
  if (batch == 1) return;
  const int32_t count = static_cast<int32_t>(batch);
  DACPP_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                     what, ": batch count of ", which);
  DACPP_CUBLAS_CHECK(
      cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)), what,
      ": batch stride of ", which);
}

constexpr int kCandidates = 8;  // heuristic results timed per new shape
constexpr int kTimedRuns = 3;

// `workspace`: what `algo` needs; the current lane's workspace of that size is passed (CudaContext::workspace).
void run_matmul(CudaContext& c, const Plan& p, const cublasLtMatmulAlgo_t& algo, size_t workspace, const void* a,
                const void* b, void* d, bool accumulate, const char* what) {
  const float alpha = 1.f, beta = accumulate ? 1.f : 0.f;
  DACPP_CUBLAS_CHECK(cublasLtMatmul(c.lt(), p.op, &alpha, a, p.a, b, p.b, &beta, d, p.d, d, p.d, &algo,
                                    c.workspace(workspace), workspace, c.stream()),
                     what, ": cublasLtMatmul");
}

// One algorithm to time: a heuristic result (its index among them) and the workspace it needs.
struct Candidate {
  cublasLtMatmulAlgo_t algo;
  int heuristic;
  size_t workspace;
};

// The plan's descriptors (no algorithm yet).
std::unique_ptr<Plan> make_descriptors(const GemmSpec& s, const void* bias, const char* what) {
  auto p = std::make_unique<Plan>();
  const cudaDataType_t t = cuda_type(s.dtype);
  DACPP_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), what, ": matmul desc");
  const cublasOperation_t ta = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_desc(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta), what);
  set_desc(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb), what);
  set_desc(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &s.epilogue, sizeof(s.epilogue), what);
  // The heuristic reads the bias pointer's alignment (part of the key), tuning runs with it; each call sets the
  // pointer itself.
  if (bias) set_desc(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias), what);
  // Stored shapes: A is [m, k] (or [k, m] when transposed), B is [k, n] (or [n, k]).
  make_layout(&p->a, t, s.trans_a ? s.k : s.m, s.trans_a ? s.m : s.k, s.lda, s.batch, s.stride_a, what, "A");
  make_layout(&p->b, t, s.trans_b ? s.n : s.k, s.trans_b ? s.k : s.n, s.ldb, s.batch, s.stride_b, what, "B");
  if (s.d_f32 && bias) {
    const cudaDataType_t bias_type = CUDA_R_32F;
    set_desc(p->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type), what);
  }
  make_layout(&p->d, s.d_f32 ? CUDA_R_32F : t, s.m, s.n, s.ldd, s.batch, s.stride_d, what, "D");
  return p;
}

// The algorithms tuning chooses among: the heuristic's top results that it reports runnable (its first even when
// not: that failure is then the call's own). (Split-K variants of them, through CUBLASLT_ALGO_CONFIG_SPLITK_NUM with
// an f32 reduction in the workspace, were tried on the H200 in session 7: 2-8 splits never won a shape of DA2 S/B/L,
// e.g. 1369×256×9216 took 93-205 µs split against 67 µs unsplit. The top 32 instead of 8, session 18: DA2-L and
// DA2-S forwards unchanged within noise.)
std::vector<Candidate> candidates(CudaContext& c, const GemmSpec& s, const Key& k, const Plan& p, const char* what) {
  Preference pref;
  DACPP_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref.p), what, ": preference");
  const size_t ws = c.workspace_bytes();
  DACPP_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)), what,
      ": workspace preference");
  const cublasLtMatmulPreferenceAttributes_t attrs[] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  const uint32_t aligns[] = {static_cast<uint32_t>(k[14]), static_cast<uint32_t>(k[15]), static_cast<uint32_t>(k[16]),
                             static_cast<uint32_t>(k[16])};
  for (int i = 0; i < 4; ++i)
    DACPP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, attrs[i], &aligns[i], sizeof(aligns[i])), what,
                       ": alignment preference");
  cublasLtMatmulHeuristicResult_t heur[kCandidates] = {};
  int found = 0;
  DACPP_CUBLAS_CHECK(
      cublasLtMatmulAlgoGetHeuristic(c.lt(), p.op, p.a, p.b, p.d, p.d, pref.p, kCandidates, heur, &found), what,
      ": algorithm heuristic");
  DACPP_CHECK(found > 0, ErrorCode::Backend, what, ": cuBLASLt has no algorithm for m=", s.m, " n=", s.n, " k=", s.k,
              " batch=", s.batch, " (device cuda:", c.device_index(), ")");
  std::vector<Candidate> cands;
  for (int i = 0; i < found; ++i)
    if (i == 0 || heur[i].state == CUBLAS_STATUS_SUCCESS)
      cands.push_back({heur[i].algo, i, std::min(heur[i].workspaceSize, ws)});
  return cands;
}

std::string label_of(const Candidate& cand) { return str_cat("algo", cand.heuristic); }

// D's extent in elements: the span from its first to its last element over the batch.
size_t d_extent(const GemmSpec& s) {
  return static_cast<size_t>((s.batch - 1) * s.stride_d + (s.n - 1) * s.ldd + s.m);
}

// Descriptors + the tuned algorithm (the heuristic's first when tuning cannot run). An accumulating GEMM is timed on
// the caller's D after a copy of D is taken, and D is put back from it (each timed run adds to D). A candidate the
// library refuses to run here is skipped (no fault point: this is not the caller's GEMM).
std::unique_ptr<Plan> make_plan(CudaContext& c, const GemmSpec& s, const Key& k, const void* a, const void* b,
                                void* d, const void* bias, const char* what) {
  std::unique_ptr<Plan> p = make_descriptors(s, bias, what);
  const std::vector<Candidate> cands = candidates(c, s, k, *p, what);
  if (cands.size() == 1) {
    p->algo = cands[0].algo;
    p->workspace = cands[0].workspace;
    return p;
  }
  std::string key = "gemm";
  for (const int64_t v : k) key += str_cat(",", v);
  const float alpha = 1.f, beta = s.accumulate ? 1.f : 0.f;
  std::shared_ptr<void> saved;
  const size_t d_bytes = dtype_nbytes(s.d_f32 ? DType::F32 : s.dtype, static_cast<int64_t>(d_extent(s)));
  if (s.accumulate && autotune_enabled() && !stream_capturing(c)) {  // (a capture times nothing)
    saved = c.allocator().allocate_shared(d_bytes, "gemm tuning: a copy of the accumulated D");
    DACPP_CUDA_CHECK(cudaMemcpyAsync(saved.get(), d, d_bytes, cudaMemcpyDeviceToDevice, c.stream()), what,
                     ": copy of D before tuning");
  }
  const int choice = tuned_choice(
      c, key, static_cast<int>(cands.size()), 0,
      [&](int i) {
        return cublasLtMatmul(c.lt(), p->op, &alpha, a, p->a, b, p->b, &beta, d, p->d, d, p->d, &cands[i].algo,
                              c.main_workspace(), c.workspace_bytes(), c.stream()) == CUBLAS_STATUS_SUCCESS;
      },
      kTimedRuns, [&](int i) { return label_of(cands[i]); });
  if (saved) {
    DACPP_CUDA_CHECK(cudaMemcpyAsync(d, saved.get(), d_bytes, cudaMemcpyDeviceToDevice, c.stream()), what,
                     ": D put back after tuning");
    // The copy goes back to the allocator's cache below, where another lane's stream may take it next.
    DACPP_CUDA_CHECK(cudaStreamSynchronize(c.stream()), what, ": D put back after tuning");
  }
  p->algo = cands[choice].algo;
  p->workspace = cands[choice].workspace;
  return p;
}

}  // namespace

struct GemmPlans::Impl {
  std::map<Key, std::unique_ptr<Plan>> plans;
};

GemmPlans::GemmPlans() : impl_(std::make_unique<Impl>()) {}
GemmPlans::~GemmPlans() = default;
size_t GemmPlans::size() const {
  return impl_->plans.size();
}

void gemm(CudaContext& c, const GemmSpec& s, const void* a, const void* b, void* d, const void* bias,
          const char* what) {
  const Key k = key_of(s, a, b, d, bias);
  auto& plans = c.gemm_plans().impl().plans;
  auto it = plans.find(k);
  if (it == plans.end()) {
    std::unique_ptr<Plan> p = make_plan(c, s, k, a, b, d, bias, what);
    if (plans.size() >= kMaxPlans) plans.clear();
    it = plans.emplace(k, std::move(p)).first;
  }
  Plan& p = *it->second;
  // The bias pointer changes per call; setting it is a host-side write into the descriptor.
  set_desc(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias), what);
  run_matmul(c, p, p.algo, p.workspace, a, b, d, s.accumulate, what);
}

namespace {

// A fresh plan's descriptors and the candidates tuning would time for them (the tests' hooks; the cache untouched).
struct Described {
  std::unique_ptr<Plan> plan;
  std::vector<Candidate> cands;
};

Described describe(CudaContext& c, const GemmSpec& s, const void* a, const void* b, void* d, const void* bias,
                   const char* what) {
  const Key k = key_of(s, a, b, d, bias);
  Described out{make_descriptors(s, bias, what), {}};
  out.cands = candidates(c, s, k, *out.plan, what);
  return out;
}

}  // namespace

std::vector<std::string> gemm_candidate_labels(CudaContext& c, const GemmSpec& s, const void* a, const void* b,
                                               void* d, const void* bias, const char* what) {
  std::vector<std::string> out;
  for (const Candidate& cand : describe(c, s, a, b, d, bias, what).cands) out.push_back(label_of(cand));
  return out;
}

void gemm_candidate(CudaContext& c, const GemmSpec& s, const void* a, const void* b, void* d, const void* bias,
                    size_t index, const char* what) {
  const Described g = describe(c, s, a, b, d, bias, what);
  DACPP_CHECK(index < g.cands.size(), ErrorCode::InvalidArgument, what, ": GEMM candidate ", index, " of ",
              g.cands.size());
  run_matmul(c, *g.plan, g.cands[index].algo, g.cands[index].workspace, a, b, d, s.accumulate, what);
}

}  // namespace dacpp::cuda

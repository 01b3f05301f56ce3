#include "backends/cuda/cuda_context.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>

#include "backends/cuda/check.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/kernel_probe.h"
#include "core/choice_file.h"
#include "core/log.h"
#include "core/tensor.h"

namespace dacpp::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // cuBLASLt: 32 MiB is enough for Hopper's best algorithms

}  // namespace

CudaContext::CudaContext(int device_index) : device_index_(device_index) {
  int count = 0;
  DACPP_CUDA_CHECK(cudaGetDeviceCount(&count), "CUDA context for cuda:", device_index, ": cudaGetDeviceCount");
  DACPP_CHECK(device_index >= 0 && device_index < count, ErrorCode::Backend, "CUDA context: device cuda:",
              device_index, " does not exist (", count, " CUDA device(s) visible)");
  DACPP_CUDA_CHECK(cudaSetDevice(device_index), "CUDA context: select cuda:", device_index);
  cudaDeviceProp prop{};
  DACPP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_index), "CUDA context: properties of cuda:", device_index);
  sm_version_ = prop.major * 10 + prop.minor;
  sm_count_ = prop.multiProcessorCount;
  const char* pdl_env = std::getenv("DACPP_PDL");
  pdl_ = sm_version_ >= 90 && (pdl_env == nullptr || std::string(pdl_env) != "0");
  const char* lanes_env = std::getenv("DACPP_LANES");
  lanes_enabled_ = lanes_env == nullptr || std::string(lanes_env) != "0";
  const char* priority_env = std::getenv("DACPP_LANE_PRIORITY");
  lane_priority_ = priority_env == nullptr || std::string(priority_env) != "0";
  device_name_ = prop.name;
  allocator_ = std::make_unique<DeviceAllocator>(device_index);
  gemm_plans_ = std::make_unique<GemmPlans>();
  try {
    // Lane 0 at the greatest priority, the side lanes (made by fork_lanes) at the least: in a graph that keeps them,
    // free multiprocessors go to lane 0's blocks first where branches run beside its chain (fork_lanes).
    int greatest = 0;
    DACPP_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least_priority_, &greatest), "CUDA context: stream priorities of cuda:",
                     device_index);
    DACPP_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest),
                     "CUDA context: create stream on cuda:", device_index);
    DACPP_CUBLAS_CHECK(cublasLtCreate(&lt_), "CUDA context: cublasLtCreate on cuda:", device_index);
    workspace_ = allocator_->allocate(kWorkspaceBytes, "cuBLASLt workspace");
    workspace_bytes_ = kWorkspaceBytes;
    hopper_mma_ = sm90a_image_runs(device_index);
    lanes_[0].stream = stream_;
  } catch (...) {
    if (workspace_) allocator_->deallocate(workspace_);
    if (lt_) cublasLtDestroy(lt_);
    if (stream_) cudaStreamDestroy(stream_);
    cudaGetLastError();
    throw;
  }
}

CudaContext::~CudaContext() {
  cudaSetDevice(device_index_);
  const cudaError_t err = cudaStreamSynchronize(stream_);
  if (err != cudaSuccess)
    log::error("CUDA context cuda:", device_index_, ": pending work failed at teardown: ", cudaGetErrorName(err),
               ": ", cudaGetErrorString(err));
  allocator_->deallocate(workspace_);
  if (pinned_) cudaFreeHost(pinned_);
  derived_.clear();
  for (int i = 1; i < kLanes; ++i) {
    Lane& lane = lanes_[i];
    if (lane.stream) cudaStreamSynchronize(lane.stream);
    if (lane.done) cudaEventDestroy(lane.done);
    if (lane.stream) cudaStreamDestroy(lane.stream);
  }
  for (Lane& lane : lanes_) lane.scratch = lane.workspace = Grown{};
  if (forked_) cudaEventDestroy(forked_);
  gemm_plans_.reset();
  cublasLtDestroy(lt_);
  cudaStreamDestroy(stream_);
  cudaGetLastError();
}

void* CudaContext::grow(Grown& g, size_t bytes, const char* what) {
  if (bytes > g.size || g.gens.empty()) {
    const size_t next = std::max(bytes, g.size + g.size / 2);  // geometric: few generations
    std::shared_ptr<void> buffer = allocator_->allocate_shared(next, what);
    // The current buffer can only be in a graph if a capture ran since it was allocated; otherwise it goes.
    if (!g.gens.empty() && !capturing_ && g.epoch == capture_epoch_) {
      g.total -= g.size;
      g.gens.pop_back();
    }
    g.gens.push_back(std::move(buffer));
    g.size = next;
    g.total += next;
    g.epoch = capture_epoch_;
  }
  return g.gens.back().get();
}

void* CudaContext::scratch(size_t bytes, const char* what) {
  return grow(lanes_[static_cast<size_t>(lane_)].scratch, bytes, what);
}

size_t CudaContext::scratch_bytes() const {
  size_t total = 0;
  for (const Lane& lane : lanes_) total += lane.scratch.total + lane.workspace.total;
  return total;
}

void* CudaContext::workspace(size_t bytes) {
  DACPP_CHECK(bytes <= workspace_bytes_, ErrorCode::Internal, "cuBLASLt: a plan asks for ", bytes,
              " bytes of workspace, more than the ", workspace_bytes_, " its heuristic was allowed");
  if (lane_ == 0) return workspace_;
  if (bytes == 0) return nullptr;
  return grow(lanes_[static_cast<size_t>(lane_)].workspace, bytes, "cuBLASLt workspace of a lane");
}

void CudaContext::fork_lanes(int count, bool lane0_first) {
  DACPP_CHECK(count >= 1 && count <= kLanes && forked_count_ == 1 && lane_ == 0, ErrorCode::Internal,
              "CUDA lanes: fork of ", count, " (", forked_count_, " forked, lane ", lane_, ")");
  // The streams and events are made outside a capture (by the eager pass before it); a capture that finds them
  // missing runs its lanes in order on the context's stream.
  bool ready = forked_ != nullptr;
  for (int i = 1; i < count; ++i) ready = ready && lanes_[i].stream != nullptr && lanes_[i].done != nullptr;
  if (!ready && !capturing_) {
    if (!forked_)
      DACPP_CUDA_CHECK(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming), "CUDA lanes: create event");
    for (int i = 1; i < count; ++i) {
      Lane& lane = lanes_[i];
      if (!lane.stream)
        DACPP_CUDA_CHECK(cudaStreamCreateWithPriority(&lane.stream, cudaStreamNonBlocking, least_priority_),
                         "CUDA lanes: create stream");
      if (!lane.done)
        DACPP_CUDA_CHECK(cudaEventCreateWithFlags(&lane.done, cudaEventDisableTiming), "CUDA lanes: create event");
    }
    ready = true;
  }
  forked_count_ = count;
  concurrent_ = capturing_ && ready && count > 1;
  if (concurrent_ && lane0_first && lane_priority_) capture_priority_ = true;
}

void CudaContext::set_lane(int lane) {
  DACPP_CHECK(lane >= 0 && lane < forked_count_, ErrorCode::Internal, "CUDA lanes: lane ", lane, " of ", forked_count_,
              " forked");
  lane_ = lane;
  if (!concurrent_ || lane == 0) return;
  // The lane's next work comes after lane 0's so far.
  Lane& l = lanes_[static_cast<size_t>(lane)];
  DACPP_CUDA_CHECK(cudaEventRecord(forked_, stream_), "CUDA lanes: record lane 0's position");
  DACPP_CUDA_CHECK(cudaStreamWaitEvent(l.stream, forked_, 0), "CUDA lanes: lane ", lane, " waits for lane 0");
  l.joined = false;
  plain_next_[static_cast<size_t>(lane)] = true;
}

void CudaContext::join_lane(int lane) {
  DACPP_CHECK(lane > 0 && lane < forked_count_, ErrorCode::Internal, "CUDA lanes: join of lane ", lane, " of ",
              forked_count_, " forked");
  if (!concurrent_) return;
  Lane& l = lanes_[static_cast<size_t>(lane)];
  DACPP_CUDA_CHECK(cudaEventRecord(l.done, l.stream), "CUDA lanes: record lane ", lane, "'s end");
  DACPP_CUDA_CHECK(cudaStreamWaitEvent(stream_, l.done, 0), "CUDA lanes: join lane ", lane);
  l.joined = true;
  plain_next_[0] = true;
}

void CudaContext::end_lanes() noexcept {
  if (concurrent_) {
    // A capture ends with every side stream joined into the origin stream (else cudaStreamEndCapture fails).
    for (int i = 1; i < forked_count_; ++i) {
      Lane& l = lanes_[i];
      if (l.joined) continue;
      if (cudaEventRecord(l.done, l.stream) == cudaSuccess) cudaStreamWaitEvent(stream_, l.done, 0);
      l.joined = true;
      plain_next_[0] = true;
    }
  }
  concurrent_ = false;
  lane_ = 0;
  forked_count_ = 1;
}

void* CudaContext::pinned(size_t bytes) {
  if (bytes <= pinned_size_) return pinned_;
  const size_t grow = std::max(bytes, pinned_size_ + pinned_size_ / 2);
  make_current();
  if (pinned_) synchronize("page-locked staging: replacing the buffer");  // a queued copy may still read it
  void* p = nullptr;
  const cudaError_t err = cudaHostAlloc(&p, grow, cudaHostAllocDefault);
  if (err != cudaSuccess) {
    cudaGetLastError();
    log::debug("CUDA context cuda:", device_index_, ": no page-locked staging of ", grow, " bytes (",
               cudaGetErrorString(err), "); host copies use pageable memory");
    return nullptr;
  }
  if (pinned_) cudaFreeHost(pinned_);
  pinned_ = p;
  pinned_size_ = grow;
  return pinned_;
}

std::shared_ptr<const void> CudaContext::derived(const Tensor& w, int kind, size_t bytes,
                                                 const std::function<void(void*)>& fill, const char* what,
                                                 const Tensor* w2, void* borrowed_at) {
  const std::shared_ptr<void>& owner = w.storage();
  if (!keeps(w, w2)) {
    // A borrowed view (an activation): its address may be reused, so nothing is cached; the result lives where the
    // caller carved room for it, or in the scratch buffer, valid for the op that asked.
    void* p = borrowed_at != nullptr ? borrowed_at : scratch(bytes, what);
    fill(p);
    return std::shared_ptr<const void>(p, [](const void*) {});
  }
  const auto key = std::make_tuple(static_cast<const void*>(w.raw()), w.numel(), kind,
                                   w2 != nullptr ? static_cast<const void*>(w2->raw()) : nullptr);
  auto it = derived_.find(key);
  if (it != derived_.end() && it->second.owner.lock() == owner &&
      (w2 == nullptr || it->second.owner2.lock() == w2->storage()))
    return it->second.data;
  // Forget what was derived from tensors that are gone (a model freed while this context lives).
  for (auto e = derived_.begin(); e != derived_.end();) {
    const bool gone = e->second.owner.expired() || (std::get<3>(e->first) != nullptr && e->second.owner2.expired());
    e = gone ? derived_.erase(e) : std::next(e);
  }
  std::shared_ptr<void> data = allocator_->allocate_shared(bytes, what);
  fill(data.get());
  derived_[key] = Derived{owner, w2 != nullptr ? std::weak_ptr<void>(w2->storage()) : std::weak_ptr<void>(), data};
  return data;
}

void* pinned_staging(CudaContext& ctx, size_t bytes) { return ctx.pinned(bytes); }

std::shared_ptr<const void> CudaContext::converted(const Tensor& v, DType dtype) {
  // Conversions share derived()'s cache under negative kinds (derived layouts use positive ones).
  return derived(v, -1 - static_cast<int>(dtype), dtype_nbytes(dtype, v.numel()),
                 [&](void* p) {
                   Tensor dst = Tensor::view(p, v.shape(), dtype, v.device(), nullptr, v.name());
                   cast(*this, v, dst);
                 },
                 "converted weight vector");
}

void CudaContext::make_current() const {
  DACPP_CUDA_CHECK(cudaSetDevice(device_index_), "select cuda:", device_index_);
}

void CudaContext::synchronize(const char* what) {
  DACPP_CUDA_CHECK(cudaStreamSynchronize(stream_), what, ": synchronize stream");
}

void CudaContextDeleter::operator()(CudaContext* c) const noexcept { delete c; }

CudaContextPtr create_context(int device_index) { return CudaContextPtr(new CudaContext(device_index)); }

bool built_with_cuda() { return true; }

void synchronize(CudaContext& ctx, const char* what) { ctx.synchronize(what); }

bool lanes_enabled(CudaContext& ctx) {
  return ctx.lanes_enabled();
}
int max_lanes() {
  return CudaContext::kLanes;
}
void fork_lanes(CudaContext& ctx, int count, bool lane0_first) {
  ctx.fork_lanes(count, lane0_first);
}
void set_lane(CudaContext& ctx, int lane) {
  ctx.set_lane(lane);
}
void join_lane(CudaContext& ctx, int lane) {
  ctx.join_lane(lane);
}
void end_lanes(CudaContext& ctx) noexcept {
  ctx.end_lanes();
}

MemoryStats memory_stats(CudaContext& ctx) {
  DeviceAllocator& a = ctx.allocator();
  return MemoryStats{a.live_bytes(), a.cached_bytes(), a.peak_bytes()};
}

size_t device_used_bytes(CudaContext& ctx) {
  ctx.make_current();
  size_t free = 0, total = 0;
  DACPP_CUDA_CHECK(cudaMemGetInfo(&free, &total), "cudaMemGetInfo on cuda:", ctx.device_index());
  return total - free;
}

void release_cached(CudaContext& ctx) { ctx.allocator().release_cached(); }

std::string describe(CudaContext& ctx) {
  return str_cat(ctx.device_name(), " (sm_", ctx.sm_version(), ", cuda:", ctx.device_index(), ")");
}

namespace {

// The process-wide tuning tables, one per device index: the choices of this process (bounded) and those read from
// the tuning file, if any.
struct DeviceTable {
  std::map<std::string, int> tuned;
  std::map<std::string, int> persisted;
  std::unique_ptr<ChoiceFile> file;
  bool file_read = false;
};

struct TunedTables {
  std::mutex mu;
  std::map<int, DeviceTable> by_device;
};

TunedTables& tuned_tables() {
  static TunedTables* tables = new TunedTables;  // never destroyed: contexts may die during static destruction
  return *tables;
}

// The device's table, its tuning file read on first use. Called with t.mu held.
DeviceTable& device_table(TunedTables& t, const CudaContext& c) {
  DeviceTable& d = t.by_device[c.device_index()];
  if (d.file_read) return d;
  d.file_read = true;
  const char* path = std::getenv("DACPP_TUNING_FILE");
  if (path == nullptr || *path == '\0') return d;
  d.file = std::make_unique<ChoiceFile>(path, c.tuning_stamp());
  for (auto& [key, choice] : d.file->load()) {
    if (d.persisted.size() >= CudaContext::kMaxPersisted) {
      log::warn("tuning file '", path, "': more than ", CudaContext::kMaxPersisted, " choices for ",
                c.tuning_stamp(), "; the rest are tuned again");
      break;
    }
    d.persisted.emplace(key, choice);
  }
  log::info("tuning file '", path, "': ", d.persisted.size(), " choices for ", c.tuning_stamp());
  return d;
}

int choice_of(const std::map<std::string, int>& table, const std::string& key) {
  const auto it = table.find(key);
  return it == table.end() ? -1 : it->second;
}

}  // namespace

int CudaContext::tuned(const std::string& key) const {
  TunedTables& t = tuned_tables();
  std::lock_guard<std::mutex> lock(t.mu);
  return choice_of(device_table(t, *this).tuned, key);
}

void CudaContext::set_tuned(const std::string& key, int choice) {
  TunedTables& t = tuned_tables();
  std::lock_guard<std::mutex> lock(t.mu);
  auto& table = device_table(t, *this).tuned;
  if (table.size() >= kMaxTuned && table.find(key) == table.end()) table.clear();
  table.emplace(key, choice);  // a choice another Runner made first stands
}

size_t CudaContext::tuned_count() const {
  TunedTables& t = tuned_tables();
  std::lock_guard<std::mutex> lock(t.mu);
  return device_table(t, *this).tuned.size();
}

int CudaContext::persisted(const std::string& key) const {
  TunedTables& t = tuned_tables();
  std::lock_guard<std::mutex> lock(t.mu);
  return choice_of(device_table(t, *this).persisted, key);
}

void CudaContext::persist(const std::string& key, int choice) {
  TunedTables& t = tuned_tables();
  std::lock_guard<std::mutex> lock(t.mu);
  DeviceTable& d = device_table(t, *this);
  if (!d.file) return;
  if (d.persisted.size() < kMaxPersisted && !d.persisted.emplace(key, choice).second) return;  // stored already
  d.file->append(key, choice);
}

std::string CudaContext::tuning_stamp() const {
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  return str_cat(device_name_, " sm", sm_version_, " cudart ", runtime, " cublasLt ", cublasLtGetVersion());
}

}  // namespace dacpp::cuda

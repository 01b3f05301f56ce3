#include "backends/cpu/cpu_context.h"

#include <dnnl_debug.h>

#include "backends/cpu/dnnl_util.h"
#include "core/error.h"
#include "core/tensor.h"

namespace dacpp::cpu {

struct CpuContext::Dnnl {
  dnnl::engine engine;
  dnnl::stream stream;
};

void throw_dnnl_error(const char* op, const dnnl::error& e) {
  DACPP_THROW(ErrorCode::Backend, op, ": oneDNN ", dnnl_status2str(e.status), " ", e.what());
}

CpuContext::CpuContext(const ThreadPool& pool, size_t plan_capacity)
    : pool_(pool),
      capacity_(plan_capacity),
      scratch_(static_cast<size_t>(Scratch::Count)),
      scratch_bytes_(static_cast<size_t>(Scratch::Count), 0) {
  DACPP_CHECK(plan_capacity >= 1, ErrorCode::InvalidArgument, "CpuContext: plan cache capacity must be >= 1");
  dnnl_ = dnnl_call("CpuContext", [] {
    auto d = std::make_unique<Dnnl>();
    d->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    d->stream = dnnl::stream(d->engine);
    return d;
  });
}

CpuContext::~CpuContext() = default;

dnnl::engine& CpuContext::engine() { return dnnl_->engine; }
dnnl::stream& CpuContext::stream() { return dnnl_->stream; }

std::shared_ptr<Plan> CpuContext::find(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void CpuContext::insert(const std::string& key, std::shared_ptr<Plan> p) {
  ++created_;
  lru_.emplace_front(key, std::move(p));
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

void* CpuContext::scratch(Scratch slot, size_t bytes) {
  const size_t i = static_cast<size_t>(slot);
  DACPP_ASSERT(i < scratch_.size());
  if (scratch_bytes_[i] < bytes || !scratch_[i]) {
    scratch_[i].reset();
    scratch_[i] = host_alloc(bytes, "cpu scratch");
    scratch_bytes_[i] = bytes;
  }
  return scratch_[i].get();
}

}  // namespace dacpp::cpu

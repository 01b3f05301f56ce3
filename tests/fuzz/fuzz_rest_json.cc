// libFuzzer target: the REST POST /v1/depth body → DepthRequest (server/rest_json.h). A body that parses must give
// a request holding a data: URI; the request's JSON-visible fields then round-trip through protobuf bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "server/rest_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  try {
    const backend::DepthRequest r = dacpp::server::depth_request_from_json(body);
    if (r.src().rfind("data:", 0) != 0) __builtin_trap();
    backend::DepthRequest back;
    if (!back.ParseFromString(r.SerializeAsString()) || back.src() != r.src()) __builtin_trap();
  } catch (const dacpp::Error&) {
  }
  return 0;
}

// The JSON bodies of the REST surface (LocalAI's /v1/depth schema, spec §3.5): request parsing, response and error
// rendering. Pure functions (no HTTP), so the request decoder can be fuzzed on its own (tests/fuzz/fuzz_rest_json.cc).
#pragma once

#include <string>

#include "backend.pb.h"

namespace dacpp::server {

// The /v1/depth JSON body → DepthRequest (LocalAI's defaults: no include_* flag → depth, confidence, pose, sky).
// Throws Error{InvalidArgument} for a malformed body.
backend::DepthRequest depth_request_from_json(const std::string& body);
std::string depth_response_to_json(const backend::DepthResponse& response);
// LocalAI's error body: {"error":{"code":<http>,"message":"...","type":""}}.
std::string error_to_json(int http_status, const std::string& message);

}  // namespace dacpp::server

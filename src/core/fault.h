// Fault injection (design.md §4.6): DACPP_FAULT=<site>[:<n>][,<site>[:<n>]...] makes the n-th pass (1-based,
// default 1) through a named site fail. Sites are plain strings: "host.alloc", "device.alloc", "kernel.probe",
// "kernel.launch", "blas.call", "tma.encode", "dnnl.call", "cpu.bf16", "file.read", "file.mmap", "image.decode",
// "output.write", "png.deflate", "worker.crash". The environment is read once, lazily; tests may re-arm with
// fault::configure().
#pragma once

#include <string>

#include "core/error.h"

namespace dacpp::fault {

// True when this pass through `site` is the one configured to fail. Thread-safe. Counts passes only for
// configured sites, so an unconfigured process pays one relaxed load per call.
bool hit(const char* site);

// Replaces the configuration (same syntax as DACPP_FAULT) and resets every counter. Empty string disables.
void configure(const std::string& spec);

}  // namespace dacpp::fault

// Throws Error{code} with "injected fault at <site>: <what>" when the site fires.
#define DACPP_FAULT_POINT(site, code, ...)                                                        \
  do {                                                                                            \
    if (::dacpp::fault::hit(site))                                                                \
      DACPP_THROW(code, "injected fault at ", site, ": ", ##__VA_ARGS__);                         \
  } while (0)

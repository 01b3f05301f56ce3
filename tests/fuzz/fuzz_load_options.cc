// libFuzzer target: LoadModel's ModelOptions → model path and LoadSettings (server/load_settings.h). The input is
// split at '\n': line 1 is ModelPath, line 2 Model, line 3 ModelFile, every further line one Options entry
// ("key:value"). Parsed settings must be inside the documented ranges. Unknown keys warn on stderr: bench/fuzz.sh
// runs this target with -close_fd_mask=2.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "server/load_settings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  backend::ModelOptions o;
  size_t start = 0;
  for (int line = 0; start <= text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string s = text.substr(start, end - start);
    if (line == 0) o.set_modelpath(s);
    else if (line == 1) o.set_model(s);
    else if (line == 2) o.set_modelfile(s);
    else o.add_options(s);
    start = end + 1;
  }
  try {
    (void)dacpp::server::resolve_model_path(o);
  } catch (const dacpp::Error&) {
  }
  try {
    const dacpp::server::LoadSettings s = dacpp::server::parse_load_settings(o);
    const bool size_ok = s.run.size == 0 || (s.run.size >= 14 && s.run.size <= 8192);
    if (!size_ok || s.runner.threads < 0 || s.runner.threads > 4096) __builtin_trap();
  } catch (const dacpp::Error&) {
  }
  return 0;
}

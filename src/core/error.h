// dacpp::Error — the one exception type of the engine (design.md §4).
//
// Every failure is thrown as Error{code, message} at the point it is detected. The message names the operation,
// the tensor or file, the device and the underlying library's own text. Boundaries (CLI, C API, server) translate
// the code; nothing inside swallows it.
#pragma once

#include <exception>
#include <sstream>
#include <string>
#include <utility>

namespace dacpp {

// Closed set of error codes. Stable: the C API, the CLI exit codes and the server's status tags map from these.
enum class ErrorCode {
  InvalidArgument,  // a caller-supplied value is out of range or malformed (flags, sizes, requests)
  InvalidModel,     // a model file or checkpoint is corrupt, incomplete or of the wrong family
  Unsupported,      // a well-formed request the model or build cannot serve (pose on a mono model, no CUDA)
  NotFound,         // a named file, tensor or key does not exist
  OutOfMemory,      // host or device allocation failed
  Backend,          // a compute library or device reported an error (oneDNN, CUDA, cuBLAS)
  Io,               // reading or writing a file or stream failed
  Internal,         // an internal invariant broke: a bug in dacpp
};

// "InvalidArgument", "InvalidModel", ... — the code's stable name.
const char* error_code_name(ErrorCode code);
// "E_INVALID_ARGUMENT", "E_INVALID_MODEL", ... — the tag used by the server and logs.
const char* error_code_tag(ErrorCode code);
// The CLI exit code for an error code: 2 usage/argument, 3 invalid input, 4 unsupported, 5 backend, 6 OOM, 1 other.
int error_code_exit_status(ErrorCode code);

class Error : public std::exception {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  ErrorCode code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

namespace detail {
template <typename... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace detail

// Concatenates its arguments with operator<< into one string.
template <typename... Args>
std::string str_cat(Args&&... args) {
  return detail::str_cat(std::forward<Args>(args)...);
}

}  // namespace dacpp

// Throws dacpp::Error{code, message...} — the message parts are streamed together.
#define DACPP_THROW(code, ...) throw ::dacpp::Error((code), ::dacpp::str_cat(__VA_ARGS__))

// If `cond` is false, throws dacpp::Error{code, message...}. Never aborts. Use for anything input can reach.
#define DACPP_CHECK(cond, code, ...)    \
  do {                                  \
    if (!(cond)) DACPP_THROW(code, __VA_ARGS__); \
  } while (0)

// Internal invariant: throws Error{Internal} naming the file and line. Never aborts.
#define DACPP_ASSERT(cond, ...)                                                                          \
  do {                                                                                                   \
    if (!(cond))                                                                                         \
      DACPP_THROW(::dacpp::ErrorCode::Internal, "internal check failed: ", #cond, " at ", __FILE__, ":", \
                  __LINE__, " ", ##__VA_ARGS__);                                                         \
  } while (0)

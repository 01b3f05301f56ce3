// The log sink: line-buffered stderr, one line per message, level from DACPP_LOG (error|warn|info|debug;
// default warn). This is the only process-wide hook besides fault injection (style.md rule 7).
#pragma once

#include <string>

#include "core/error.h"

namespace dacpp::log {

enum class Level { Error = 0, Warn = 1, Info = 2, Debug = 3 };

bool enabled(Level level);
// Writes "dacpp: <level>: <message>\n" to stderr in a single write.
void write(Level level, const std::string& message);
// Overrides DACPP_LOG (tests, CLI -v).
void set_level(Level level);

template <typename... Args>
void error(Args&&... a) { if (enabled(Level::Error)) write(Level::Error, str_cat(std::forward<Args>(a)...)); }
template <typename... Args>
void warn(Args&&... a) { if (enabled(Level::Warn)) write(Level::Warn, str_cat(std::forward<Args>(a)...)); }
template <typename... Args>
void info(Args&&... a) { if (enabled(Level::Info)) write(Level::Info, str_cat(std::forward<Args>(a)...)); }
template <typename... Args>
void debug(Args&&... a) { if (enabled(Level::Debug)) write(Level::Debug, str_cat(std::forward<Args>(a)...)); }

}  // namespace dacpp::log

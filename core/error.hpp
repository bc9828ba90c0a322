#pragma once
// The one exception type of core: a message a person can act on, in one line.
#include <stdexcept>
#include <string>

namespace attnlab {

/// Thrown by core for every user-facing failure (bad file, bad argument, GPU unavailable).
/// `what()` is one line, naming the problem and, where it helps, what to do about it.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

} // namespace attnlab

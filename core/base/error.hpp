#pragma once
// The one exception type of core: a message a person can act on, in one line.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attnlab {

/// `text` with line breaks and other control characters shown as escapes (\n, \r, \t, \xNN),
/// so that a file name, an argument or a decoder's reason quoted in a message cannot break it
/// into several lines or send codes to the terminal. Bytes from 0x80 up (UTF-8) are kept.
inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (u >= 0x20 && u != 0x7f) out += ch;
    else if (ch == '\n') out += "\\n";
    else if (ch == '\r') out += "\\r";
    else if (ch == '\t') out += "\\t";
    else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    }
  }
  return out;
}

/// Thrown by core for every user-facing failure (bad file, bad argument, GPU unavailable).
/// `what()` is one line (see one_line()), naming the problem and, where it helps, what to do
/// about it. Only with_log() adds further lines: a tool's own log, such as a shader compiler's.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(one_line(message)) {}

  /// The one-line `message`, then `log` as it is (on the following lines).
  static Error with_log(const std::string& message, const std::string& log) { return Error(Raw{}, one_line(message) + "\n" + log); }

 private:
  struct Raw {};
  Error(Raw, const std::string& text) : std::runtime_error(text) {}
};

} // namespace attnlab

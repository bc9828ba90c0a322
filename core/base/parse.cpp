#include "core/base/parse.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <charconv>
#include <cmath>

namespace attnlab {

int parse_int(std::string_view text, std::string_view what, int lo, int hi) {
  int v = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end)
    // TRANSLATORS: %1$s names the value, often a command-line flag ("--layer"); %2$s is the text given.
    throw Error(text_format(_("%s must be a whole number, got '%s'"), std::string(what).c_str(), std::string(text).c_str()));
  if (v < lo || v > hi)
    // TRANSLATORS: %1$s names the value, often a command-line flag ("--layer"); then the range and the value given.
    throw Error(text_format(_("%s must be between %d and %d, got %d"), std::string(what).c_str(), lo, hi, v));
  return v;
}

float parse_float(std::string_view text, std::string_view what, float lo, float hi) {
  float v = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end || !std::isfinite(v))
    // TRANSLATORS: %1$s names the value, often a command-line flag ("--fps"); %2$s is the text given.
    throw Error(text_format(_("%s must be a number, got '%s'"), std::string(what).c_str(), std::string(text).c_str()));
  if (v < lo || v > hi)
    // TRANSLATORS: %1$s names the value, often a command-line flag ("--fps"); then the range (numbers) and the text given.
    throw Error(text_format(_("%s must be between %s and %s, got %s"), std::string(what).c_str(), format_float(lo).c_str(),
                            format_float(hi).c_str(), std::string(text).c_str()));
  return v;
}

std::array<int, 2> parse_cell(std::string_view text, std::string_view what) {
  const auto comma = text.find(',');
  if (comma == std::string_view::npos)
    // TRANSLATORS: %1$s names the value, often a command-line flag ("--query"); COL,ROW is the syntax asked for
    // (a column and a row of the patch grid); %2$s is the text given.
    throw Error(text_format(_("%s must be COL,ROW (two whole numbers), got '%s'"), std::string(what).c_str(),
                            std::string(text).c_str()));
  const std::string w(what);
  // TRANSLATORS: the column of a patch given as COL,ROW; %s names the value, often a flag ("--query column").
  return {parse_int(text.substr(0, comma), text_format(_("%s column"), w.c_str()), 0, 1 << 30),
          // TRANSLATORS: the row of a patch given as COL,ROW; %s names the value, often a flag ("--query row").
          parse_int(text.substr(comma + 1), text_format(_("%s row"), w.c_str()), 0, 1 << 30)};
}

std::vector<std::array<int, 2>> parse_cells(std::string_view text, std::string_view what) {
  std::vector<std::array<int, 2>> out;
  while (!text.empty()) {
    const auto semi = text.find(';');
    const auto part = text.substr(0, semi);
    if (!part.empty()) out.push_back(parse_cell(part, what));
    if (semi == std::string_view::npos) break;
    text.remove_prefix(semi + 1);
  }
  return out;
}

std::string format_float(float value) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, p) : std::string("nan");
}

std::string rows_csv(const float* values, std::ptrdiff_t rows, std::ptrdiff_t cols) {
  std::string out;
  for (std::ptrdiff_t r = 0; r < rows; ++r) {
    for (std::ptrdiff_t c = 0; c < cols; ++c) out += (c ? "," : "") + format_float(values[r * cols + c]);
    out += '\n';
  }
  return out;
}

} // namespace attnlab

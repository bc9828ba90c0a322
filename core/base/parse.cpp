#include "core/base/parse.hpp"

#include "core/base/error.hpp"

#include <charconv>
#include <cmath>

namespace attnlab {

int parse_int(std::string_view text, std::string_view what, int lo, int hi) {
  int v = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end)
    throw Error(std::string(what) + " must be a whole number, got '" + std::string(text) + "'");
  if (v < lo || v > hi)
    throw Error(std::string(what) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                ", got " + std::to_string(v));
  return v;
}

float parse_float(std::string_view text, std::string_view what, float lo, float hi) {
  float v = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end || !std::isfinite(v))
    throw Error(std::string(what) + " must be a number, got '" + std::string(text) + "'");
  if (v < lo || v > hi)
    throw Error(std::string(what) + " must be between " + format_float(lo) + " and " + format_float(hi) +
                ", got " + std::string(text));
  return v;
}

std::array<int, 2> parse_cell(std::string_view text, std::string_view what) {
  const auto comma = text.find(',');
  if (comma == std::string_view::npos)
    throw Error(std::string(what) + " must be COL,ROW (two whole numbers), got '" + std::string(text) + "'");
  const std::string w(what);
  return {parse_int(text.substr(0, comma), w + " column", 0, 1 << 30),
          parse_int(text.substr(comma + 1), w + " row", 0, 1 << 30)};
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

#pragma once
// Strict parsing of numbers and patch coordinates from text (command line, JSON, UI fields).
// Every function throws attnlab::Error naming `what` and the accepted range.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

int parse_int(std::string_view text, std::string_view what, int lo, int hi);
float parse_float(std::string_view text, std::string_view what, float lo, float hi);
/// "COL,ROW" → {col,row}, both >= 0 (range against a grid is checked by the caller).
std::array<int, 2> parse_cell(std::string_view text, std::string_view what);
/// "C1,R1;C2,R2;…" (empty text gives an empty list).
std::vector<std::array<int, 2>> parse_cells(std::string_view text, std::string_view what);
/// Shortest text that reads back to the same float.
std::string format_float(float value);
/// `rows` × `cols` floats stored row after row as CSV: one line per row, each value as
/// format_float() writes it (`vit --distance`, `--receptive-field`, `explain --receptive-field`).
std::string rows_csv(const float* values, std::ptrdiff_t rows, std::ptrdiff_t cols);

} // namespace attnlab

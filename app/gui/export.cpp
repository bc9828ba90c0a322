#include "app/gui/export.hpp"

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/image.hpp"

#include <algorithm>
#include <ctime>
#include <numeric>

namespace attnlab::app {

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

nlohmann::json sidecar_json(const AppState& state, Backend& backend, const ViewGeometry& view, int width, int height) {
  nlohmann::json j = to_json(state);
  j["program"] = {{"name", "attnlab"}, {"version", ATTNLAB_VERSION}};
  j["backend"] = backend.name();
  j["window"] = {{"width", width}, {"height", height}};
  if (view.valid) j["image_view"] = {{"x", view.x}, {"y", view.y}, {"scale", view.scale}};
  j["banner"] = state.banner;
  j["widgets"] = state.widget_rects;
  j["view_errors"] = state.view_errors;
  if (!backend.has_image()) return j;
  const auto& g = backend.grid();
  j["image_size"] = {{"width", backend.image().width}, {"height", backend.image().height}};
  j["grid"] = {{"cols", g.cols}, {"rows", g.rows}, {"N", g.N()}, {"K", g.K}};
  const int i = g.index(state.query.col, state.query.row);
  j["query_index"] = i;
  const RowSet& rows = backend.rows();
  const auto row = rows.head(state.main_head);
  std::vector<int> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t top = std::min<size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                    [&](int a, int b) { return row[static_cast<size_t>(a)] > row[static_cast<size_t>(b)]; });
  nlohmann::json largest = nlohmann::json::array();
  for (size_t n = 0; n < top; ++n) {
    const int k = order[n];
    largest.push_back({{"col", g.col_of(k)}, {"row", g.row_of(k)}, {"weight", row[static_cast<size_t>(k)]}});
  }
  const auto [mn, mx] = std::minmax_element(row.begin(), row.end());
  j["row"] = {{"head", std::string(head_name(static_cast<HeadKind>(state.main_head)))},
              {"min", *mn},
              {"max", *mx},
              {"empty", rows.empty[state.main_head]},
              {"largest", largest}};
  return j;
}

std::filesystem::path export_window(const AppState& state, Backend& backend, const ViewGeometry& view, int width,
                                    int height) {
  if (width <= 0 || height <= 0) throw Error("the window has no size to export");
  std::vector<std::uint8_t> px(static_cast<size_t>(width) * height * 4);
  GLint align = 0;
  glGetIntegerv(GL_PACK_ALIGNMENT, &align);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  glPixelStorei(GL_PACK_ALIGNMENT, align);
  std::vector<std::uint8_t> rgb(static_cast<size_t>(width) * height * 3);  // flip rows: GL starts at the bottom
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[(static_cast<size_t>(y) * width + x) * 3 + c] = px[(static_cast<size_t>(height - 1 - y) * width + x) * 4 + c];
  const auto stem = next_free_stem(state.export_dir, "attnlab-" + timestamp(), {".png", ".json"});
  const std::filesystem::path png = stem.string() + ".png", json = stem.string() + ".json";
  const std::string text = sidecar_json(state, backend, view, width, height).dump(2) + "\n";
  write_png(png, width, height, 3, rgb);
  try {
    write_file_safely(json, text);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(png, ec);  // a PNG without its settings is not an export
    throw;
  }
  return png;
}

std::filesystem::path export_row_csv(const AppState& state, Backend& backend) {
  if (!backend.has_image()) throw Error("no image loaded");
  const auto& g = backend.grid();
  const auto row = backend.rows().head(state.main_head);
  const std::string csv = grid_csv(row, g);
  const auto stem = next_free_stem(state.export_dir,
                                   "attnlab-row-" + std::to_string(state.query.col) + "-" + std::to_string(state.query.row) + "-" +
                                       std::string(head_name(static_cast<HeadKind>(state.main_head))),
                                   {".csv"});
  const std::filesystem::path path = stem.string() + ".csv";
  write_file_safely(path, csv);
  return path;
}

}  // namespace attnlab::app

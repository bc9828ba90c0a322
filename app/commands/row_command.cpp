#include "app/commands/row_command.hpp"

#include "app/commands/options.hpp"

#include "core/base/error.hpp"
#include "core/io/files.hpp"
#include "core/gpu/context.hpp"
#include "core/gpu/hand_made_gpu_engine.hpp"
#include "core/hand_made/reference.hpp"

#include <cstdio>
#include <memory>
#include <utility>

namespace attnlab::app {

namespace {

// The row for the options: on the GPU engine, or the CPU reference when no GPU context can
// be made (said on stderr). Returns weights (N) and the grid.
std::pair<std::vector<float>, PatchGrid> compute_row(const Document& d) {
  const Image image = load_image(d.image_path);
  Settings settings = d.attention;
  const ModelSetup probe = make_setup(image.width, image.height, settings);  // validates K, settings
  const int i = token_at(probe.grid, d.hand_made.cell.col, d.hand_made.cell.row);
  settings.mask.painted = painted_indices(d.painted_cells, probe.grid);
  const int h = d.hand_made.head.head;
  std::unique_ptr<HeadlessContext> context;
  try {
    context = std::make_unique<HeadlessContext>();
  } catch (const Error& e) {
    std::fprintf(stderr, "attnlab: GPU unavailable (%s); using the CPU reference\n", e.what());
  }
  if (context) {
    HandMadeGpuEngine engine(image, settings);
    const RowSet& rows = engine.rows(i);
    const auto w = rows.head(h);
    if (rows.empty[h]) std::fprintf(stderr, "attnlab: every key is masked for this query; the row is all 0\n");
    return {std::vector<float>(w.begin(), w.end()), engine.grid()};
  }
  const Reference ref(image, settings);
  const RowResult r = ref.row(h, i);
  if (r.empty) std::fprintf(stderr, "attnlab: every key is masked for this query; the row is all 0\n");
  return {std::vector<float>(r.weights.data(), r.weights.data() + r.weights.size()), ref.grid()};
}

}  // namespace

int run_row(const std::vector<std::string>& args) {
  const Document d = parse_query_options(args, kFlagsRow, {}, nullptr);
  const auto [w, grid] = compute_row(d);
  const std::string out = grid_csv(w, grid);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace attnlab::app

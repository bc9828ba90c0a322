#include "app/commands/row_command.hpp"

#include "app/commands/options.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/gpu/context.hpp"
#include "core/gpu/hand_made_gpu_engine.hpp"
#include "core/hand_made/reference.hpp"

#include <cstdio>
#include <memory>
#include <utility>

namespace attnlab::app {

HandMadeRows::HandMadeRows() = default;
HandMadeRows::~HandMadeRows() = default;

void HandMadeRows::set_image(const Image& image) {
  image_ = image;
  image_uploaded_ = false;
}

std::string HandMadeRows::backend() const {
  return context_ ? "GPU (" + context_->info().renderer + ")" : "CPU reference (Eigen)";
}

HandMadeRow HandMadeRows::row(const Document& d) {
  if (image_.empty()) throw Error(_("no image for the hand-made heads"));
  Settings settings = d.attention;
  const ModelSetup probe = make_setup(image_.width, image_.height, settings);  // validates K, settings
  const int i = token_at(probe.grid, d.hand_made.cell.col, d.hand_made.cell.row);
  settings.mask.painted = painted_indices(d.painted_cells, probe.grid);
  const int h = d.hand_made.head.head;
  if (!context_tried_) {  // after the checks above: a bad argument is one line, without this one
    context_tried_ = true;
    try {
      context_ = std::make_unique<HeadlessContext>();
    } catch (const Error& e) {
      // TRANSLATORS: why no GPU context could be made.
      std::fprintf(stderr, _("attnlab: GPU unavailable (%s); using the CPU reference\n"), e.what());
    }
  }
  if (!context_) {
    const Reference ref(image_, settings);
    const RowResult r = ref.row(h, i);
    return {std::vector<float>(r.weights.data(), r.weights.data() + r.weights.size()), ref.grid(), r.empty};
  }
  if (engine_ && !image_uploaded_) {
    try {
      engine_->set_image(image_);
    } catch (const Error&) {  // the engine's settings do not fit the new image (the new ones do): start again
      engine_.reset();
    }
  }
  if (!engine_) engine_ = std::make_unique<HandMadeGpuEngine>(image_, settings);
  image_uploaded_ = true;
  if (engine_->settings() != settings) engine_->set_settings(settings);
  const RowSet& rows = engine_->rows(i);
  const auto w = rows.head(h);
  return {std::vector<float>(w.begin(), w.end()), engine_->grid(), rows.empty[static_cast<std::size_t>(h)]};
}

int run_row(const std::vector<std::string>& args) {
  const Document d = parse_query_options(args, kFlagsRow);
  HandMadeRows rows;
  rows.set_image(load_image(d.image_path));
  const HandMadeRow row = rows.row(d);
  if (row.empty) std::fputs(_("attnlab: every key is masked for this query; the row is all 0\n"), stderr);
  const std::string out = grid_csv(row.weights, row.grid);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace attnlab::app

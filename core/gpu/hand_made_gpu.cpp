#include "core/gpu/hand_made_gpu.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/gpu/context.hpp"

namespace attnlab {

GpuHandMade::GpuHandMade() : renderer_(check_compute_support().renderer) {}

// The settings are checked against the new image, not the one held (HandMadeGpuEngine::set_image).
void GpuHandMade::set_image(const Image& image, const Settings& settings) { engine_.set_image(image, settings); }

void GpuHandMade::set_settings(const Settings& settings) {
  if (!engine_.has_image()) throw Error(_("no image loaded"));
  engine_.set_settings(settings);
}

int GpuHandMade::N() const {
  if (!engine_.has_image()) throw Error(_("no image loaded"));
  return engine_.N();
}

RowSet GpuHandMade::rows(int query) { return engine_.rows(query); }  // throws outside the grid

void GpuHandMade::prepare_rows(int query) { engine_.dispatch_rows(query); }

// HandMadeGpuEngine::rows_ready() is false with no image.
bool GpuHandMade::rows_ready(int query) { return engine_.rows_ready(query); }

}  // namespace attnlab

// A build without cairo (Windows): `lesson slides` writes PNG pages into a folder instead.
#include "app/gui/output/slides_pdf.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

namespace attnlab::app {

bool can_write_pdf() { return false; }

void write_slides_pdf(const std::vector<SlidePage>&, const std::filesystem::path&, bool) {
  throw Error(_("this build of attnlab writes no PDF (it has no cairo): give --out a folder for PNG slides"));
}

}  // namespace attnlab::app

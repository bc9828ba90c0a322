// PDF slides through cairo's PDF surface (app/gui/output/slides_pdf.hpp).
#include "app/gui/output/slides_pdf.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"

#include <cairo-pdf.h>
#include <cairo.h>

#include <memory>

namespace attnlab::app {

bool can_write_pdf() { return true; }

void write_slides_pdf(const std::vector<SlidePage>& pages, const std::filesystem::path& path, bool overwrite) {
  if (pages.empty()) throw Error(text_format(_("no slides to write into '%s'"), platform::utf8(path).c_str()));
  const std::filesystem::path temp = temp_file_beside(path, overwrite);
  const auto fail = [&](const std::string& why) {
    std::error_code ec;
    std::filesystem::remove(temp, ec);
    // TRANSLATORS: the PDF file, then cairo's reason (English).
    throw Error(text_format(_("cannot write '%s' (%s)"), platform::utf8(path).c_str(), why.c_str()));
  };
  // A pixel a point: a whole number of points each way, so that a viewer (poppler's pdftoppm at
  // -r 72) maps the picture onto its own pixels without resampling it.
  constexpr double kPointsPerPixel = 1.0;
  cairo_surface_t* pdf = cairo_pdf_surface_create(platform::utf8(temp).c_str(), pages[0].width * kPointsPerPixel,
                                                  pages[0].height * kPointsPerPixel);
  if (cairo_surface_status(pdf) != CAIRO_STATUS_SUCCESS) {
    const std::string why = cairo_status_to_string(cairo_surface_status(pdf));
    cairo_surface_destroy(pdf);
    fail(why);
  }
  cairo_pdf_surface_set_metadata(pdf, CAIRO_PDF_METADATA_CREATOR, "attnlab " ATTNLAB_VERSION);
  cairo_t* cr = cairo_create(pdf);
  for (const SlidePage& page : pages) {
    cairo_pdf_surface_set_size(pdf, page.width * kPointsPerPixel, page.height * kPointsPerPixel);
    // The picture as cairo's RGB24 (a 32-bit word a pixel, 0x00RRGGBB in native order).
    cairo_surface_t* image = cairo_image_surface_create(CAIRO_FORMAT_RGB24, page.width, page.height);
    cairo_surface_flush(image);
    unsigned char* data = cairo_image_surface_get_data(image);
    const int stride = cairo_image_surface_get_stride(image);
    for (int y = 0; y < page.height; ++y) {
      auto* row = reinterpret_cast<std::uint32_t*>(data + static_cast<std::ptrdiff_t>(y) * stride);
      const std::uint8_t* src = page.rgb.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(page.width) * 3;
      for (int x = 0; x < page.width; ++x, src += 3)
        row[x] = (std::uint32_t{src[0]} << 16) | (std::uint32_t{src[1]} << 8) | std::uint32_t{src[2]};
    }
    cairo_surface_mark_dirty(image);
    cairo_save(cr);
    cairo_scale(cr, kPointsPerPixel, kPointsPerPixel);
    cairo_set_source_surface(cr, image, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(image);
    cairo_show_page(cr);
  }
  cairo_destroy(cr);
  cairo_surface_finish(pdf);
  const cairo_status_t status = cairo_surface_status(pdf);
  cairo_surface_destroy(pdf);
  if (status != CAIRO_STATUS_SUCCESS) fail(cairo_status_to_string(status));
  publish_file(temp, path, overwrite);
}

}  // namespace attnlab::app

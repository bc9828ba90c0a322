#pragma once
// A lesson's slides as one PDF, a page a slide (`attnlab lesson slides L.attnlab --out L.pdf`).
#include <cstdint>
#include <filesystem>
#include <vector>

namespace attnlab::app {

/// One page: an 8-bit RGB picture, rows from the top.
struct SlidePage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  ///< width × height × 3 bytes
};

/// Whether this build writes PDF (cairo's PDF surface; the Windows build has no cairo).
bool can_write_pdf();

/// Writes `pages` as a PDF at `path`, each page the picture at a pixel a point (a page of W × H
/// pixels is W × H points, so `pdftoppm -r 72` draws it back at its own size, pixel for pixel),
/// whole through a temporary beside it (core/io/files.hpp: replaced only with `overwrite`).
/// Throws Error naming the path; in a build without cairo, Error saying so.
void write_slides_pdf(const std::vector<SlidePage>& pages, const std::filesystem::path& path, bool overwrite);

}  // namespace attnlab::app

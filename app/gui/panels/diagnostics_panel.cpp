// The Diagnostics panel: what a developer or a curious student wants to know and a class does
// not need on the map. The OpenGL driver and versions, the frame and row-pass times, the
// engine's row checked live against the CPU reference (Eigen), and what the teaching views
// checked against their own arithmetic.
#include "app/gui/panels/panels.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/sessions/vit_session.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/translate.hpp"

#include "core/hand_made/reference.hpp"

#include <epoxy/gl.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

namespace attnlab::app {
namespace {

std::string gl_string(GLenum name) {
  const auto* s = reinterpret_cast<const char*>(glGetString(name));
  return s ? s : "?";
}

}  // namespace

void draw_diagnostics_panel(AppState& state, HandMadeSession& hand_made, const VitSession& vit, EngineRowCheck& check) {
  text_wrapped(_("Attention engine: %s"), hand_made.name().c_str());
  if (!hand_made.fallback_reason().empty()) text_wrapped(_("GPU path not used: %s"), hand_made.fallback_reason().c_str());
  // TRANSLATORS: the OpenGL version, the graphics renderer (the driver's name for the GPU) and the shading language's version.
  text_wrapped(_("OpenGL %s; renderer %s; GLSL %s"), gl_string(GL_VERSION).c_str(), gl_string(GL_RENDERER).c_str(),
                     gl_string(GL_SHADING_LANGUAGE_VERSION).c_str());
  // Wrapped: the panel may be a third of a 1024 px screen.
  // TRANSLATORS: the last frame's time and the row pass's (the GPU computing every head's attention row), in milliseconds.
  text_wrapped(_("frame %s ms   row pass %s ms (every head's row, read back)"), format_number(state.report.last_frame_ms, 3).c_str(),
                     format_number(state.report.row_pass_ms, 3).c_str());
  auto kib = [](std::uint64_t b) { return format_number(static_cast<double>(b) / 1024.0, 3); };
  // TRANSLATORS: the data moved between the GPU and the CPU in the last frame: read-backs (GPU to CPU) and uploads (CPU to GPU).
  text_wrapped(_("last frame: %llu read-backs (%s KiB, %llu waited for the GPU), %llu uploads (%s KiB)"),
              static_cast<unsigned long long>(state.report.frame_readbacks), kib(state.report.frame_readback_bytes).c_str(),
              static_cast<unsigned long long>(state.report.frame_readbacks_waited), static_cast<unsigned long long>(state.report.frame_uploads),
              kib(state.report.frame_upload_bytes).c_str());
  record_widget("diagnostics:transfers");
  record_widget("diagnostics:timing");
  // A ViT's forward pass: auto, the faster of the GPU engine and the CPU path as measured on
  // the first pass of each (the CPU path on a software rasterizer), or either by choice;
  // changing it runs the loaded model again.
  // TRANSLATORS: followed by the runner's choices: auto, gpu, cpu (they stay: the --backend flag's values).
  ImGui::TextUnformatted(_("ViT forward pass:"));
  for (const VitBackend b : {VitBackend::Auto, VitBackend::Gpu, VitBackend::Cpu}) {
    // On the same line while it fits (a narrow panel: the next line).
    const float w = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(vit_backend_name(b)).x;
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < w) ImGui::NewLine();
    if (ImGui::RadioButton(vit_backend_name(b), state.vit_backend == b)) state.vit_backend = b;
    record_widget(std::string("diagnostics:vit_backend:") + vit_backend_name(b));
  }
  if (const VitRun* src = vit.run()) {
    // Auto's both times and its choice ("auto: cpu 71 ms, gpu 286 ms → cpu").
    const std::string why = vit.backend_why();
    // TRANSLATORS: where the ViT's last forward pass ran (cpu or gpu) and why it was chosen.
    text_wrapped(_("last ran on: %s (%s)"), src->path().c_str(), why.c_str());
    record_widget("diagnostics:vit_backend_why");
  }

  if (hand_made.has_image()) {
    const unsigned generation = hand_made.generation();
    const EngineRowCheck::Made& made = check.reference.get(generation, [&](EngineRowCheck::Made& m) {
      m = {};
      try {
        m.reference = std::make_unique<Reference>(hand_made.image(), hand_made.settings());
      } catch (const std::exception& e) {
        m.error = e.what();
      }
    });
    // The rows the CPU has (a new query's arrive the frame after, HandMadeSession::latest_rows),
    // checked against the reference's row for their own query; again once the current query's arrive.
    const RowSet& rows = hand_made.latest_rows(hand_made_query(state, hand_made.grid()));
    const double max_diff = !made.reference ? -1.0 : check.max_diff.get({generation, rows.query}, [&] {
      double diff = 0;
      for (int h = 0; h < kHeadCount; ++h) {
        const RowResult ref = made.reference->row(h, rows.query);
        const auto got = rows.head(h);
        for (size_t j = 0; j < got.size(); ++j)
          diff = std::max(diff, std::abs(static_cast<double>(got[j]) - ref.weights[static_cast<Eigen::Index>(j)]));
      }
      return diff;
    });
    char d[32];
    std::snprintf(d, sizeof d, "%.2g", max_diff);
    // i18n: English (the check's name and result go into the exported report's JSON, export.cpp)
    state.report.checks["engine: the query's row, every head, vs the CPU reference (Eigen)"] =
        made.error.empty() ? "largest difference " + std::string(d) + " (query " + std::to_string(rows.query) + ")"
                           : "not checked: " + made.error;
  }
  ImGui::Separator();
  ImGui::TextUnformatted(_("Checks (largest absolute difference in any weight)"));
  for (const auto& [name, result] : state.report.checks) {
    ImGui::Bullet();
    text_wrapped("%s: %s", name.c_str(), result.c_str());
  }
  record_widget("diagnostics:checks");
}

}  // namespace attnlab::app

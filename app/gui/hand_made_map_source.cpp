// The chapter's hand-made heads as a MapSource (map_source.hpp): Backend's model, the
// document's query, main head and pinned cells. The current query's maps are the engine's
// colormap pass over its rows (Backend::heatmap), another query's the same pass into a texture
// of its own (heatmap_for); the numbers the CPU shows arrive the frame after, from a fence.
#include "app/gui/backend.hpp"
#include "app/gui/map_source.hpp"
#include "app/gui/views.hpp"
#include "app/gui/widget_log.hpp"

#include <algorithm>

namespace attnlab::app {

bool HandMadeMapSource::ready() const { return backend_.has_image(); }

SourceGrid HandMadeMapSource::grid() const {
  const PatchGrid& g = backend_.grid();
  return SourceGrid{.cols = g.cols,
                    .rows = g.rows,
                    .prefix = 0,
                    .covered_w = static_cast<double>(g.cols) * g.K,
                    .covered_h = static_cast<double>(g.rows) * g.K};
}

int HandMadeMapSource::heads() const { return kHeadCount; }

std::string HandMadeMapSource::head_label(HeadChoice head) const {
  return std::string(head_name(static_cast<HeadKind>(std::clamp(head.head, 0, kHeadCount - 1))));
}

std::string HandMadeMapSource::map_tooltip(int, int head) const {
  return std::string(head_summary(static_cast<HeadKind>(std::clamp(head, 0, kHeadCount - 1))));
}

int HandMadeMapSource::query() const { return backend_.query(); }

void HandMadeMapSource::choose(int, int head) { state_.main_head = head; }

void HandMadeMapSource::choose_query(Cell cell) {
  state_.query = cell;
  state_.query_pinned = true;
}

void HandMadeMapSource::draw_photo(ImDrawList* dl, ImVec2 origin, float scale) { app::draw_photo(dl, backend_, origin, scale); }

ImTextureID HandMadeMapSource::map(int, HeadChoice head, int query) {
  const HeatmapStyle style{state_.colormap, state_.normalization};
  if (query == backend_.query()) return backend_.heatmap(head.head, style);
  return backend_.heatmap_for(query, head.head, style);
}

std::optional<float> HandMadeMapSource::map_max(int, HeadChoice head, int query) {
  if (query != backend_.query()) return backend_.heatmap_for_max(query);
  // While the pointer moves, the previous query's rows until the new ones have arrived (a frame
  // later): the number lags the map by a frame rather than blinking.
  const RowSet& rows = backend_.rows();
  const auto row = rows.head(head.head);
  return row.empty() ? 0.0f : *std::max_element(row.begin(), row.end());
}

void HandMadeMapSource::keep_pinned(const std::vector<int>& queries) { backend_.keep_pinned(queries); }

// The custom head: s_ij = c_i^T W_q^T W_k c_j (eq. 26.24); its two 3 × 3 matrices, edited here.
void HandMadeMapSource::draw_head_settings() {
  ImGui::Separator();
  ImGui::TextUnformatted("custom head: s_ij = c_i^T W_q^T W_k c_j (eq. 26.24), c = unit mean colour");
  auto edit = [&](const char* label, std::array<float, 9>& W) {
    ImGui::PushID(label);
    ImGui::Text("%s", label);
    for (int r = 0; r < 3; ++r) {
      ImGui::PushID(r);
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
      ImGui::DragFloat3("", &W[static_cast<size_t>(r) * 3], 0.02f, -4.0f, 4.0f, "%.2f");
      record_widget(std::string(label) + ":" + std::to_string(r));
      ImGui::PopID();
    }
    ImGui::PopID();
  };
  ImGui::BeginGroup();
  edit("W_q", state_.attention.custom.W_q);
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  edit("W_k", state_.attention.custom.W_k);
  ImGui::EndGroup();
  if (ImGui::Button("identity (= colour head)")) state_.attention.custom = CustomHead{};
  record_widget("custom_identity");
  ImGui::SameLine();
  if (ImGui::Button("only red/green")) {
    state_.attention.custom = CustomHead{};
    state_.attention.custom.W_q[8] = state_.attention.custom.W_k[8] = 0.0f;
  }
  record_widget("custom_red_green");
}

}  // namespace attnlab::app

// Pieces of the hand-made heads' pictures that several views draw: the photo under a map, a
// map as a thumbnail (the chapter's views), the rectangle a "map only" export keeps.
#include "app/gui/maps/map_pictures.hpp"
#include "core/hand_made/hand_made_source.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::app {
void draw_photo(ImDrawList* dl, HandMadeSession& hand_made, ImVec2 origin, float scale) {
  const PatchGrid& g = hand_made.grid();
  const float W = static_cast<float>(hand_made.image().width), H = static_cast<float>(hand_made.image().height);
  const float w = std::min(W, static_cast<float>(g.cols * g.K)), h = std::min(H, static_cast<float>(g.rows * g.K));
  dl->AddImage(hand_made.photo(), origin, ImVec2(origin.x + w * scale, origin.y + h * scale), ImVec2(0, 0), ImVec2(w / W, h / H));
  // Padding (the last row and column past the image, in pad mode) shows black; only those
  // strips are filled, not the whole grid under the photo (one layer less to rasterize).
  const float gw = static_cast<float>(g.cols * g.K), gh = static_cast<float>(g.rows * g.K);
  if (gw > w) dl->AddRectFilled(ImVec2(origin.x + w * scale, origin.y), ImVec2(origin.x + gw * scale, origin.y + gh * scale), IM_COL32(0, 0, 0, 255));
  if (gh > h) dl->AddRectFilled(ImVec2(origin.x, origin.y + h * scale), ImVec2(origin.x + w * scale, origin.y + gh * scale), IM_COL32(0, 0, 0, 255));
}

bool draw_map_thumbnail(const char* id, const SourceGrid& grid, const std::function<void(ImDrawList*, ImVec2, float)>& photo,
                        const std::function<ImTextureID()>& heat, const AppState& state, ImVec2 size,
                        const std::vector<Cell>& outlines, bool selected, float min_opacity) {
  const float cw = static_cast<float>(grid.covered_w), ch = static_cast<float>(grid.covered_h);
  const float scale = std::min(size.x / cw, size.y / ch);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const bool clicked = ImGui::InvisibleButton(id, ImVec2(cw * scale, ch * scale));
  if (!ImGui::IsItemVisible()) return clicked;  // scrolled away: no texture made
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto at = [&](float x, float y) { return ImVec2(p.x + x * scale, p.y + y * scale); };
  photo(dl, p, scale);
  const ImTextureID texture = heat();
  set_texture_filter(texture, state.bilinear);
  dl->AddImage(texture, at(0, 0), at(cw, ch), ImVec2(0, 0), ImVec2(1, 1),
               IM_COL32(255, 255, 255, static_cast<int>(std::max(state.opacity, min_opacity) * 255)));
  const float pw = cw / static_cast<float>(grid.cols), ph = ch / static_cast<float>(grid.rows);  // a patch, photo pixels
  for (const Cell& c : outlines)
    dl->AddRect(at(static_cast<float>(c.col) * pw, static_cast<float>(c.row) * ph),
                at(static_cast<float>(c.col + 1) * pw, static_cast<float>(c.row + 1) * ph), IM_COL32(0, 255, 255, 255), 0, 0, 2.0f);
  if (selected) dl->AddRect(at(0, 0), at(cw, ch), IM_COL32(255, 255, 255, 255), 0, 0, 3.0f);
  if (ImGui::IsItemHovered()) dl->AddRect(at(0, 0), at(cw, ch), IM_COL32(255, 255, 255, 120), 0, 0, 1.0f);
  return clicked;
}

bool map_thumbnail(const char* id, HandMadeSession& hand_made, ImTextureID heat, const AppState& state, ImVec2 size,
                   const std::vector<Cell>& outlines, bool selected) {
  return draw_map_thumbnail(
      id, hand_made_source_grid(hand_made.grid()), [&](ImDrawList* dl, ImVec2 origin, float scale) { draw_photo(dl, hand_made, origin, scale); },
      [heat] { return heat; }, state, size, outlines, selected, 0.5f);
}

std::array<float, 4> map_picture(ImVec2 canvas0, ImVec2 canvas1, ImVec2 map0, ImVec2 map1, bool join_last_item) {
  const ImVec2 m0(std::max(map0.x, canvas0.x), std::max(map0.y, canvas0.y)), m1(std::min(map1.x, canvas1.x), std::min(map1.y, canvas1.y));
  const ImVec2 bar0 = join_last_item ? ImGui::GetItemRectMin() : m0, bar1 = join_last_item ? ImGui::GetItemRectMax() : m1;
  const float x0 = std::min(m0.x, bar0.x), y0 = std::min(m0.y, bar0.y), x1 = std::max(m1.x, bar1.x), y1 = std::max(m1.y, bar1.y);
  return {std::floor(x0), std::floor(y0), std::ceil(x1) - std::floor(x0), std::ceil(y1) - std::floor(y0)};
}

}  // namespace attnlab::app

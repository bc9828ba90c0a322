// Permutation (section 26.8, eqs. 26.29–26.31, fig. 26.15, exercise 12.3): shuffle the
// patches with a seeded permutation, run the same settings on the shuffled image, and compare
// the query's map after undoing the shuffle with the original map.
//
// Both images run on the CPU reference (core Reference, Eigen), so the difference shown is the
// one core's tests check and is not mixed with GPU rounding. Rows are cheap (N m' each); the
// output tokens T_out of both images cost N² m' each, so they run on the scheduler (a pool thread) and the
// readout says "computing" meanwhile. Grids with N > kMaxDemoTokens are refused with a message.
#include <imgui.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "app/gui/chapter/teaching_view.hpp"
#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "app/gui/state/memo.hpp"
#include "core/base/translate.hpp"
#include "core/hand_made/demos.hpp"

namespace attnlab::app {
namespace {

constexpr int kMaxDemoTokens = 4096;  // two CPU references and 2 N² m' for T_out stay well under a second

// The photo (or the shuffled photo) with a heat map over it and the query outlined; returns the
// patch under the mouse if it was clicked.
std::optional<int> map_panel(const char* id, ImTextureID photo, ImTextureID heat, const PatchGrid& g, int outline,
                             float side, float opacity) {
  const float grid_w = static_cast<float>(g.cols * g.K), grid_h = static_cast<float>(g.rows * g.K);
  const float scale = side / std::max(grid_w, grid_h);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const bool clicked = ImGui::InvisibleButton(id, ImVec2(grid_w * scale, grid_h * scale));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto at = [&](float x, float y) { return ImVec2(p.x + x * scale, p.y + y * scale); };
  dl->AddRectFilled(at(0, 0), at(grid_w, grid_h), IM_COL32(0, 0, 0, 255));
  if (photo) {  // only the part under the grid (crop drops the rest; pad leaves a black margin)
    const float w = std::min(static_cast<float>(g.image_width), grid_w),
                h = std::min(static_cast<float>(g.image_height), grid_h);
    dl->AddImage(photo, at(0, 0), at(w, h), ImVec2(0, 0),
                 ImVec2(w / static_cast<float>(g.image_width), h / static_cast<float>(g.image_height)));
  }
  dl->AddImage(heat, at(0, 0), at(grid_w, grid_h), ImVec2(0, 0), ImVec2(1, 1),
               IM_COL32(255, 255, 255, static_cast<int>(std::clamp(opacity, 0.0f, 1.0f) * 255)));
  if (outline >= 0) {
    const float K = static_cast<float>(g.K);
    const ImVec2 a = at(static_cast<float>(g.col_of(outline)) * K, static_cast<float>(g.row_of(outline)) * K);
    const ImVec2 b(std::max(a.x + K * scale, a.x + 3), std::max(a.y + K * scale, a.y + 3));
    dl->AddRect(a, b, IM_COL32(0, 255, 255, 255), 0, 0, 2.0f);
  }
  if (!clicked) return std::nullopt;
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int c = std::clamp(static_cast<int>((m.x - p.x) / (scale * static_cast<float>(g.K))), 0, g.cols - 1);
  const int r = std::clamp(static_cast<int>((m.y - p.y) / (scale * static_cast<float>(g.K))), 0, g.rows - 1);
  return g.index(c, r);
}

// The pair of references, the permutation and the shuffled photo; key: generation, seed.
struct Pair {
  int seed = -1;
  std::shared_ptr<const Reference> original, shuffled;
  std::vector<int> perm, inv;
  std::string refusal;
  GuiTexture photo;
};

// The rows and maps; key: generation, seed, head, query, style.
struct Rows {
  GuiTexture shuffled, undone, original, diff;
  ValueRange range;
  float diff_max = 0;
  bool empty = false;
};

// T_out's largest difference (or why there is none), filled in when the job ends; key:
// generation, seed, head.
struct Output {
  std::optional<float> diff;
  std::string error;
};

class PermutationView final : public TeachingView {
 public:
  PermutationView()
      : TeachingView({"permutation",
            // TRANSLATORS: a view's window title (and its item in the Chapter menu): shuffling the patches.
            N_("Permutation"),
            // TRANSLATORS: where the view's idea is in the book: section 26.8 and figure 26.15. Keep the numbers.
            N_("section 26.8, fig. 26.15"),
            // TRANSLATORS: the guided tour's text for the permutation view. Keep the equation and exercise numbers.
            N_("Shuffle the patches and run attention again. Without positional codes every weight moves with its patch: "
               "putting the patches back gives the very same map (eq. 26.30, exercise 12.3). With codes the scores depend "
               "on where a patch sits, and the numbers change.")}) {}

  void draw_contents(AppState& state, HandMadeSession& hand_made) override {
    // TRANSLATORS: T is the matrix of the tokens (one row each). Keep the equation and section numbers.
    text_wrapped("%s", _("Shuffling the patches permutes the rows of T (eq. 26.30). Attention compares every token with every "
                         "other one and never looks at their order, so the shuffled image's map is the original map with its "
                         "values carried along by their patches. Put back in place, it should match the original exactly - "
                         "unless something in the scores depends on the place: positional codes (section 26.11) or a mask."));
    draw_controls(state);
    ImGui::Separator();

    const PatchGrid& g = hand_made.grid();
    if (g.N() > kMaxDemoTokens) {
      int K = g.K;
      while (K < std::min(g.image_width, g.image_height) &&
             static_cast<long long>(g.image_width / K) * (g.image_height / K) > kMaxDemoTokens)
        ++K;
      // TRANSLATORS: N is the number of tokens; the second %d a patch size in pixels, the third the most tokens allowed.
      text_wrapped(_("This demo runs the CPU reference on two images; with N = %d tokens that is too slow for a live view. "
                     "Choose a patch size of at least %d pixels (N <= %d)."),
          g.N(), K, kMaxDemoTokens);
      return;
    }
    update_pair(hand_made);
    if (!pair().refusal.empty()) {
      text_wrapped("%s", pair().refusal.c_str());
      return;
    }
    const int head = std::clamp(state.hand_made.head.head, 0, kHeadCount - 1);
    const int query = hand_made_query(state, g);
    update_rows(state, hand_made, head, query);
    start_output_job(hand_made.scheduler(), hand_made.generation(), head);

    draw_maps(state, hand_made, query);
    draw_readout(hand_made, head, query);
  }

 private:
  void draw_controls(AppState& state) {
    const float w = ImGui::GetFontSize() * 6;
    // TRANSLATORS: the random seed of the shuffle (a number field follows).
    ImGui::TextUnformatted(_("seed"));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(w);
    if (ImGui::InputInt("##seed", &seed_)) seed_ = std::max(seed_, 0);
    ImGui::SameLine();
    if (ImGui::Button(_("shuffle again"))) seed_ = seed_ < 1 << 30 ? seed_ + 1 : 0;
    // "codes:" and "head:" each with its widget, on this line while they fit, else on the next.
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    const WidgetPlace codes{.scope = "permutation", .radio = true, .label = false, .help = false};
    // TRANSLATORS: the label of the positional codes' choice (radio buttons follow). Keep the leading spaces.
    const char* codes_label = _("   codes:");
    same_line_if_room(ImGui::CalcTextSize(codes_label).x + gap + setting_widget_width(state, "pos.mode", codes));
    ImGui::TextUnformatted(codes_label);
    ImGui::SameLine();
    setting_widget(state, "pos.mode", codes);
    const WidgetPlace head{.scope = "permutation", .width_em = 9, .label = false, .help = false};
    // TRANSLATORS: the label of the attention head's choice (a list follows). Keep the leading spaces.
    const char* head_label = _("   head:");
    same_line_if_room(ImGui::CalcTextSize(head_label).x + 2 * gap + setting_widget_width(state, "hand_made.head", head) +
                      ImGui::CalcTextSize("(?)").x);
    ImGui::TextUnformatted(head_label);
    ImGui::SameLine();
    setting_widget(state, "hand_made.head", head);
    // TRANSLATORS: "position" and "colour+position" are heads' names; p is the positional code.
    help_marker(_("The main head (the image view's). The position and colour+position heads read the code p themselves, so they "
                  "depend on the place even with the codes switched off."));
  }

  // The two CPU references, the permutation and the shuffled photo: on a new image, settings or seed.
  void update_pair(HandMadeSession& hand_made) {
    pair_.get(std::tuple{hand_made.generation(), seed_}, [&](Pair& p) {
      p.seed = seed_;
      p.original.reset();
      p.shuffled.reset();
      p.refusal.clear();
      try {
        const Image& image = hand_made.image();
        auto original = std::make_shared<const Reference>(image, hand_made.settings());
        p.perm = seeded_permutation(original->N(), static_cast<std::uint32_t>(seed_));
        p.inv = inverse_permutation(p.perm);
        Image mixed = permute_patches(image, original->grid(), p.perm);
        p.shuffled = std::make_shared<const Reference>(mixed, hand_made.settings());
        p.original = std::move(original);
        std::vector<std::uint8_t> px(mixed.rgb.size());
        for (size_t n = 0; n < px.size(); ++n)
          px[n] = static_cast<std::uint8_t>(std::lround(std::clamp(mixed.rgb[n], 0.0f, 1.0f) * 255.0f));
        p.photo.set(mixed.width, mixed.height, 3, px, true);
      } catch (const Error& e) {
        p.refusal = e.what();
        p.original.reset();
        p.shuffled.reset();
      }
    });
  }

  // The three maps (shuffled, undone, original) on one shared scale, and the difference map.
  void update_rows(AppState& state, HandMadeSession& hand_made, int head, int query) {
    const HeatmapStyle style{state.colormap, state.normalization};
    rows_.get(std::tuple{hand_made.generation(), pair().seed, head, query, style}, [&](Rows& r) {
      const Reference& original = *pair().original;
      const std::vector<int>& perm = pair().perm;
      const PatchGrid& g = original.grid();
      const int N = g.N();
      const int moved = pair().inv[static_cast<size_t>(query)];
      const RowResult a = original.row(head, query);
      const RowResult b = pair().shuffled->row(head, moved);
      const std::span<const float> wa(a.weights.data(), static_cast<size_t>(N)),
          wb(b.weights.data(), static_cast<size_t>(N));
      const std::vector<float> back = undo_permutation(wb, perm);
      std::vector<std::uint8_t> keep_a(static_cast<size_t>(N)), keep_b(static_cast<size_t>(N));
      const Mask& mask = original.setup().mask;
      for (int j = 0; j < N; ++j) {
        keep_a[static_cast<size_t>(j)] = mask.allowed(query, j);
        keep_b[static_cast<size_t>(j)] = mask.allowed(moved, j);
      }
      const std::vector<std::uint8_t> keep_back = [&] {  // the shuffled image's keep flags, put back
        std::vector<std::uint8_t> k(static_cast<size_t>(N));
        for (int m = 0; m < N; ++m)
          k[static_cast<size_t>(perm[static_cast<size_t>(m)])] = keep_b[static_cast<size_t>(m)];
        return k;
      }();
      // One range over the original and the moved-back values: equal numbers get equal colours.
      const ValueRange ra = normalization_range(wa, keep_a, style.normalization);
      const ValueRange rb = normalization_range(back, keep_back, style.normalization);
      auto none = [](ValueRange v) { return v.lo == 0 && v.hi == 0; };  // nothing kept
      r.range = none(ra) ? rb : none(rb) ? ra : ValueRange{std::min(ra.lo, rb.lo), std::max(ra.hi, rb.hi)};
      r.shuffled.set(g.cols, g.rows, 4, colormap_pixels(wb, keep_b, style.colormap, style.normalization, r.range), false);
      r.undone.set(g.cols, g.rows, 4, colormap_pixels(back, keep_back, style.colormap, style.normalization, r.range), false);
      r.original.set(g.cols, g.rows, 4, colormap_pixels(wa, keep_a, style.colormap, style.normalization, r.range), false);
      std::vector<float> diff(static_cast<size_t>(N));
      for (int j = 0; j < N; ++j)
        diff[static_cast<size_t>(j)] = std::abs(back[static_cast<size_t>(j)] - wa[static_cast<size_t>(j)]);
      r.diff_max = row_difference(original, *pair().shuffled, perm, head, query);  // the tested readout
      const ValueRange rd{0.0f, std::max(r.diff_max, 1e-12f)};
      r.diff.set(g.cols, g.rows, 4, colormap_pixels(diff, {}, style.colormap, Normalization::Absolute, rd), false);
      r.empty = a.empty || b.empty;
    });
  }

  // ---- T_out on the scheduler: a new question (image, settings, seed, head) replaces the old job
  void start_output_job(Scheduler& scheduler, unsigned generation, int head) {
    output_.get(std::tuple{generation, pair().seed, head}, [&](Output& o) {
      o = {};
      scheduler_ = &scheduler;
      scheduler.submit<std::optional<float>>(
          "permutation:output",
          [a = pair().original, b = pair().shuffled, perm = pair().perm, head](const std::atomic<bool>& stop) {
            return output_difference(*a, *b, perm, head, &stop);
          },
          [this](std::future<std::optional<float>> result) {
            Output& out = *output_.last();  // the job under the memo's key: a new key cancels it
            try {
              if (const auto v = result.get()) out.diff = *v;
            } catch (const std::exception& e) {
              out.error = e.what();
            }
          });
    });
  }

  void draw_maps(AppState& state, HandMadeSession& hand_made, int query) {
    const PatchGrid& g = pair().original->grid();
    const int moved = pair().inv[static_cast<size_t>(query)];
    const float sp = ImGui::GetStyle().ItemSpacing.x;
    const float bar_w = ui_px(22) + 6 + ImGui::CalcTextSize("0.000000e-00").x;
    const float avail = ImGui::GetContentRegionAvail().x;
    const float side = std::clamp((avail - bar_w - 4 * sp) / 4.0f, ui_px(74), ui_px(394));
    const float opacity = std::max(state.opacity, 0.5f);
    auto pick = [&](int cell) {
      state.hand_made.cell = Cell{g.col_of(cell), g.row_of(cell)};
      state.hand_made.query_pinned = true;
    };
    ImGui::BeginGroup();
    ImGui::TextUnformatted(_("shuffled image"));
    if (auto hit = map_panel("shuffled", pair().photo.im(), rows().shuffled.im(), g, moved, side, opacity))
      pick(pair().perm[static_cast<size_t>(*hit)]);  // the patch sitting there comes from perm[hit]
    // TRANSLATORS: where the query's patch sits in the shuffled image: (column,row).
    ImGui::TextDisabled(_("query now at (%d,%d)"), g.col_of(moved), g.row_of(moved));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::TextUnformatted(_("shuffle undone"));
    if (auto hit = map_panel("undone", hand_made.photo(), rows().undone.im(), g, query, side, opacity)) pick(*hit);
    ImGui::TextDisabled("%s", _("weights put back in place"));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    // TRANSLATORS: a picture's caption: the map of the original (unshuffled) image.
    ImGui::TextUnformatted(_("original"));
    if (auto hit = map_panel("original", hand_made.photo(), rows().original.im(), g, query, side, opacity)) pick(*hit);
    // TRANSLATORS: the query's patch: (column,row).
    ImGui::TextDisabled(_("query (%d,%d)"), g.col_of(query), g.row_of(query));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::TextUnformatted(" ");
    colour_bar(state.colormap, state.normalization, rows().range, side);
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    // TRANSLATORS: a picture's caption: the absolute difference of the "shuffle undone" and "original" maps.
    ImGui::TextUnformatted(_("|undone - original|"));
    map_panel("difference", nullptr, rows().diff.im(), g, query, side, 1.0f);
    ImGui::TextDisabled(_("black = 0, brightest = %s"), format_weight(rows().diff_max).c_str());
    ImGui::EndGroup();
    ImGui::TextDisabled("%s", _("The three maps share one colour scale. Click a patch (in any map) to make it the query."));
  }

  void draw_readout(HandMadeSession& hand_made, int head, int query) {
    const Settings& s = hand_made.settings();
    const int N = pair().original->N();
    ImGui::Separator();
    // TRANSLATORS: A is the attention matrix, N the number of tokens.
    ImGui::Text(_("largest |difference| after undoing the shuffle: %s   (row %d of A; a uniform weight would be 1/N = %s)"),
        format_weight(rows().diff_max).c_str(), query, format_weight(1.0 / N).c_str());
    if (output_.last()->diff)
      // TRANSLATORS: T_out are the output tokens (the chapter's symbol); %d how many.
      text_wrapped(_("largest |difference| of the output tokens T_out (all %d, eq. 26.21) after undoing: %s"), N,
                  format_weight(*output_.last()->diff).c_str());
    else if (!output_.last()->error.empty())
      // TRANSLATORS: %s is why the output tokens could not be computed (an error message).
      ImGui::Text(_("output tokens T_out: %s"), output_.last()->error.c_str());
    else
      ImGui::TextDisabled("%s", _("largest |difference| of the output tokens T_out after undoing: computing..."));
    if (rows().empty) ImGui::TextDisabled("%s", _("(every key is masked for this query in one of the images)"));

    const bool codes = s.pos.mode != PosMode::None;
    const bool masked = s.mask.kind != MaskKind::None;
    const bool reads_p =
        head == static_cast<int>(HeadKind::Position) || head == static_cast<int>(HeadKind::ColourPosition);
    ImGui::Spacing();
    if (!codes && !masked && !reads_p) {
      // TRANSLATORS: s_ij is the score of patches i and j, A the attention matrix, T_out the output tokens.
      text_wrapped("%s", _("Zero up to float rounding: every score s_ij depends only on the contents of patches i and j, so "
                           "shuffling the tokens shuffles the rows and columns of A the same way and T_out moves along with "
                           "them (eqs. 26.29-26.31: the whole transformer is permutation equivariant). Switch on codes to break "
                           "this."));
    } else {
      std::string why;
      if (codes)
        why += s.pos.mode == PosMode::Concat
                   // TRANSLATORS: one sentence of an explanation built of several; keep its trailing space. q and k are
                   // the query and key, lambda the codes' weight, p_i and p_j the positional codes.
                   ? _("The codes appended to q and k belong to the place, not to the patch: a moved patch gets the code "
                       "of its new place, so its scores change (lambda^2 p_i^T p_j, eq. 26.40). ")
                   // TRANSLATORS: one sentence of an explanation built of several; keep its trailing space.
                   : _("The codes added to the tokens belong to the place, not to the patch: a moved patch is a "
                       "different token at its new place, so its query, key and value change. ");
      if (masked)
        // TRANSLATORS: one sentence of an explanation built of several; keep its trailing space.
        why += _("The mask decides by index which keys a query may see, so it does not move with the patches (the chapter's "
                 "note next to section 26.11). ");
      if (reads_p)
        // TRANSLATORS: one sentence of an explanation built of several; keep its trailing space. p is the positional code.
        why += _("This head reads the positional code p itself, so it depends on the place even without codes. ");
      // TRANSLATORS: the last sentence of an explanation built of several.
      why += _("The difference is the information about the layout that attention alone would not have.");
      text_wrapped("%s", why.c_str());
    }
    // TRANSLATORS: Eigen is a library's name; the first %d is the random seed, the second the number of patches.
    ImGui::TextDisabled(_("Computed with the CPU reference (Eigen) on both images; seed %d shuffles %d patches."),
                        pair().seed, N);
  }

  int seed_ = 1;
  Memo<std::tuple<unsigned, int>, Pair> pair_;
  const Pair& pair() const { return *pair_.last(); }  // update_pair made it this frame
  Memo<std::tuple<unsigned, int, int, int, HeatmapStyle>, Rows> rows_;
  const Rows& rows() const { return *rows_.last(); }
  Memo<std::tuple<unsigned, int, int>, Output> output_;
};

}  // namespace

std::unique_ptr<TeachingView> make_permutation_view() { return std::make_unique<PermutationView>(); }

}  // namespace attnlab::app

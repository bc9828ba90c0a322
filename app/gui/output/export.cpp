#include "app/gui/output/export.hpp"
#include "app/gui/state/widget_log.hpp"

#include "core/hand_made/attention.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/io/image.hpp"
#include "core/io/video.hpp"
#include "core/base/platform.hpp"
#include "core/gpu/gl.hpp"
#include "core/vit/vit_train.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <numeric>

namespace attnlab::app {

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  const std::tm tm = platform::local_time(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

nlohmann::json sidecar_json(const AppState& state, HandMadeSession& hand_made, const ViewGeometry& view, int width, int height) {
  // The sidecar describes the picture, which shows what the hand-made session computed at the start of
  // the frame. A change made during the frame (a slider being dragged, the pointer on another
  // patch, a click on another head) is applied in the next one, or not at all when it does
  // not fit (a K larger than the image): the attention settings are the hand-made session's, the query
  // and the head the ones the image view drew (else the document's).
  AppState drawn = state;
  int query = -1;
  if (hand_made.has_image()) {
    const PatchGrid& g = hand_made.grid();
    drawn.attention = hand_made.settings();
    const bool drawn_here = view.valid && state.report.vit_drawn.is_null() && state.report.train_drawn.is_null() && view.query >= 0 && view.query < g.N();
    query = drawn_here ? view.query : hand_made_query(state, g);
    drawn.hand_made.cell = {g.col_of(query), g.row_of(query)};
  }
  // The head the hand-made map drew (a ViT's map records its own choice in vit_drawn).
  if (view.valid && state.report.vit_drawn.is_null() && state.report.train_drawn.is_null() && view.head >= 0 && view.head < kHeadCount)
    drawn.hand_made.head = HeadChoice{view.head, HeadFusion::Mean};
  nlohmann::json j = to_json(drawn);
  j["program"] = {{"name", "attnlab"}, {"version", ATTNLAB_VERSION}};
  j["backend"] = hand_made.name();
  j["window"] = {{"width", width}, {"height", height}};
  if (view.valid) j["image_view"] = {{"x", view.x}, {"y", view.y}, {"scale", view.scale}};
  j["banner"] = state.ui.banner;
  j["recording"] = state.ui.record_status;  // Export → Record: what runs or is being written ("" when idle)
  j["recording_state"] = state.ui.record_state;  // the same for programs: "recording", "writing" or ""
  j["pinned_note"] = state.ui.pinned_note;
  // The confirmation of the previous export, shown on screen but not in this picture.
  j["toast"] = toast_showing(state) ? state.ui.status : "";
  j["overlays_left_out"] = widget_log().overlays_left_out;
  j["widgets"] = widget_log().rects;
  j["widget_windows"] = widget_log().owners;  // the window each control was drawn in
  j["labels_cut"] = widget_log().labels_cut;  // tabs ImGui shrank, window titles their title bar cuts
  // Where those left out are on screen (drawn before and after this frame), not in `widgets`.
  nlohmann::json left_out = nlohmann::json::object();
  for (const std::string& overlay : widget_log().overlays_left_out)
    if (const auto it = widget_log().overlays_drawn.find(overlay); it != widget_log().overlays_drawn.end())
      for (const auto& [name, rect] : it->second) left_out[name] = rect;
  j["left_out_widgets"] = std::move(left_out);
  j["view_errors"] = state.report.view_errors;
  j["checks"] = state.report.checks;  // what the Diagnostics panel shows
  if (!state.report.cka_drawn.is_null()) j["cka_drawn"] = state.report.cka_drawn;  // the similarity view's matrix
  if (!state.report.high_norm_drawn.is_null()) j["high_norm_drawn"] = state.report.high_norm_drawn;
  if (!state.report.relevance_drawn.is_null()) j["relevance_drawn"] = state.report.relevance_drawn;
  if (!state.report.field_drawn.is_null()) j["field_drawn"] = state.report.field_drawn;
  if (!state.report.cnn_drawn.is_null()) j["cnn_drawn"] = state.report.cnn_drawn;
  if (!state.report.vit_drawn.is_null()) j["vit_drawn"] = state.report.vit_drawn;
  if (!state.report.train_drawn.is_null()) j["train_drawn"] = state.report.train_drawn;
  if (!state.report.train_compared.is_null()) j["train_compared"] = state.report.train_compared;
  if (!state.report.train_cnn.is_null()) j["train_cnn"] = state.report.train_cnn;
  if (!state.report.compare.is_null()) j["compare"] = state.report.compare;  // `render --from` redraws the pair
  if (!hand_made.has_image()) return j;
  const auto& g = hand_made.grid();
  j["image_size"] = {{"width", hand_made.image().width}, {"height", hand_made.image().height}};
  j["grid"] = {{"cols", g.cols}, {"rows", g.rows}, {"N", g.N()}, {"K", g.K}};
  j["query_index"] = query;
  const RowSet& rows = hand_made.rows_blocking(query);  // the exported picture's own row, not one frame behind
  const int head = drawn.hand_made.head.head;
  const auto row = rows.head(head);
  std::vector<int> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t top = std::min<size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                    [&](int a, int b) { return row[static_cast<size_t>(a)] > row[static_cast<size_t>(b)]; });
  nlohmann::json largest = nlohmann::json::array();
  for (size_t n = 0; n < top; ++n) {
    const int k = order[n];
    largest.push_back({{"col", g.col_of(k)}, {"row", g.row_of(k)}, {"weight", row[static_cast<size_t>(k)]}});
  }
  const auto [mn, mx] = std::minmax_element(row.begin(), row.end());
  std::vector<std::uint8_t> keep(row.size());
  for (size_t k = 0; k < row.size(); ++k) keep[k] = hand_made.setup().mask.allowed(query, static_cast<int>(k));
  const RowFlatness flat = row_flatness(row, keep);
  j["row"] = {{"head", std::string(head_name(static_cast<HeadKind>(head)))},
              {"head_index", head},
              {"min", *mn},
              {"max", *mx},
              {"empty", rows.empty[static_cast<std::size_t>(head)]},
              {"largest", largest},
              {"uniform", flat.uniform},
              {"max_over_min", std::isinf(flat.max_over_min) ? nlohmann::json(nullptr) : nlohmann::json(flat.max_over_min)},
              {"entropy_ratio", flat.entropy_ratio},
              {"nearly_uniform", flat.nearly_uniform && !rows.empty[static_cast<std::size_t>(head)]}};
  return j;
}

PixelRect export_crop(bool map_only, const ViewGeometry& view, int width, int height) {
  if (!map_only || !view.valid || view.picture[2] <= 0 || view.picture[3] <= 0) return {0, 0, width, height};
  const float fx = static_cast<float>(width) / std::max(ImGui::GetIO().DisplaySize.x, 1.0f);
  const float fy = static_cast<float>(height) / std::max(ImGui::GetIO().DisplaySize.y, 1.0f);
  PixelRect r;
  r.x = std::clamp(static_cast<int>(view.picture[0] * fx), 0, width - 1);
  r.y = std::clamp(static_cast<int>(view.picture[1] * fy), 0, height - 1);
  r.w = std::clamp(static_cast<int>(std::ceil(view.picture[2] * fx)), 1, width - r.x);
  r.h = std::clamp(static_cast<int>(std::ceil(view.picture[3] * fy)), 1, height - r.y);
  return r;
}

std::vector<std::uint8_t> read_back_buffer(const PixelRect& r, int height) {
  std::vector<std::uint8_t> px(static_cast<size_t>(r.w) * r.h * 4);
  GLint align = 0;
  glGetIntegerv(GL_PACK_ALIGNMENT, &align);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(r.x, height - r.y - r.h, r.w, r.h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  gl::count_readback(px.size());
  glPixelStorei(GL_PACK_ALIGNMENT, align);
  std::vector<std::uint8_t> rgb(static_cast<size_t>(r.w) * r.h * 3);  // flip rows: GL starts at the bottom
  for (int y = 0; y < r.h; ++y)
    for (int x = 0; x < r.w; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[(static_cast<size_t>(y) * r.w + x) * 3 + c] = px[(static_cast<size_t>(r.h - 1 - y) * r.w + x) * 4 + c];
  return rgb;
}

namespace {

// A video's frame written beside an export (<stem>-frame.png).
struct FramePng {
  std::filesystem::path path;
  std::vector<std::uint8_t> bytes;
};

// When the map shown was computed from a video's frame (the ViT's maps: FrameReport::video_vit;
// else the hand-made heads': video_hand_made), that frame as PNG bytes for <stem>-frame.png, and
// the sidecar's "image" naming that PNG (so `attnlab render --from` redraws the map) with a
// "video" entry: the file, the frame's index and time, and the player's numbers
// (FrameReport::video: frames shown and dropped, latency). nullopt when it is not a video's.
std::optional<FramePng> video_frame_png(const AppState& state, const std::filesystem::path& stem, nlohmann::json& sidecar) {
  const bool vit = state.source == ShownSource::Vit && !state.report.vit_drawn.is_null();
  const std::optional<ShownVideoFrame>& shown = vit ? state.report.video_vit : state.report.video_hand_made;
  if (!shown || !shown->image || shown->image->empty()) return std::nullopt;
  FramePng out{std::filesystem::absolute(stem.string() + "-frame.png"), {}};
  out.bytes = encode_png(shown->image->width, shown->image->height, 3, image_to_rgb8(*shown->image), "'" + out.path.string() + "'");
  nlohmann::json video = state.report.video.is_object() ? state.report.video : nlohmann::json::object();
  video["path"] = platform::utf8(shown->video);
  video["frame"] = shown->index;
  video["time"] = shown->time;
  video["frame_png"] = platform::utf8(out.path);
  sidecar["video"] = std::move(video);
  sidecar["image"] = platform::utf8(out.path);
  return out;
}

}  // namespace

std::filesystem::path export_window(const AppState& state, HandMadeSession& hand_made, const ViewGeometry& view, int width,
                                    int height) {
  if (width <= 0 || height <= 0) throw Error(_("the window has no size to export"));
  // What is kept, in framebuffer pixels from the top left: the whole window, or for slides the
  // map and its colour bar (the main view's picture).
  const bool map_only = state.export_map_only && view.valid && view.picture[2] > 0 && view.picture[3] > 0;
  const PixelRect crop = export_crop(state.export_map_only, view, width, height);
  const int x0 = crop.x, y0 = crop.y, w = crop.w, h = crop.h;
  const std::vector<std::uint8_t> rgb = read_back_buffer(crop, height);
  const auto stem = next_free_stem(make_export_folder(state), std::string(map_only ? "attnlab-map-" : "attnlab-") + timestamp(),
                                   {".png", ".json", "-frame.png"});
  const std::filesystem::path png = stem.string() + ".png", json = stem.string() + ".json";
  nlohmann::json sidecar = sidecar_json(state, hand_made, view, width, height);
  sidecar["export"] = {{"scope", map_only ? "map" : "window"}, {"crop", {x0, y0, w, h}}};
  const std::optional<FramePng> frame = video_frame_png(state, stem, sidecar);  // a video's frame: its own PNG
  const std::string text = sidecar.dump(2) + "\n";
  // All or none: a PNG without its settings (or the frame they name) is not an export.
  const std::vector<std::uint8_t> encoded = encode_png(w, h, 3, rgb, "'" + png.string() + "'");
  std::vector<FileToWrite> files = {
      {png, std::span<const char>(reinterpret_cast<const char*>(encoded.data()), encoded.size())},
      {json, std::span<const char>(text.data(), text.size())}};
  if (frame) files.push_back({frame->path, std::span<const char>(reinterpret_cast<const char*>(frame->bytes.data()), frame->bytes.size())});
  write_files_together(files);
  return png;
}

std::filesystem::path choose_export_dir(const std::string& typed) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p = fs::absolute(fs::path(typed), ec).lexically_normal();
  if (ec) throw Error(text_format(_("cannot use '%s' as the export folder: %s"), typed.c_str(), ec.message().c_str()));
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec)) throw Error(text_format(_("cannot export into '%s': it is a file, not a folder"), p.string().c_str()));
    return p;
  }
  const fs::path parent = p.has_filename() ? p.parent_path() : p.parent_path().parent_path();
  if (!fs::is_directory(parent, ec))
    throw Error(text_format(_("cannot export into '%s': its parent folder %s does not exist"), p.string().c_str(), parent.string().c_str()));
  if (!fs::create_directory(p, ec) || ec)
    throw Error(text_format(_("cannot make the export folder '%s': %s"), p.string().c_str(),
                            ec ? ec.message().c_str() : _("not made")));
  return p;
}

std::filesystem::path export_row_csv(const AppState& state, HandMadeSession& hand_made) {
  if (!hand_made.has_image()) throw Error(_("no image loaded"));
  const auto& g = hand_made.grid();
  const int query = hand_made_query(state, g);
  const auto row = hand_made.rows_blocking(query).head(state.hand_made.head.head);
  // A '#' header with what the row belongs to, so that the numbers stand on their own.
  const Settings& a = hand_made.settings();
  char tau[32];
  std::snprintf(tau, sizeof tau, "%g", static_cast<double>(a.temperature));
  std::string csv = "# attnlab: row i of the attention matrix A, the weights a_ij over the key patches j\n# image: " +
                    state.image_path.string() + "\n# K: " + std::to_string(g.K) + " px, grid " + std::to_string(g.cols) + " x " +
                    std::to_string(g.rows) + ", N = " + std::to_string(g.N()) + "\n# query: patch (" +
                    std::to_string(g.col_of(query)) + "," + std::to_string(g.row_of(query)) +
                    "), i = " + std::to_string(query) + "\n# head: " +
                    std::string(head_name(static_cast<HeadKind>(state.hand_made.head.head))) + " (head " +
                    std::to_string(state.hand_made.head.head) + ", from 0)\n# mask: " +
                    std::string(mask_kind_name(a.mask.kind)) + "\n# temperature: " + tau + "\n# positional codes: " +
                    std::string(pos_mode_name(a.pos.mode)) + "\n# lines: the grid's rows, top first; columns: left first\n";
  csv += grid_csv(row, g);
  // Named after the query the row belongs to.
  const int col = g.col_of(query), r = g.row_of(query);
  const auto stem = next_free_stem(make_export_folder(state),
                                   "attnlab-row-" + std::to_string(col) + "-" + std::to_string(r) + "-" +
                                       std::string(head_name(static_cast<HeadKind>(state.hand_made.head.head))),
                                   {".csv"});
  const std::filesystem::path path = stem.string() + ".csv";
  write_file_safely(path, csv);
  return path;
}

namespace {

// A ViT's map drawn last (a sidecar's vit_drawn or train_drawn: a layer's row, its rollout or the
// token norms over the patch grid) as CSV in the grid's layout, after '#' lines: `about` (the
// model and what it ran on), then the layer, head, query and what the values are. Named
// <stem>-<shows>-layer<L>-token<T>.csv.
std::filesystem::path map_csv(const AppState& state, const nlohmann::json& d, const std::string& about, const std::string& stem) {
  const auto values = d.at("values").get<std::vector<float>>();
  PatchGrid g;
  g.cols = d.at("grid").at("cols").get<int>();
  g.rows = d.at("grid").at("rows").get<int>();
  if (static_cast<int>(values.size()) != g.N()) throw Error(_("the ViT map drawn does not fit its grid"));
  const std::string shows = d.at("shows").get<std::string>();
  std::string csv = "# attnlab ViT map: " + std::string(shows == "norms"     ? "token norms ||x_i|| of the layer's output"
                                                        : shows == "rollout" ? "attention rollout up to the layer"
                                                                             : "attention row a_ij over the patch keys") +
                    "\n" + about + "# layer: " + std::to_string(d.at("layer").get<int>()) +
                    " (from 0)\n# head: " + d.at("head_label").get<std::string>() +
                    "\n# query: " + d.at("token_label").get<std::string>() + " (token " +
                    std::to_string(d.at("token").get<int>()) + ")\n";
  if (shows != "norms")
    csv += "# share of the row on prefix tokens (not below): " + std::to_string(d.at("prefix_share").get<double>()) + "\n";
  if (shows == "norms" && d.contains("prefix_norms")) {
    csv += "# norms of the prefix tokens (CLS first, then registers; not below):";
    for (const float v : d.at("prefix_norms").get<std::vector<float>>()) csv += " " + std::to_string(v);
    csv += "\n";
  }
  csv += "# grid: " + std::to_string(g.cols) + " columns x " + std::to_string(g.rows) + " rows, row-major\n";
  csv += grid_csv(values, g);
  const std::string query = "token" + std::to_string(d.at("token").get<int>());
  const auto path_stem = next_free_stem(make_export_folder(state), stem + "-" + shows + "-layer" + std::to_string(d.at("layer").get<int>()) + "-" + query, {".csv"});
  const std::filesystem::path path = path_stem.string() + ".csv";
  write_file_safely(path, csv);
  return path;
}

}  // namespace

std::filesystem::path export_vit_csv(const AppState& state) {
  const auto& d = state.report.vit_drawn;
  if (!d.is_object() || !d.contains("values")) throw Error(_("no ViT map drawn yet"));
  const std::string about = "# model: " + d.at("model").get<std::string>() + "\n# sha256: " + d.at("sha256").get<std::string>() +
                            "\n# image: " + state.image_path.string() + "\n";
  return map_csv(state, d, about, "attnlab-vit");
}

std::filesystem::path export_train_csv(const AppState& state) {
  const auto& d = state.report.train_drawn;
  if (!d.is_object() || !d.contains("values") || !d.contains("run")) throw Error(_("no map of the model being trained drawn yet"));
  const std::string run = d.at("run").get<std::string>();
  const std::string about = "# model: " + d.at("model").get<std::string>() + "\n# being trained: run " + run + ", step " +
                            std::to_string(d.at("step").get<std::int64_t>()) + "\n# switches: " +
                            d.at("switches").get<std::string>() + "\n# probe: " + d.at("probe").get<std::string>() +
                            // a classifier's probe is made as its data (a masked-patch run's names its own size)
                            (d.at("task") == task_name(VitTask::Classify) ? " (28 x 28 grey, as the Fashion-MNIST data)" : "") + "\n";
  std::string lower = run;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return map_csv(state, d, about, "attnlab-train-" + lower);
}

}  // namespace attnlab::app

// The ViT beside a CNN (cnn_view.hpp; issue 50, SPEC §14). The view owns the ResNet (loaded or
// made on the scheduler) and the results of its jobs, each kept under the key of what it is of.
#include "app/gui/cnn/cnn_view.hpp"

#include "app/commands/cnn_model.hpp"
#include "app/gui/state/widget_log.hpp"
#include "app/gui/train/cka_view.hpp"
#include "app/gui/vit/vit_views.hpp"
#include "core/base/translate.hpp"
#include "core/cnn/model_cka.hpp"
#include "core/cnn/resnet.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/vit/relevance.hpp"
#include "core/vit/vit_gradients.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>

namespace attnlab::app {

int matched_block(int layer, int layers, int blocks) {
  if (layers <= 0 || blocks <= 0) return 0;
  const int b = static_cast<int>(std::lround(static_cast<double>(layer + 1) * blocks / layers)) - 1;
  return std::clamp(b, 0, blocks - 1);
}

/// A finished job's picture or matrix, and what it is of.
struct CnnResults {
  std::string field_key, cam_key, cka_key;        // of the results below
  std::string field_pending, cam_pending, cka_pending;
  Matrix vit_field, cnn_field;                    // input height × width of each model
  int block = 0, col = 0, row = 0;                // where the ResNet's field is of
  Matrix cam;                                     // the block's h × w
  std::vector<std::pair<int, float>> top;         // the ResNet's likeliest classes on the photo
  std::optional<CkaResult> cka;
  int cka_batch = 0;                              // its minibatch (0: exact), for the line that says what it is over
  std::string pass_key, pass_pending;             // the ResNet's forward on the photo (every block's maps)
  std::shared_ptr<const ResnetPass> pass;
  std::string error;                              // the last job's one line, with its key
  std::string error_key;
  std::shared_ptr<std::atomic<int>> cka_done = std::make_shared<std::atomic<int>>(0);
  int cka_total = 1;
};

/// What the CNN view keeps for one ViT session (VitViewData::cnn): the ResNet (loaded or made on
/// the scheduler), its input made from the session's photo, and its jobs' results. Every job is
/// keyed by the session ("cnn:…:" + its key) and holds this weakly.
struct CnnViewState : std::enable_shared_from_this<CnnViewState> {
  void draw(ViewSource& s);

 private:
  void model_line(AppState& state, VitSession& vit);
  void model_choice(AppState& state);
  void request_load(VitSession& vit, const std::filesystem::path& path);
  void draw_fields(AppState& state, VitSession& vit, SourceChoice& choice);
  void draw_grad_cam(AppState& state, VitSession& vit, SourceChoice& choice);
  void draw_cka(AppState& state, VitSession& vit);
  void draw_features(AppState& state, VitSession& vit, SourceChoice& choice);
  static std::string job(const VitSession& vit, const char* what) { return std::string("cnn:") + what + ":" + vit.key(); }

  std::shared_ptr<const ResnetModel> model_;
  std::filesystem::path loaded_, loading_, failed_;
  std::string load_error_;
  std::shared_ptr<CnnResults> results_ = std::make_shared<CnnResults>();
  std::shared_ptr<const Image> input_image_;  // the photo the ResNet's input was made from
  std::shared_ptr<const CnnInput> input_;
  char path_[1024] = {};
};

namespace {

std::string model_name(const std::filesystem::path& p) { return cnn_model_name(p); }

}  // namespace

void CnnViewState::request_load(VitSession& vit, const std::filesystem::path& path) {
  if (path == loading_) return;
  loading_ = path;
  std::weak_ptr<CnnViewState> alive = weak_from_this();
  vit.scheduler().submit<std::shared_ptr<const ResnetModel>>(
      job(vit, "load"),
      [path](const std::atomic<bool>& stop) { return std::make_shared<const ResnetModel>(open_cnn_model(path, &stop)); },
      [alive, path](std::future<std::shared_ptr<const ResnetModel>> f) {
        const auto self = alive.lock();
        if (!self) return;
        self->loading_.clear();
        try {
          self->model_ = f.get();
          self->loaded_ = path;
          self->load_error_.clear();
          *self->results_ = CnnResults();
          self->input_.reset();
        } catch (const std::exception& e) {
          self->failed_ = path;
          self->load_error_ = e.what();
        }
      });
}

// The ways to set the ResNet: a random ResNet-18, or a checkpoint's path; its loading or error.
void CnnViewState::model_choice(AppState& state) {
  // TRANSLATORS: a button: a ResNet-18 (a CNN of 18 layers) with random weights, made by the app.
  if (ImGui::Button(_("Random ResNet-18"))) state.cnn_model = kCnnRandomResnet18;
  record_widget("cnn_random");
  ImGui::SameLine();
  const char* open = _("Open ResNet");
  ImGui::SetNextItemWidth(
      std::clamp(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(open).x - ui_px(24), ui_px(80), ui_px(420)));
  // TRANSLATORS: the hint in an empty text field for a file's path; .safetensors and .pth are file types.
  ImGui::InputTextWithHint("##cnn_path", _("a ResNet checkpoint (.safetensors, .pth or its folder)"), path_, sizeof path_);
  record_widget("cnn_path");
  ImGui::SameLine();
  if (ImGui::Button(open) && path_[0]) state.cnn_model = std::filesystem::path(path_);
  record_widget("cnn_open");
  if (!loading_.empty()) {
    // TRANSLATORS: %s is a model's name.
    ImGui::TextDisabled(_("Loading %s ..."), model_name(loading_).c_str());
    state.commands.redraw();
  } else if (!failed_.empty() && failed_ == state.cnn_model) {
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "%s", load_error_.c_str());
  }
}

// One line: the ResNet as a button (its choice in a popup) and what it is.
void CnnViewState::model_line(AppState& state, VitSession& vit) {
  const std::filesystem::path& want = state.cnn_model;
  if (!want.empty() && want != loaded_ && want != failed_) request_load(vit, want);
  if (!failed_.empty() && failed_ == want) state.report.cnn_drawn = {{"error", "cannot open the ResNet: " + load_error_}};
  if (!model_) {  // nothing to show yet: the choice itself
    model_choice(state);
    return;
  }
  const ResnetArchitecture& a = model_->arch;
  const std::string label = model_name(loaded_);
  if (ImGui::Button((label + "##cnn_model").c_str())) ImGui::OpenPopup("cnn_model_choice");
  record_widget("cnn_model");
  if (ImGui::IsItemHovered())
    // TRANSLATORS: %1$s is the architecture (resnet18); M: millions; px: pixels (the image side it was trained at); %5$s is
    // empty or ", random weights (never trained)".
    ImGui::SetTooltip(_("%s: %d blocks, %.1f M parameters, trained at %d px%s. Click for another ResNet."), a.name().c_str(),
                      a.blocks(), static_cast<double>(a.parameters) / 1e6, a.input_size,
                      // TRANSLATORS: goes after "trained at 224 px" in a model's tooltip, with its leading comma.
                      loaded_ == kCnnRandomResnet18 ? _(", random weights (never trained)") : "");
  if (ImGui::BeginPopup("cnn_model_choice")) {
    model_choice(state);
    ImGui::EndPopup();
  }
  if (!loading_.empty() || (!failed_.empty() && failed_ == want)) {
    ImGui::SameLine();
    // TRANSLATORS: %s is a model's name.
    if (!loading_.empty()) ImGui::TextDisabled(_("loading %s ..."), model_name(loading_).c_str());
    else ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "%s", load_error_.c_str());
  }
}

namespace {

// A column too narrow for a picture with words beside it (under 24 lines of type wide): the
// words go below.
bool narrow_column(float width) { return width < ImGui::GetFontSize() * 24; }

// The photo with `map` (height × width values over the part of the photo given by `uv1`) over it,
// `side` pixels on its long side; returns where it was drawn.
ImVec2 draw_map_over_photo(AppState& state, VitSession& vit, const Matrix& map, const std::string& slot, const std::string& key, ImVec2 uv1,
                           float max_w, float max_h) {
  const float w = static_cast<float>(vit.photo_width()) * uv1.x, h = static_cast<float>(vit.photo_height()) * uv1.y;
  const float scale = std::max(1e-3f, std::min(max_w / w, max_h / h));
  const ImVec2 p0 = ImGui::GetCursorScreenPos(), p1(p0.x + w * scale, p0.y + h * scale);
  ImGui::Dummy(ImVec2(p1.x - p0.x, p1.y - p0.y));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(vit.photo(), p0, p1, ImVec2(0, 0), uv1);
  const std::vector<float> values(map.data(), map.data() + map.size());
  const ImTextureID tex = vit.textures().get(
      slot, key + "|" + std::string(colormap_name(state.colormap)) + "|" + std::string(normalization_name(state.normalization)),
      static_cast<int>(map.cols()), static_cast<int>(map.rows()), [&] { return apply_colormap(values, {}, state.colormap, state.normalization); },
      state.bilinear);
  dl->AddImage(tex, p0, p1, ImVec2(0, 0), ImVec2(1, 1), IM_COL32(255, 255, 255, static_cast<int>(255 * state.opacity)));
  return ImVec2(p1.x - p0.x, p1.y - p0.y);
}

// One map over the whole photo as large as the room allows, with what it is beside it (below it in
// a narrow column): the map, recorded as `widget`, then a group begun with `says` wrapped. The
// caller adds to the group and ends it.
void map_with_words(AppState& state, VitSession& vit, const Matrix& map, const std::string& slot, const std::string& key, const char* widget,
                    const std::string& says) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool stacked = narrow_column(avail.x);
  draw_map_over_photo(state, vit, map, slot, key, ImVec2(1, 1), stacked ? avail.x : avail.x * 0.4f,
                      stacked ? avail.x : std::max(ui_px(40), avail.y - ui_px(4)));
  record_widget(widget);
  if (!stacked) ImGui::SameLine(0, ui_px(12));
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(says.c_str());
  ImGui::PopTextWrapPos();
}

// The wait before a picture, and its failure: until its job for `key` has answered (`answered`),
// what it will be (`says`) and that it is on its way (`waiting`); then, if the job failed, the
// error, recorded as the picture `show`'s. True while there is no picture to draw.
bool not_drawable(AppState& state, const CnnResults& r, bool answered, const std::string& key, const std::string& says, const char* waiting,
                  const char* show) {
  if (!answered) {
    text_wrapped("%s", says.c_str());
    ImGui::TextDisabled("%s", waiting);
    state.commands.redraw();
    return true;
  }
  if (r.error_key != key) return false;
  text_wrapped("%s", r.error.c_str());
  state.report.cnn_drawn = {{"show", show}, {"error", r.error}};
  return true;
}

// Where token `token` of the ViT lies on the photo, as fractions of its width and height: a
// patch's centre; the prefix tokens (cls, registers), which have no place, the photo's centre.
ImVec2 token_point(const SourceGrid& g, int token, int photo_w, int photo_h) {
  if (token < g.prefix || g.cols == 0 || g.rows == 0) return ImVec2(0.5f, 0.5f);
  const int p = token - g.prefix, col = p % g.cols, row = p / g.cols;
  return ImVec2(static_cast<float>((col + 0.5) * g.covered_w / g.cols / photo_w), static_cast<float>((row + 0.5) * g.covered_h / g.rows / photo_h));
}

}  // namespace

void CnnViewState::draw_fields(AppState& state, VitSession& vit, SourceChoice& choice) {
  const VitRun* run = vit.run();
  const SourceGrid g = run->grid();
  const int layer = choice_layer(choice, run->layers()), token = choice_query(choice, g);
  const int blocks = static_cast<int>(model_->blocks.size()), block = matched_block(layer, run->layers(), blocks);
  const ImVec2 at = token_point(g, token, vit.photo_width(), vit.photo_height());
  const auto [mw, mh] = resnet_map_size(*model_, block, input_->width, input_->height);
  const int col = std::clamp(static_cast<int>(at.x * static_cast<float>(mw)), 0, mw - 1);
  const int row = std::clamp(static_cast<int>(at.y * static_cast<float>(mh)), 0, mh - 1);
  const std::string key = std::to_string(vit.generation()) + "|" + std::to_string(model_->id) + "|" + std::to_string(layer) + "|" +
                          std::to_string(token) + "|" + std::to_string(block) + "|" + std::to_string(col) + "," + std::to_string(row);
  // TRANSLATORS: %1$s is a token ("CLS", "patch (3,4)"); then the ViT's layer and its number of layers; the ResNet's position
  // (column,row) in its feature map, its block's index, the block's name (layer2.1) and its number of blocks.
  const std::string says = text_format(_("Effective receptive fields at the same depth and the same point of the photo: the "
                                         "ViT's %s after layer %d of %d; the ResNet's position (%d,%d) after block %d (%s) of %d."),
                                       token_label(g, token).c_str(), layer, run->layers(), col, row, block,
                                       model_->blocks[static_cast<std::size_t>(block)].name.c_str(), blocks);
  // TRANSLATORS: PgUp / PgDn are keys.
  const char* help = _("How much each input pixel moves the features there (Luo et al. 2016). Step the layer with PgUp / PgDn: "
                       "the ViT's field reaches across the photo within a few layers, the ResNet's grows a kernel and a stride "
                       "at a time (Raghu et al. 2021). Click the main map to move the point.");
  CnnResults& r = *results_;
  if (r.field_key != key && r.field_pending != key) {
    r.field_pending = key;
    std::weak_ptr<CnnResults> slot = results_;
    const std::shared_ptr<const VitRun> vrun = vit.run_ptr();
    const std::shared_ptr<const ResnetModel> cnn = model_;
    const std::shared_ptr<const CnnInput> input = input_;
    vit.scheduler().submit<std::pair<Matrix, Matrix>>(
        job(vit, "field"),
        [vrun, cnn, input, layer, token, block, col, row](const std::atomic<bool>& stop) {
          Matrix v = vit_receptive_field(vrun->model(), vrun->input(), layer, token, vit_memory_budget(), &stop);
          Matrix c = cnn_input_gradient_map(
              resnet_gradients(*cnn, *input, CnnGradientTarget::position_sum(block, col, row), vit_memory_budget(), 0, &stop));
          return std::make_pair(std::move(v), std::move(c));
        },
        [slot, key, block, col, row](std::future<std::pair<Matrix, Matrix>> f) {
          const auto res = slot.lock();
          if (!res) return;
          res->field_pending.clear();
          try {
            std::tie(res->vit_field, res->cnn_field) = f.get();
            res->field_key = key;
            res->block = block, res->col = col, res->row = row;
          } catch (const std::exception& e) {
            res->error = e.what(), res->error_key = key;
            res->field_key = key;
          }
        });
  }
  if (not_drawable(state, r, r.field_key == key, key, says, _("Computing both models' gradients ..."), "field")) return;
  // The two fields side by side as large as the panel's height allows, what they are to the right;
  // in a narrow column (the controls column of a projector at a large UI scale) the words below.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool stacked = narrow_column(avail.x);
  const float high = stacked ? avail.x : std::max(ui_px(40), avail.y - ImGui::GetTextLineHeightWithSpacing() - ui_px(4));
  const float each = stacked ? std::max((avail.x - ui_px(12)) / 2, ui_px(20)) : std::min((avail.x - ui_px(24)) * 0.35f, high * 1.6f);
  const ImVec2 covered(static_cast<float>(g.covered_w / vit.photo_width()), static_cast<float>(g.covered_h / vit.photo_height()));
  ImGui::BeginGroup();
  ImGui::TextUnformatted("ViT");  // i18n: English (the model's name)
  draw_map_over_photo(state, vit, r.vit_field, "cnn-vit-field", key, covered, each, high);
  record_widget("cnn_vit_field");
  ImGui::EndGroup();
  ImGui::SameLine(0, ui_px(12));
  ImGui::BeginGroup();
  ImGui::TextUnformatted("ResNet");  // i18n: English (the model's name)
  draw_map_over_photo(state, vit, r.cnn_field, "cnn-resnet-field", key, ImVec2(1, 1), each, high);
  record_widget("cnn_resnet_field");
  ImGui::EndGroup();
  if (!stacked) ImGui::SameLine(0, ui_px(12));
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(says.c_str());
  ImGui::PopTextWrapPos();
  help_marker(help);
  ImGui::EndGroup();
  // How far each reaches: the share of the input whose gradient is over a tenth of the largest.
  auto reach = [](const Matrix& f) {
    const float top = f.maxCoeff();
    return top > 0 ? static_cast<double>((f.array() > 0.1f * top).count()) / static_cast<double>(f.size()) : 0.0;
  };
  state.report.cnn_drawn = {{"show", "field"},      {"layer", layer},         {"token", token},
                            {"block", block},       {"block_name", model_->blocks[static_cast<std::size_t>(block)].name},
                            {"position", {col, row}}, {"vit_size", {r.vit_field.cols(), r.vit_field.rows()}},
                            {"resnet_size", {r.cnn_field.cols(), r.cnn_field.rows()}}, {"vit_reach", reach(r.vit_field)},
                            {"resnet_reach", reach(r.cnn_field)}};
}

void CnnViewState::draw_grad_cam(AppState& state, VitSession& vit, SourceChoice& choice) {
  const VitRun* run = vit.run();
  const int layer = choice_layer(choice, run->layers());
  const int block = matched_block(layer, run->layers(), static_cast<int>(model_->blocks.size()));
  const std::string key = std::to_string(vit.generation()) + "|" + std::to_string(model_->id) + "|" + std::to_string(block);
  CnnResults& r = *results_;
  if (r.cam_key != key && r.cam_pending != key) {
    r.cam_pending = key;
    std::weak_ptr<CnnResults> slot = results_;
    const std::shared_ptr<const ResnetModel> cnn = model_;
    const std::shared_ptr<const CnnInput> input = input_;
    using Out = std::pair<Matrix, std::vector<std::pair<int, float>>>;
    vit.scheduler().submit<Out>(
        job(vit, "grad-cam"),
        [cnn, input, block](const std::atomic<bool>& stop) {
          const CnnGradients g =
              resnet_gradients(*cnn, *input, CnnGradientTarget::class_logit(CnnGradientTarget::kTopClass), vit_memory_budget(), 0, &stop);
          return Out(resnet_grad_cam(g, block), vit_top_classes(g.logits, 3));
        },
        [slot, key](std::future<Out> f) {
          const auto res = slot.lock();
          if (!res) return;
          res->cam_pending.clear();
          res->cam_key = key;
          try {
            std::tie(res->cam, res->top) = f.get();
          } catch (const std::exception& e) {
            res->error = e.what(), res->error_key = key;
          }
        });
  }
  // TRANSLATORS: %1$d is a block's index, %2$s its name (layer2.1), %3$d the ViT's layer at the same depth.
  const std::string says = text_format(_("Grad-CAM (Selvaraju et al. 2017) of the ResNet's likeliest class at block %d (%s), the "
                                         "depth of the ViT's layer %d."),
                                       block, model_->blocks[static_cast<std::size_t>(block)].name.c_str(), layer);
  // TRANSLATORS: "Why?" is the name of another view (its tab).
  const char* help = _("The block's feature maps weighted by how much the class's score rises with each (the mean of its "
                       "gradient), summed, negatives cut. Beside the ViT's Why? view: where each model found its evidence.");
  if (not_drawable(state, r, r.cam_key == key, key, says, _("Computing the gradients ..."), "grad-cam")) return;
  std::string top;
  for (const auto& [c, p] : r.top)
    top += (top.empty() ? "" : ", ") + model_->arch.labels[static_cast<std::size_t>(c)] + " " + std::to_string(static_cast<int>(std::lround(p * 100))) + "%";
  map_with_words(state, vit, r.cam, "cnn-grad-cam", key, "cnn_grad_cam", says);
  ImGui::PushTextWrapPos(0.0f);
  // TRANSLATORS: %s lists the likeliest classes with their probabilities ("sneaker 62%, sandal 20%").
  ImGui::TextDisabled(_("The ResNet's likeliest: %s"), top.c_str());
  ImGui::PopTextWrapPos();
  help_marker(help);
  ImGui::EndGroup();
  state.report.cnn_drawn = {{"show", "grad-cam"}, {"block", block}, {"class", r.top.empty() ? -1 : r.top[0].first},
                            {"size", {r.cam.cols(), r.cam.rows()}}, {"max", r.cam.maxCoeff()}};
}

void CnnViewState::draw_cka(AppState& state, VitSession& vit) {
  const VitRun* run = vit.run();
  const int count = state.cka_count;
  const std::string key = std::to_string(run->model().id) + "|" + std::to_string(model_->id) + "|" + std::to_string(count);
  // TRANSLATORS: CKA: centered kernel alignment; "stage.block" is how the columns are labelled (1.0, 1.1, 2.0, ...).
  ImGui::TextUnformatted(_("Linear CKA: the ViT's layers (rows) x the ResNet's blocks (columns, stage.block)"));
  ImGui::SameLine();
  // TRANSLATORS: "CKA across two models" is a section title of docs/MATH.md (English); "the CKA view" is another view.
  help_marker(_("Over the first Fashion-MNIST test images (as many as the CKA view uses), one example per image, each layer's "
                "whole output flattened (docs/MATH.md, \"CKA across two models\"). 1: the two layers represent the images "
                "alike, up to a rotation and a scale; 0: unrelated. With trained models (Raghu et al. 2021, fig. 2) many of the "
                "ResNet's lower blocks match a few of the ViT's lowest layers."));
  CnnResults& r = *results_;
  const bool have = r.cka && r.cka_key == key;
  if (!have && r.cka_pending != key && r.error_key != key) {
    r.cka_pending = key;
    r.cka_done->store(0);
    r.cka_total = 2 * count;
    std::weak_ptr<CnnResults> slot = results_;
    const std::shared_ptr<const VitRun> vrun = vit.run_ptr();
    const std::shared_ptr<const ResnetModel> cnn = model_;
    const std::shared_ptr<std::atomic<int>> done = r.cka_done;
    const std::string a_name = vit.label(), b_name = model_name(loaded_);
    vit.scheduler().submit<std::pair<CkaResult, int>>(
        job(vit, "cka"),
        [vrun, cnn, count, done, a_name, b_name](const std::atomic<bool>& stop) {
          const auto start = std::chrono::steady_clock::now();
          const FashionMnistSplit test = load_fashion_mnist(false, fashion_mnist_dir(), &stop);
          const std::int64_t budget = vit_memory_budget();
          const CkaModel a = vit_cka_model(vrun->model(), budget), b = resnet_cka_model(*cnn, budget);
          const int n = std::min(count, test.count);
          auto image = [&](int i) { return fashion_mnist_image(test, i); };
          // Exact while every image's features fit half the budget, else minibatches of 100 (kCkaAutoBatch).
          const CrossCka m = cross_cka(a, b, n, image, kCkaAutoBatch, budget, &stop, [&](int d, int) { done->store(d); });
          const int batch = m.batch;
          CkaResult out;
          out.cka = m.cka;
          out.rows = a.layers;
          for (const std::string& c : b.layers) out.cols.push_back(c.starts_with("layer") ? c.substr(5) : c);  // "1.0": stage.block
          out.a_name = a_name;
          out.b_name = b_name;
          out.same_model = false;
          // The record's words (the sidecar's cnn_drawn.examples): English; the window says it in the user's language.
          out.examples = std::to_string(m.images) + " Fashion-MNIST test images" + (batch ? ", minibatches of " + std::to_string(batch) : "");
          out.tokens = m.images;
          out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          return std::make_pair(std::move(out), batch);
        },
        [slot, key](std::future<std::pair<CkaResult, int>> f) {
          const auto res = slot.lock();
          if (!res) return;
          res->cka_pending.clear();
          try {
            std::tie(res->cka, res->cka_batch) = f.get();
            res->cka->key = key;
            res->cka_key = key;
          } catch (const std::exception& e) {
            res->error = e.what(), res->error_key = key;
          }
        },
        Scheduler::Priority::Background);
  }
  if (r.cka_pending == key) {
    const float bar =
        ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(_("Cancel")).x - ImGui::GetStyle().FramePadding.x * 4;
    ImGui::ProgressBar(static_cast<float>(r.cka_done->load()) / static_cast<float>(std::max(1, r.cka_total)), ImVec2(std::max(bar, ui_px(60)), 0),
                       text_format(_("CKA over %d images"), count).c_str());
    ImGui::SameLine();
    if (ImGui::Button(_("Cancel##cnn_cka"))) {
      vit.scheduler().cancel(job(vit, "cka"));
      r.cka_pending.clear();
      r.error = _("cancelled"), r.error_key = key;
    }
    record_widget("cnn_cka_cancel");
    state.commands.redraw();
    return;
  }
  if (r.error_key == key) {
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "%s", r.error.c_str());
    ImGui::SameLine();
    if (ImGui::Button(_("Compute##cnn_cka"))) r.error_key.clear();
    record_widget("cnn_cka_compute");
    return;
  }
  if (!have) return;
  ImGui::SameLine();
  const int images = static_cast<int>(r.cka->tokens);
  std::string examples =
      text_format(tr_n("%d Fashion-MNIST test image", "%d Fashion-MNIST test images", images), images);
  // TRANSLATORS: goes after "500 Fashion-MNIST test images" when CKA was computed in minibatches of that many images.
  if (r.cka_batch) examples += text_format(_(", minibatches of %d"), r.cka_batch);
  // TRANSLATORS: model A x model B, what CKA was computed over, and the seconds it took (s: seconds).
  ImGui::TextDisabled(_("%s x %s, %s, %.0f s"), r.cka->a_name.c_str(), r.cka->b_name.c_str(), examples.c_str(), r.cka->seconds);
  draw_cka_heatmap(state, *r.cka);
  nlohmann::json m = nlohmann::json::array();
  for (Eigen::Index i = 0; i < r.cka->cka.rows(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index j = 0; j < r.cka->cka.cols(); ++j) row.push_back(r.cka->cka(i, j));
    m.push_back(row);
  }
  state.report.cnn_drawn = {{"show", "cka"}, {"rows", r.cka->rows}, {"cols", r.cka->cols}, {"cka", m}, {"examples", r.cka->examples}};
}

void CnnViewState::draw_features(AppState& state, VitSession& vit, SourceChoice& choice) {
  const VitRun* run = vit.run();
  const int layer = choice_layer(choice, run->layers());
  const int block = matched_block(layer, run->layers(), static_cast<int>(model_->blocks.size()));
  const std::string key = std::to_string(vit.generation()) + "|" + std::to_string(model_->id);
  CnnResults& r = *results_;
  if (r.pass_key != key && r.pass_pending != key) {
    r.pass_pending = key;
    std::weak_ptr<CnnResults> slot = results_;
    const std::shared_ptr<const ResnetModel> cnn = model_;
    const std::shared_ptr<const CnnInput> input = input_;
    vit.scheduler().submit<std::shared_ptr<const ResnetPass>>(
        job(vit, "features"),
        [cnn, input](const std::atomic<bool>& stop) {
          return std::make_shared<const ResnetPass>(resnet_forward(*cnn, *input, vit_memory_budget(), 0, &stop));
        },
        [slot, key](std::future<std::shared_ptr<const ResnetPass>> f) {
          const auto res = slot.lock();
          if (!res) return;
          res->pass_pending.clear();
          res->pass_key = key;
          try {
            res->pass = f.get();
          } catch (const std::exception& e) {
            res->error = e.what(), res->error_key = key;
          }
        });
  }
  // TRANSLATORS: %1$d is a block's index, %2$s its name (layer2.1), %3$d the ViT's layer at the same depth.
  const std::string says = text_format(_("Block %d (%s)'s feature map of one channel, the depth of the ViT's layer %d: what one of "
                                         "its filters answers to, over the photo."),
                                       block, model_->blocks[static_cast<std::size_t>(block)].name.c_str(), layer);
  if (not_drawable(state, r, r.pass_key == key, key, says, _("Running the ResNet ..."), "features")) return;
  const FeatureMap& m = r.pass->blocks[static_cast<std::size_t>(block)];
  state.cnn_channel = std::clamp(state.cnn_channel, 0, m.channels - 1);
  const Matrix map = Eigen::Map<const Matrix>(m.v.row(state.cnn_channel).data(), m.height, m.width);
  map_with_words(state, vit, map, "cnn-features", key + "|" + std::to_string(block) + "|" + std::to_string(state.cnn_channel), "cnn_features",
                 says);
  ImGui::SetNextItemWidth(std::min(ui_px(160), ImGui::GetContentRegionAvail().x));
  // TRANSLATORS: a slider: which channel of the block's feature map is shown.
  ImGui::SliderInt(_("channel##cnn"), &state.cnn_channel, 0, m.channels - 1, "%d", ImGuiSliderFlags_AlwaysClamp);
  record_widget("cnn_channel");
  // TRANSLATORS: the feature map: its number of channels, each width x height, and its largest value.
  ImGui::TextDisabled(_("%d channels of %d x %d; largest %.3g"), m.channels, m.width, m.height,
                      static_cast<double>(map.maxCoeff()));
  ImGui::EndGroup();
  state.report.cnn_drawn = {{"show", "features"}, {"block", block}, {"channel", state.cnn_channel},
                            {"size", {m.width, m.height}}, {"max", map.maxCoeff()}, {"sum", map.sum()}};
}

void CnnViewState::draw(ViewSource& s) {
  AppState& state = s.state;
  VitSession& vit = *s.vit;
  if (!vit.run()) {
    ImGui::TextUnformatted(_("No model loaded."));
    return;
  }
  model_line(state, vit);
  if (!model_) {
    if (state.cnn_model.empty())
      text_wrapped("%s", _("Set a ResNet beside this ViT: a ResNet-18 with random weights, or a checkpoint."));
    return;
  }
  // The ResNet's input: the ViT's photo, its short side the ResNet's trained size.
  if (!input_ || input_image_ != vit.image()) {
    input_image_ = vit.image();
    try {
      input_ = std::make_shared<const CnnInput>(cnn_input(model_->arch, *input_image_, model_->arch.input_size));
    } catch (const std::exception& e) {
      input_.reset();
      text_wrapped("%s", e.what());
      return;
    }
  }
  // The four pictures on the model's line, flowed onto the next where a narrow column (a
  // projector at UI scale 2) has no room: none cut.
  int show = static_cast<int>(state.cnn_show);
  const std::pair<const char*, CnnShow> choices[] = {
      // TRANSLATORS: a choice of picture: the two models' effective receptive fields.
      {N_("fields"), CnnShow::Field},
      {N_("Grad-CAM"), CnnShow::GradCam},
      {N_("CKA"), CnnShow::Cka},
      // TRANSLATORS: a choice of picture: a ResNet block's feature map, one channel at a time.
      {N_("features"), CnnShow::Features}};
  const char* names[] = {"cnn_show_field", "cnn_show_grad_cam", "cnn_show_cka", "cnn_show_features"};
  for (std::size_t i = 0; i < std::size(choices); ++i) {
    const char* label = _(choices[i].first);
    same_line_if_room(radio_width(label));
    ImGui::RadioButton((std::string(label) + "##cnn_show").c_str(), &show, static_cast<int>(choices[i].second));
    record_widget(names[i]);
  }
  state.cnn_show = static_cast<CnnShow>(show);
  switch (state.cnn_show) {
    case CnnShow::Field: draw_fields(state, vit, *s.choice); break;
    case CnnShow::GradCam: draw_grad_cam(state, vit, *s.choice); break;
    case CnnShow::Cka: draw_cka(state, vit); break;
    case CnnShow::Features: draw_features(state, vit, *s.choice); break;
  }
}

namespace {

// The view itself keeps nothing (one list of views serves every source, and `render`'s lives
// as long as the program): its state is the session's.
class CnnView final : public View {
 public:
  CnnView()
      // no tour text: not a chapter view
      // TRANSLATORS: the CNN view's tab (CNN: a convolutional neural network) and its title.
      : View(ViewText{"cnn", N_("CNN"), N_("The ViT beside a CNN")}, kNeedRows | kNeedVitPass) {}
  void draw(ViewSource& s) override {
    std::shared_ptr<CnnViewState>& st = s.vit->view_data().cnn;
    if (!st) st = std::make_shared<CnnViewState>();
    st->draw(s);
  }
};

}  // namespace

std::unique_ptr<View> make_cnn_view() { return std::make_unique<CnnView>(); }

}  // namespace attnlab::app

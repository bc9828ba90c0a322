// The CKA view: layer × layer linear CKA of one model, or of model A's layers against model B's,
// over Fashion-MNIST test images or the tokens of the current photo (cka_view.hpp).
#include "app/gui/train/cka_view.hpp"

#include "app/gui/state/ui_common.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/vit_run.hpp"
#include "core/vit/vit_similarity.hpp"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace attnlab::app {

std::string CkaRequest::key() const {
  if (!a || !b) return {};
  std::string k = std::to_string(a->id) + "|" + std::to_string(b->id) + "|";
  if (examples == CkaExamples::Photo) {
    char ptr[32];  // the photo object's identity: the result keeps it alive, so no other takes its address
    std::snprintf(ptr, sizeof ptr, "%p", static_cast<const void*>(photo.get()));
    return k + "photo|" + ptr + "|" + std::to_string(resize);
  }
  return k + "fashion|" + std::to_string(count);
}

std::string CkaRequest::examples_text() const {
  if (examples == CkaExamples::Photo)
    // TRANSLATORS: what CKA is computed over: the photo's width x height, then the short side the model ran it at (pixels).
    return photo && a ? text_format(_("the tokens of the photo (%d x %d pixels at a short side of %d)"), photo->width, photo->height,
                                    resize > 0 ? resize : vit_trained_size(a->arch))
                      : std::string(_("the tokens of the photo"));
  return text_format(tr_n("%d Fashion-MNIST test image", "%d Fashion-MNIST test images", count), count);
}

CkaRequest cka_request(const VitSession& session, int resize) {
  CkaRequest r;
  if (!session.run()) return r;
  r.a = r.b = session.run()->model_ptr();
  // A model opened as a folder is named by it ("fashion_vit/model.safetensors").
  const bool folder = !session.opened_path().empty() && session.opened_path() != session.file();
  r.a_name = r.b_name = (folder ? session.file().parent_path().filename().string() + "/" : std::string()) + session.label();
  r.photo = session.image();
  r.resize = resize;
  return r;
}

namespace {

struct JobOut {
  CkaResult result;
  std::shared_ptr<const FashionMnistSplit> test;  // read by this job (null: it was there)
  std::shared_ptr<const Image> photo;             // kept with the result (its address is in the key)
};

}  // namespace

void CkaJob::start(const CkaRequest& r) {
  if (!r.a || !r.b) return;
  done_ = std::make_shared<std::atomic<int>>(0);
  total_ = std::make_shared<std::atomic<int>>(1);
  running_key_ = r.key();
  // What it is over, in the language of the moment (here, on the main thread).
  auto work = [r, examples = r.examples_text(), test = test_, done = done_, total = total_](const std::atomic<bool>& stop) {
    const auto t0 = std::chrono::steady_clock::now();
    JobOut out;
    std::vector<Image> images;
    if (r.examples == CkaExamples::Photo) {
      if (!r.photo) throw Error(_("there is no photo to take the tokens of"));
      images.push_back(*r.photo);
      out.photo = r.photo;
    } else {
      std::shared_ptr<const FashionMnistSplit> split = test;
      if (!split) split = out.test = std::make_shared<const FashionMnistSplit>(load_fashion_mnist(false, fashion_mnist_dir(), &stop));
      const int n = std::min(r.count, split->count);
      images.reserve(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) images.push_back(fashion_mnist_image(*split, i));
    }
    // One thread: the scheduler's other one (training) and the UI keep the second core.
    const VitCka m = vit_cka(*r.a, *r.b, images, r.examples == CkaExamples::Photo ? r.resize : 0, vit_memory_budget(), 1, &stop,
                             [&](int d, int t) {
                               total->store(t);
                               done->store(d);
                             });
    CkaResult& c = out.result;
    c.key = r.key();
    c.cka = m.cka;
    c.rows = vit_cka_labels(r.a->arch.depth);
    c.cols = vit_cka_labels(r.b->arch.depth);
    c.a_name = r.a_name;
    c.b_name = r.b_name;
    c.examples = examples;
    c.same_model = r.a == r.b;
    c.tokens = m.examples;
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  };
  const std::string key = running_key_;
  scheduler_.submit<JobOut>(key_, std::move(work), [this, key](std::future<JobOut> result) {
    running_key_.clear();
    try {
      JobOut out = result.get();
      if (out.test) test_ = std::move(out.test);
      result_ = std::move(out.result);
      photo_ = std::move(out.photo);
    } catch (const std::exception& e) {
      failed_key_ = key;
      error_ = e.what();
      new_error_ = error_;
    }
  });
}

void CkaJob::cancel() {
  scheduler_.cancel(key_);
  running_key_.clear();
}

float CkaJob::progress() const {
  return std::clamp(static_cast<float>(done_->load()) / static_cast<float>(std::max(1, total_->load())), 0.0f, 1.0f);
}

namespace {

/// The examples' choice: Fashion-MNIST test images (and how many) or the photo's tokens.
void examples_choice(AppState& state) {
  if (ImGui::RadioButton(_("Fashion-MNIST test images"), state.cka_examples == CkaExamples::FashionTest))
    state.cka_examples = CkaExamples::FashionTest;
  record_widget("cka_examples_fashion");
  ImGui::SameLine();
  int count = state.cka_count;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  if (ImGui::InputInt("##cka_count", &count, 100, 1000, ImGuiInputTextFlags_EnterReturnsTrue)) {
    const FieldRange r = field_range("cka.count");  // the flag's and the settings file's range
    state.cka_count = std::clamp(count, static_cast<int>(r.lo), static_cast<int>(r.hi));
  }
  record_widget("cka_count");
  ImGui::SameLine();
  if (ImGui::RadioButton(_("the tokens of this photo"), state.cka_examples == CkaExamples::Photo)) state.cka_examples = CkaExamples::Photo;
  record_widget("cka_examples_photo");
  ImGui::SameLine();
  // TRANSLATORS: CKA: centered kernel alignment. D is the tokens' dimension; "Representational similarity (CKA)" is a
  // section title of docs/MATH.md (English).
  help_marker(_("Linear CKA (Kornblith et al. 2019) between every pair of layers. Every token of every image is one example: the rows of a layer's representation are the tokens "
                "(cls, registers, patches) of the images, each a D-vector. Fashion-MNIST images are scaled to the model's "
                "input size as the app shows them; the photo is taken at the size the model ran it. docs/MATH.md, "
                "\"Representational similarity (CKA)\"."));
}

}  // namespace

void draw_cka_heatmap(const AppState& state, const CkaResult& r) {
  const auto rows = static_cast<int>(r.cka.rows()), cols = static_cast<int>(r.cka.cols());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize(), pad = ui_px(4);
  float label_w = 0;
  for (const std::string& s : r.rows) label_w = std::max(label_w, ImGui::CalcTextSize(s.c_str()).x);
  label_w += pad * 2;
  const float label_h = font + pad * 2;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Cells as large as the panel allows, square where it can; in a wide, low panel (the window's
  // lower row) up to three times as wide as tall, so that the values still fit.
  const float fit_w = (avail.x - label_w - colour_bar_space()) / static_cast<float>(cols);
  const float cell_h = std::max(ui_px(6), std::min(fit_w, (avail.y - label_h - ui_px(4)) / static_cast<float>(rows)));
  const float cell_w = std::max(ui_px(6), std::min(fit_w, cell_h * 3.0f));
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 grid0(p0.x + label_w, p0.y);
  const ImVec2 size(cell_w * static_cast<float>(cols), cell_h * static_cast<float>(rows));
  ImGui::InvisibleButton("cka_heatmap", ImVec2(label_w + size.x, size.y + label_h));
  record_widget("cka_heatmap");
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float text_w = ImGui::CalcTextSize("0.00").x;
  const bool numbers = cell_w >= text_w + pad && cell_h >= font + 2;
  int hover_i = -1, hover_j = -1;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const float v = static_cast<float>(r.cka(i, j));
      const auto c = colormap_rgb8(state.colormap, v);
      const ImVec2 a(grid0.x + cell_w * static_cast<float>(j), grid0.y + cell_h * static_cast<float>(i));
      const ImVec2 b(a.x + cell_w, a.y + cell_h);
      dl->AddRectFilled(a, b, rgb(c[0], c[1], c[2]));
      if (numbers) {
        char text[16];
        std::snprintf(text, sizeof text, "%.2f", static_cast<double>(v));
        const float luma = 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
        const ImVec2 ts = ImGui::CalcTextSize(text);
        dl->AddText(ImVec2(a.x + (cell_w - ts.x) * 0.5f, a.y + (cell_h - ts.y) * 0.5f),
                    luma > 140 ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255), text);
      }
      if (hovered && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y) hover_i = i, hover_j = j;
    }
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  for (int i = 0; i < rows; ++i) {
    const std::string& s = r.rows[static_cast<std::size_t>(i)];
    dl->AddText(ImVec2(grid0.x - pad - ImGui::CalcTextSize(s.c_str()).x, grid0.y + cell_h * (static_cast<float>(i) + 0.5f) - font * 0.5f),
                text_col, s.c_str());
  }
  for (int j = 0; j < cols; ++j) {
    const std::string& s = r.cols[static_cast<std::size_t>(j)];
    dl->AddText(ImVec2(grid0.x + cell_w * (static_cast<float>(j) + 0.5f) - ImGui::CalcTextSize(s.c_str()).x * 0.5f, grid0.y + size.y + pad),
                text_col, s.c_str());
  }
  if (hover_i >= 0) {
    const ImVec2 a(grid0.x + cell_w * static_cast<float>(hover_j), grid0.y + cell_h * static_cast<float>(hover_i));
    dl->AddRect(a, ImVec2(a.x + cell_w, a.y + cell_h), IM_COL32(0, 255, 255, 255), 0, 0, 2.0f);
    ImGui::BeginTooltip();
    // TRANSLATORS: a hovered cell: "A " or nothing, a layer of the rows, "B " or nothing, a layer of the columns, their CKA.
    ImGui::Text(_("%s%s x %s%s: CKA %.4f"), r.same_model ? "" : "A ", r.rows[static_cast<std::size_t>(hover_i)].c_str(),
                r.same_model ? "" : "B ", r.cols[static_cast<std::size_t>(hover_j)].c_str(), r.cka(hover_i, hover_j));
    ImGui::EndTooltip();
  }
  ImGui::SameLine();
  colour_bar(state.colormap, Normalization::MinMax, ValueRange{0.0f, 1.0f}, size.y);
}

namespace {

nlohmann::json drawn_json(const CkaResult& r, bool current) {
  nlohmann::json m = nlohmann::json::array();
  for (Eigen::Index i = 0; i < r.cka.rows(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index j = 0; j < r.cka.cols(); ++j) row.push_back(r.cka(i, j));
    m.push_back(row);
  }
  return {{"rows", r.rows},         {"cols", r.cols},     {"cka", m},           {"model_a", r.a_name},
          {"model_b", r.b_name},     {"same_model", r.same_model}, {"examples", r.examples}, {"tokens", r.tokens},
          {"seconds", r.seconds},    {"current", current}};
}

}  // namespace

void draw_cka_view(AppState& state, CkaJob& job, const CkaRequest& request, bool auto_start) {
  if (!request.a || !request.b) {
    ImGui::TextUnformatted(_("No model loaded."));
    return;
  }
  text_wrapped(_("Linear CKA (docs/MATH.md): 1 = two layers represent the examples alike (up to a rotation and a "
                 "scale), 0 = unrelated. Bright blocks: layers doing nearly the same."));
  examples_choice(state);
  if (const auto e = job.poll_error()) state.show_error(text_format(_("layers' similarity: %s"), e->c_str()));
  CkaRequest req = request;
  req.examples = state.cka_examples;
  req.count = state.cka_count;
  const std::string key = req.key();
  const CkaResult* r = job.result();
  const bool have = r && r->key == key;
  const bool running = job.busy() && job.running_key() == key;
  if (!have && !running && job.failed_key() != key && (auto_start || (!r && !job.busy()))) job.start(req);
  if (job.busy()) {
    const float bar = ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(_("Cancel")).x - ImGui::GetStyle().FramePadding.x * 4;
    // TRANSLATORS: the progress bar's text; %s says what CKA is computed over ("500 Fashion-MNIST test images").
    const std::string what = text_format(_("CKA over %s"), req.examples_text().c_str());
    ImGui::ProgressBar(job.progress(), ImVec2(std::max(bar, ui_px(60)), 0), what.c_str());
    ImGui::SameLine();
    if (ImGui::Button(_("Cancel##cka"))) job.cancel();
    record_widget("cka_cancel");
    state.commands.redraw();  // the bar moves and the result shows without an event
  } else if (!have) {
    if (ImGui::Button(r ? _("Compute again for the model as it is now##cka") : _("Compute##cka"))) job.start(req);
    record_widget("cka_compute");
    if (job.failed_key() == key) {
      ImGui::SameLine();
      ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "%s", job.error().c_str());
    }
  }
  if (!r) return;
  // What the matrix is of: the model(s) and the examples, and whether it is the current one.
  // TRANSLATORS: the model, what CKA was computed over ("500 Fashion-MNIST test images"), the tokens in all.
  if (r->same_model) ImGui::TextDisabled(_("%s; over %s (%lld tokens)"), r->a_name.c_str(), r->examples.c_str(), static_cast<long long>(r->tokens));
  else
    // TRANSLATORS: the rows' model A, the columns' model B, what CKA was computed over, the tokens in all.
    ImGui::TextDisabled(_("rows: A %s; columns: B %s; over %s (%lld tokens)"), r->a_name.c_str(), r->b_name.c_str(), r->examples.c_str(),
                        static_cast<long long>(r->tokens));
  if (!have) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, 1.0f), "%s", _("(of an earlier model or other examples)"));
  }
  draw_cka_heatmap(state, *r);
  state.report.cka_drawn = drawn_json(*r, have);
}

// The view (view.hpp): the source's own similarity job, drawn by the caller (its request).
class SimilarityView final : public View {
 public:
  SimilarityView()
      // TRANSLATORS: CKA: centered kernel alignment, the tab's short label.
      : View(ViewText{"cka", N_("CKA"), N_("Similarity of layers (CKA)")}, kNeedRows | kNeedVitPass | kNeedSimilarity) {}
  void draw(ViewSource& s) override { s.draw_similarity(); }
};

std::unique_ptr<View> make_similarity_view() { return std::make_unique<SimilarityView>(); }

}  // namespace attnlab::app

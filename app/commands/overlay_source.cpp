#include "app/commands/overlay_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "app/commands/row_command.hpp"
#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/base/parse.hpp"
#include "core/gpu/vit_backend.hpp"
#include "core/hand_made/tokens.hpp"
#include "core/io/overlay.hpp"
#include "core/vit/relevance.hpp"
#include "core/vit/vit_run.hpp"

namespace attnlab::app {

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// The numbers of --sweep-values (or `fallback`), each within [lo, hi].
std::vector<float> sweep_numbers(const SweepRequest& sweep, const char* fallback, float lo, float hi) {
  std::vector<float> out;
  for (const std::string& v : split_commas(sweep.values.empty() ? fallback : sweep.values))
    out.push_back(parse_float(v, "--sweep-values", lo, hi));
  return out;
}

// The ViT's choice resolved against a model and a grid.
struct Resolved {
  int layer = 0;
  HeadChoice head{-1, HeadFusion::Mean};
  int query = 0;  // token
};

Resolved resolve(const OverlayChoices& c, const VitRun& run) {
  const SourceChoice chosen = parse_source_choice(c.choice, vit_choice_shape(run), Document().vit);
  return {choice_layer(chosen, run.layers()), choice_head(chosen, run.heads()), choice_query(chosen, run.grid())};
}

std::string query_text(int query, const SourceGrid& g) {
  if (query == 0) return "cls";
  if (query < g.prefix) return "reg" + std::to_string(query - 1);
  const int p = query - g.prefix;
  return std::to_string(p % g.cols) + "," + std::to_string(p / g.cols);
}

std::string cell_text(Cell c) { return std::to_string(c.col) + "," + std::to_string(c.row); }

// A row of A over the patch keys at temperature tau: softmax(s_ij / tau) over all T keys from the
// model's own scores (VitRun::head_step), heads fused as patch_row fuses them.
std::vector<float> row_at_temperature(const VitRun& run, int layer, HeadChoice head, int query, double tau) {
  const int prefix = run.grid().prefix, N = run.grid().N();
  auto patch_keys = [&](int h) {
    const VitHeadStep step = run.head_step(layer, h, query);
    const double top = *std::max_element(step.scores.begin(), step.scores.end());
    std::vector<double> w(step.scores.size());
    double Z = 0;
    for (std::size_t j = 0; j < w.size(); ++j) Z += (w[j] = std::exp((step.scores[j] - top) / tau));
    Matrix out(1, N);
    for (int j = 0; j < N; ++j) out(0, j) = static_cast<float>(w[static_cast<std::size_t>(prefix + j)] / Z);
    return out;
  };
  const Matrix m = head.head >= 0 ? patch_keys(head.head) : fuse_heads(run.heads(), head.fusion, patch_keys);
  return {m.data(), m.data() + m.size()};
}

// The display settings every overlay's sidecar names.
nlohmann::json display_json(const Document& d) {
  return {{"colormap", std::string(colormap_name(d.colormap))},
          {"normalization", std::string(normalization_name(d.normalization))},
          {"opacity", d.opacity},
          {"bilinear", d.bilinear}};
}

nlohmann::json program_json() { return {{"name", "attnlab"}, {"version", ATTNLAB_VERSION}}; }

// The model, its runner and the display settings: the map over the model's input picture.
class VitOverlay : public OverlaySource {
 public:
  VitOverlay(const Document& d, const OverlayChoices& choices) : d_(d), choices_(choices) {
    if (choices.view != "map" && choices.view != "rollout" && choices.view != "norms" && choices.view != "erf")
      throw Error(text_format(_("unknown view '%s' (expected map, rollout, norms or erf)"), choices.view.c_str()));
    std::error_code ec;
    if (!std::filesystem::exists(d.model_path, ec))
      throw Error(text_format(_("the model '%s' does not exist"), d.model_path.string().c_str()));
    model_ = std::make_shared<const VitModel>(load_vit(d.model_path));
    runner_ = choose_vit_runner(d.vit_backend);
    budget_ = vit_memory_budget();
  }

  std::int64_t memory_budget() const override { return budget_; }

  // The forward pass (every later read is cheap); the choice checked on this image's grid.
  void set_image(const Image& image) override {
    run_.emplace(model_, image, resize(), *runner_.runner, budget_);
    base_ = resolve(choices_, *run_);
    photo_ = crop_image(vit_scaled_image(image, resize()), run_->input_width(), run_->input_height());
  }

  nlohmann::json plan_sweep(const SweepRequest& sweep) override {
    const SourceGrid g = run_->grid();
    frames_.clear();
    nlohmann::json values = nlohmann::json::array();
    if (sweep.kind == "layer")
      for (int l = 0; l < run_->layers(); ++l) {
        frames_.push_back({{l, base_.head, base_.query}, 1.0});
        values.push_back(l);
      }
    else if (sweep.kind == "head" && choices_.view != "erf")
      for (int h = 0; h < run_->heads(); ++h) {
        frames_.push_back({{base_.layer, HeadChoice{h, HeadFusion::Mean}, base_.query}, 1.0});
        values.push_back(h);
      }
    else if (sweep.kind == "query-row") {
      const int row = base_.query >= g.prefix ? (base_.query - g.prefix) / g.cols : g.rows / 2;  // a prefix query: the middle row
      for (int c = 0; c < g.cols; ++c) {
        frames_.push_back({{base_.layer, base_.head, g.prefix + row * g.cols + c}, 1.0});
        values.push_back(std::to_string(c) + "," + std::to_string(row));
      }
    } else if (sweep.kind == "tau" && choices_.view == "map") {
      for (const float tau : sweep_numbers(sweep, "0.25,0.5,1,2,4", 1e-3f, 1e3f)) {
        frames_.push_back({base_, tau});
        values.push_back(tau);
      }
    } else {
      throw Error(text_format(_("--sweep %s is not a sweep of a ViT's --view %s"), sweep.kind.c_str(), choices_.view.c_str()));
    }
    return values;
  }

  // The model's input (scaled, cropped to whole patches) with the map over it; τ != 1 only for
  // the map view (a sweep).
  OverlayPicture draw(int frame) override {
    const auto& [r, tau] = frame < 0 ? std::pair<Resolved, double>{base_, 1.0} : frames_.at(static_cast<std::size_t>(frame));
    const VitRun& run = *run_;
    const SourceGrid g = run.grid();
    std::vector<float> values;
    if (choices_.view == "erf") {  // per input pixel, not per patch (SPEC §13)
      const Matrix field = vit_receptive_field(run.model(), run.input(), r.layer, r.query, budget_);
      values.assign(field.data(), field.data() + field.size());
      return {overlay_heat_map(photo_, values, static_cast<int>(field.cols()), static_cast<int>(field.rows()), d_.colormap,
                               d_.normalization, d_.opacity, d_.bilinear),
              photo_.width, photo_.height};
    }
    if (choices_.view == "rollout")
      values = run.rollout_row(r.layer, r.head.head >= 0 ? HeadFusion::Mean : r.head.fusion, r.query);
    else if (choices_.view == "norms") {
      const std::vector<float> norms = run.token_norms(r.layer);
      values.assign(norms.begin() + g.prefix, norms.end());
    } else if (tau != 1.0)
      values = row_at_temperature(run, r.layer, r.head, r.query, tau);
    else
      values = run.patch_row(r.layer, r.head, r.query);
    return {overlay_heat_map(photo_, values, g.cols, g.rows, d_.colormap, d_.normalization, d_.opacity, d_.bilinear),
            photo_.width, photo_.height};
  }

  nlohmann::json sidecar() const override {
    nlohmann::json j = to_json(d_);
    j["program"] = program_json();
    j["vit_model_file"] = model_->file.string();
    j["vit_model_sha256"] = model_->sha256;
    j["backend"] = run_->path() + " (" + runner_.why + ")";
    j["overlay"] = {{"view", choices_.view},
                    {"layer", base_.layer},
                    {"head", head_choice_text(base_.head)},
                    {"query", query_text(base_.query, run_->grid())},
                    {"resize", resize()},
                    {"grid", {{"cols", run_->grid().cols}, {"rows", run_->grid().rows}}}};
    j["overlay"].update(display_json(d_));
    return j;
  }

 private:
  int resize() const { return d_.vit_resize > 0 ? d_.vit_resize : vit_trained_size(model_->arch); }

  Document d_;
  OverlayChoices choices_;
  std::shared_ptr<const VitModel> model_;
  VitRunnerChoice runner_;
  std::int64_t budget_ = 0;
  std::optional<VitRun> run_;
  Image photo_;  // the model's input picture: the image scaled and cropped to whole patches
  Resolved base_;
  std::vector<std::pair<Resolved, double>> frames_;  // a sweep's choice and τ, frame by frame
};

// The hand-made heads' row over the whole image (make_hand_made_overlay).
class HandMadeOverlay : public OverlaySource {
 public:
  HandMadeOverlay(const Document& d, bool query_centred) : d_(d), query_centred_(query_centred) {}

  std::int64_t memory_budget() const override { return static_cast<std::int64_t>(attnlab::memory_budget()); }

  void set_image(const Image& image) override {
    rows_.set_image(image);
    if (query_centred_) {
      const PatchGrid g = base_grid();
      d_.hand_made.cell = Cell{g.cols / 2, g.rows / 2};
    }
  }

  nlohmann::json plan_sweep(const SweepRequest& sweep) override {
    const PatchGrid g = base_grid();
    token_at(g, d_.hand_made.cell.col, d_.hand_made.cell.row);  // the query must be in the grid
    frames_.clear();
    nlohmann::json values = nlohmann::json::array();
    if (sweep.kind == "head") {
      for (int h = 0; h < kHeadCount; ++h) {
        frames_.emplace_back(d_).hand_made.head = HeadChoice{h, HeadFusion::Mean};
        values.push_back(std::string(head_name(static_cast<HeadKind>(h))));
      }
    } else if (sweep.kind == "query-row") {
      for (int c = 0; c < g.cols; ++c) {
        frames_.emplace_back(d_).hand_made.cell = Cell{c, d_.hand_made.cell.row};
        values.push_back(cell_text(frames_.back().hand_made.cell));
      }
    } else if (sweep.kind == "tau") {
      for (const float tau : sweep_numbers(sweep, "0.25,0.5,1,2,4", 0.01f, 100.0f)) {
        frames_.emplace_back(d_).attention.temperature = tau;
        values.push_back(tau);
      }
    } else if (sweep.kind == "K") {
      plan_patch_sizes(sweep, g, values);
    } else {
      throw Error(text_format(_("--sweep %s is not a sweep of the hand-made heads"), sweep.kind.c_str()));
    }
    return values;
  }

  OverlayPicture draw(int frame) override {
    const Document& d = frame < 0 ? d_ : frames_.at(static_cast<std::size_t>(frame));
    const HandMadeRow row = rows_.row(d);
    if (row.empty && !said_empty_)
      // TRANSLATORS: the query patch as COL,ROW.
      std::fprintf(stderr, _("attnlab: every key is masked for the query %s; its row is all 0\n"),
                   cell_text(d.hand_made.cell).c_str());
    said_empty_ = said_empty_ || row.empty;
    const PatchGrid& g = row.grid;
    const Image& image = rows_.image();
    return {overlay_heat_map_on_grid(image, row.weights, g.cols, g.rows, g.cols * g.K, g.rows * g.K, d_.colormap,
                                     d_.normalization, d_.opacity, d_.bilinear),
            image.width, image.height};
  }

  nlohmann::json sidecar() const override {
    nlohmann::json j = to_json(d_);
    j["program"] = program_json();
    j["backend"] = rows_.backend();
    const PatchGrid g = base_grid();
    j["overlay"] = {{"view", "map"},
                    {"source", "hand_made"},
                    {"head", std::string(head_name(static_cast<HeadKind>(d_.hand_made.head.head)))},
                    {"query", cell_text(d_.hand_made.cell)},
                    {"grid", {{"cols", g.cols}, {"rows", g.rows}, {"K", g.K}}},
                    {"map_pixels", {{"width", g.cols * g.K}, {"height", g.rows * g.K}}}};
    j["overlay"].update(display_json(d_));
    return j;
  }

 private:
  PatchGrid base_grid() const {
    return make_grid(rows_.image().width, rows_.image().height, d_.attention.patch, d_.attention.edge);
  }

  // K over its values, each at most the image's short side (repeats after that dropped); the
  // query the patch that holds the centre of the base query's patch.
  void plan_patch_sizes(const SweepRequest& sweep, const PatchGrid& base, nlohmann::json& values) {
    const Image& image = rows_.image();
    const int most = std::min(image.width, image.height);
    const int x = d_.hand_made.cell.col * base.K + base.K / 2, y = d_.hand_made.cell.row * base.K + base.K / 2;
    for (const float v : sweep_numbers(sweep, "8,12,16,24,32", 1.0f, static_cast<float>(kMaxPatch))) {
      if (v != std::floor(v))
        throw Error(text_format(_("--sweep-values: a patch size K is a whole number of pixels, got %f"), static_cast<double>(v)));
      const int K = std::min(static_cast<int>(v), most);
      if (!frames_.empty() && frames_.back().attention.patch == K) continue;
      Document& d = frames_.emplace_back(d_);
      d.attention.patch = K;
      const PatchGrid g = make_grid(image.width, image.height, K, d.attention.edge);
      d.hand_made.cell = Cell{std::min(x / K, g.cols - 1), std::min(y / K, g.rows - 1)};
      values.push_back({{"K", K}, {"query", cell_text(d.hand_made.cell)}});
    }
  }

  Document d_;
  bool query_centred_;  // the query is the middle patch of each image's grid
  HandMadeRows rows_;   // and the image
  std::vector<Document> frames_;  // a sweep's document, frame by frame
  bool said_empty_ = false;
};

}  // namespace

std::unique_ptr<OverlaySource> make_vit_overlay(const Document& d, const OverlayChoices& choices) {
  return std::make_unique<VitOverlay>(d, choices);
}

std::unique_ptr<OverlaySource> make_hand_made_overlay(const Document& d, bool query_centred) {
  return std::make_unique<HandMadeOverlay>(d, query_centred);
}

}  // namespace attnlab::app

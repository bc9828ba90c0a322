// The Train tab: a small ViT trained on Fashion-MNIST in the window (TrainSession, on the
// scheduler), its controls, curves and the mean attention distance of its heads against the
// training step. Its maps are the map views' (VitMapSource over the session's snapshot).
#include "app/gui/train_views.hpp"

#include "app/gui/vit_views.hpp"
#include "app/gui/widget_log.hpp"
#include "core/error.hpp"

#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlab::app {
namespace {

struct Series {
  std::vector<float> x, y;
  ImU32 colour;
  std::string label;
};

// Lines over the step axis in a box of `size` at the cursor: the y range [lo, hi] written at
// the left, the steps under it, each series' label in its colour at the top.
void plot(const std::string& id, const char* title, ImVec2 size, const std::vector<Series>& series, float lo, float hi) {
  ImGui::TextUnformatted(title);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id.c_str(), size);
  record_widget(id);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p1(p0.x + size.x, p0.y + size.y);
  dl->AddRectFilled(p0, p1, IM_COL32(25, 25, 30, 255));
  dl->AddRect(p0, p1, IM_COL32(90, 90, 100, 255));
  float x_max = 1;
  for (const Series& s : series)
    if (!s.x.empty()) x_max = std::max(x_max, s.x.back());
  const float left = 4, bottom = ImGui::GetFontSize() + 2;
  auto at = [&](float x, float y) {
    const float t = std::clamp((y - lo) / std::max(hi - lo, 1e-6f), 0.0f, 1.0f);
    return ImVec2(p0.x + left + (size.x - 2 * left) * x / x_max, p1.y - bottom - (size.y - bottom - 4) * t);
  };
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", static_cast<double>(hi));
  dl->AddText(ImVec2(p0.x + 3, p0.y + 2), IM_COL32(150, 150, 150, 255), buf);
  std::snprintf(buf, sizeof buf, "%.3g", static_cast<double>(lo));
  dl->AddText(ImVec2(p0.x + 3, p1.y - bottom - ImGui::GetFontSize()), IM_COL32(150, 150, 150, 255), buf);
  std::snprintf(buf, sizeof buf, "step %.0f", static_cast<double>(x_max));
  dl->AddText(ImVec2(p1.x - ImGui::CalcTextSize(buf).x - 4, p1.y - bottom + 1), IM_COL32(150, 150, 150, 255), buf);
  dl->AddText(ImVec2(p0.x + 4, p1.y - bottom + 1), IM_COL32(150, 150, 150, 255), "0");
  float lx = p0.x + 48;
  for (const Series& s : series) {
    for (std::size_t i = 1; i < s.x.size(); ++i) dl->AddLine(at(s.x[i - 1], s.y[i - 1]), at(s.x[i], s.y[i]), s.colour, 1.5f);
    if (s.x.size() == 1) dl->AddCircleFilled(at(s.x[0], s.y[0]), 2.5f, s.colour);
    if (!s.label.empty()) {
      dl->AddText(ImVec2(lx, p0.y + 2), s.colour, s.label.c_str());
      lx += ImGui::CalcTextSize(s.label.c_str()).x + 8;
    }
  }
}

const char* const kPoolNames[] = {"cls token", "average of patches"};
const char* const kPosNames[] = {"learned", "sine-cosine (fixed)", "none"};
constexpr int kPatches[] = {2, 4, 7, 14};

void shape_section(TrainSession& train) {
  TrainConfig& c = train.config();
  ImGui::BeginDisabled(train.started());
  const float w = ImGui::GetFontSize() * 7;
  int pool = c.shape.pooling == VitPooling::Average ? 1 : 0;
  ImGui::SetNextItemWidth(w * 1.4f);
  if (ImGui::Combo("pooling", &pool, kPoolNames, 2)) c.shape.pooling = pool ? VitPooling::Average : VitPooling::Token;
  record_widget("train:pool");
  int pos = static_cast<int>(c.shape.pos);
  ImGui::SetNextItemWidth(w * 1.4f);
  if (ImGui::Combo("position", &pos, kPosNames, 3)) c.shape.pos = static_cast<VitPosKind>(pos);
  record_widget("train:pos");
  int patch = static_cast<int>(std::find(std::begin(kPatches), std::end(kPatches), c.shape.patch) - std::begin(kPatches));
  const char* const patch_names[] = {"2 (14 x 14 patches)", "4 (7 x 7)", "7 (4 x 4)", "14 (2 x 2)"};
  ImGui::SetNextItemWidth(w * 1.4f);
  if (ImGui::Combo("patch", &patch, patch_names, 4)) c.shape.patch = kPatches[patch];
  record_widget("train:patch");
  auto number = [&](const char* label, const char* id, int& v, int lo, int hi, int step) {
    ImGui::SetNextItemWidth(w);
    if (ImGui::InputInt(label, &v, step, step * 4)) v = std::clamp(v, lo, hi);
    record_widget(id);
  };
  number("depth (blocks)", "train:depth", c.shape.depth, 1, 12, 1);
  number("heads", "train:heads", c.shape.heads, 1, 16, 1);
  number("D (token width)", "train:dim", c.shape.D, 4, 512, 8);
  number("batch", "train:batch", c.batch, 1, 1024, 16);
  number("steps (schedule)", "train:steps", c.steps, 1, 1000000, 500);
  number("seed", "train:seed", c.seed, 0, 1000000, 1);
  ImGui::SetNextItemWidth(w);
  float lr = static_cast<float>(c.lr);
  if (ImGui::InputFloat("learning rate", &lr, 0.0005f, 0.002f, "%.4f")) c.lr = std::clamp(lr, 1e-6f, 1.0f);
  record_widget("train:lr");
  ImGui::EndDisabled();
}

void run_section(AppState& state, TrainSession& train) {
  if (!train.started()) {
    if (ImGui::Button("Start")) {
      try {
        train.start();
      } catch (const Error& e) {
        state.show_error(std::string("cannot train this model: ") + e.what());
      }
    }
    record_widget("train:start");
  } else if (train.running()) {
    if (ImGui::Button("Pause")) train.pause();
    record_widget("train:pause");
  } else {
    ImGui::BeginDisabled(train.finished());
    if (ImGui::Button("Resume")) train.resume();
    record_widget("train:resume");
    ImGui::EndDisabled();
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(!train.started());
  if (ImGui::Button("Reset")) train.reset();
  record_widget("train:reset");
  ImGui::EndDisabled();
  if (train.started()) {
    const TrainConfig& c = train.config();
    char bar[96];
    std::snprintf(bar, sizeof bar, "step %lld of %d", static_cast<long long>(train.step()), c.steps);
    ImGui::ProgressBar(static_cast<float>(train.step()) / static_cast<float>(c.steps), ImVec2(-1, 0), bar);
    record_widget("train:progress");
    if (train.points().empty()) {
      ImGui::TextDisabled("reading Fashion-MNIST and making the model...");
    } else {
      const TrainPoint& p = train.points().back();
      const float test = train.test_accuracy();
      ImGui::Text("%.1f steps/s   loss %.3f", train.steps_per_second(), static_cast<double>(p.loss));
      ImGui::Text("train %.1f %%   test %.1f %% (500 images)", 100.0 * p.train_accuracy, test >= 0 ? 100.0 * test : 0.0);
    }
    ImGui::TextDisabled("%s", train.running() ? "training on 1 thread of the scheduler" : train.finished() ? "finished" : "paused");
    if (train.running() || train.in_flight()) state.commands.redraw();
  }
}

void probe_section(AppState& state, TrainSession& train) {
  int probe = train.probe();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::SliderInt("probe (test image)", &probe, 0, train.test_count() - 1)) train.set_probe(probe);
  record_widget("train:probe");
  if (const VitRun* run = train.vit().run()) {
    const auto top = run->top_classes(1);
    if (!top.empty()) {
      const auto& labels = run->model().arch.labels;
      const int c = top[0].first;
      ImGui::TextDisabled("predicts %s (%.0f %%)", c < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(c)].c_str() : "?",
                          100.0 * top[0].second);
    }
  }
  ImGui::Checkbox("rollout (R)", &state.vit_rollout);
  record_widget("train:rollout");
}

void save_section(AppState& state, TrainSession& train) {
  if (state.ui.train_folder_text.empty()) state.ui.train_folder_text = (state.export_dir / "trained-vit").string();
  ImGui::TextUnformatted("Save checkpoint to (a new folder; never written over)");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText("##train_folder", &state.ui.train_folder_text);
  record_widget("train:folder");
  ImGui::BeginDisabled(!train.started() || train.save_pending());
  if (ImGui::Button("Save checkpoint")) train.save(state.ui.train_folder_text);
  record_widget("train:save");
  ImGui::EndDisabled();
  if (!train.last_saved().empty()) {
    ImGui::SameLine();
    if (ImGui::Button("Open as ViT")) state.commands.open_model(train.last_saved());
    record_widget("train:open");
    ImGui::TextDisabled("saved: %s", train.last_saved().string().c_str());
  }
}

}  // namespace

void draw_train_panel(AppState& state, TrainSession& train) {
  ImGui::TextWrapped("Train a small ViT on Fashion-MNIST here and watch its attention change. The maps show the model "
                     "being trained on the probe image.");
  if (ImGui::CollapsingHeader("Model and run", ImGuiTreeNodeFlags_DefaultOpen)) shape_section(train);
  ImGui::Separator();
  run_section(state, train);
  ImGui::Separator();
  probe_section(state, train);
  ImGui::Separator();
  save_section(state, train);
}

void draw_train_lower(AppState& state, TrainSession& train, MapSource& source, CkaJob& cka) {
  if (!ImGui::BeginTabBar("train_lower")) return;
  if (ImGui::BeginTabItem("Curves and distance")) {
    const auto& points = train.points();
    Series loss{{}, {}, IM_COL32(255, 160, 60, 255), "loss"};
    Series tr{{}, {}, IM_COL32(80, 160, 255, 255), "train"}, te{{}, {}, IM_COL32(90, 220, 120, 255), "test"};
    float loss_hi = 0.5f;
    for (const TrainPoint& p : points) {
      const auto x = static_cast<float>(p.step);
      loss.x.push_back(x);
      loss.y.push_back(p.loss);
      loss_hi = std::max(loss_hi, p.loss);
      tr.x.push_back(x);
      tr.y.push_back(p.train_accuracy);
      if (p.test_accuracy >= 0) {
        te.x.push_back(x);
        te.y.push_back(p.test_accuracy);
      }
    }
    const float avail = ImGui::GetContentRegionAvail().x, gap = ImGui::GetStyle().ItemSpacing.x;
    const float h = std::max(ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() - 6, 60.0f);
    const float w = (avail - 2 * gap) / 3;
    ImGui::BeginGroup();
    plot("train:loss_plot", "loss (cross-entropy)", ImVec2(w, h), {loss}, 0.0f, loss_hi);
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    plot("train:accuracy_plot", "accuracy", ImVec2(w, h), {tr, te}, 0.0f, 1.0f);
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    // One line per head of the map's layer: local heads fall, global ones stay high.
    std::vector<Series> heads;
    float dmax = 0.0f, dmin = 1e9f;
    const int L = train.shape().depth;
    const int layer = L > 0 ? choice_layer(state.train, L) : 0;
    for (int head = 0; head < train.shape().heads && !points.empty(); ++head) {
      Series s{{}, {}, vit_head_colour(head), std::to_string(head)};
      for (const TrainPoint& p : points) {
        if (p.distance.rows() <= layer || p.distance.cols() <= head) continue;
        s.x.push_back(static_cast<float>(p.step));
        s.y.push_back(p.distance(layer, head));
        dmax = std::max(dmax, s.y.back());
        dmin = std::min(dmin, s.y.back());
      }
      heads.push_back(std::move(s));
    }
    // The range of the lines, so that heads parting (local ones falling) show from the start.
    if (dmax < dmin) dmin = 0.0f, dmax = 1.0f;
    const float pad = std::max((dmax - dmin) * 0.1f, 0.25f);
    const std::string title = "attention distance (px), layer " + std::to_string(layer);
    plot("train:distance_plot", title.c_str(), ImVec2(w, h), heads, std::max(dmin - pad, 0.0f), dmax + pad);
    ImGui::EndGroup();
    ImGui::EndTabItem();
  }
  record_widget("train_tab:curves");
  if (ImGui::BeginTabItem("Pinned queries")) {
    if (source.info().ready) draw_pinned_maps(state, source);
    else ImGui::TextDisabled("No model trained yet.");
    ImGui::EndTabItem();
  }
  record_widget("train_tab:pinned");
  if (ImGui::BeginTabItem("Similarity (CKA)")) {  // computed again on request while training runs
    draw_cka_view(state, cka, cka_request(train.vit(), 0), /*auto_start=*/!train.running());
    ImGui::EndTabItem();
  }
  record_widget("train_tab:cka");
  ImGui::EndTabBar();
}

}  // namespace attnlab::app

// The Train tab: small ViTs trained on Fashion-MNIST in the window (runs A and B, TrainSessions
// taking turns on the scheduler), their controls, curves and the mean attention distance of
// their heads against the training step. Their maps are the map views' (VitMapSource over each
// session's snapshot).
#include "app/gui/train/train_views.hpp"

#include "app/gui/vit/vit_views.hpp"
#include "app/gui/state/setting_widgets.hpp"
#include "app/gui/state/ui_text.hpp"
#include "app/gui/state/widget_log.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/fashion_mnist.hpp"

#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlab::app {

void step_plot(const std::string& id, const char* title, ImVec2 size, const std::vector<PlotSeries>& series, float lo, float hi) {
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + size.x);  // the title within the plot's width
  wrap_text(title);
  ImGui::PopTextWrapPos();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id.c_str(), size);
  record_widget(id);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p1(p0.x + size.x, p0.y + size.y);
  dl->AddRectFilled(p0, p1, IM_COL32(25, 25, 30, 255));
  dl->AddRect(p0, p1, IM_COL32(90, 90, 100, 255));
  float x_max = 1;
  for (const PlotSeries& s : series)
    if (!s.x.empty()) x_max = std::max(x_max, s.x.back());
  const float left = 4, bottom = ImGui::GetFontSize() + 2;
  auto at = [&](float x, float y) {
    const float t = std::clamp((y - lo) / std::max(hi - lo, 1e-6f), 0.0f, 1.0f);
    return ImVec2(p0.x + left + (size.x - 2 * left) * x / x_max, p1.y - bottom - (size.y - bottom - 4) * t);
  };
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s", format_number(hi, 3).c_str());
  dl->AddText(ImVec2(p0.x + 3, p0.y + 2), IM_COL32(150, 150, 150, 255), buf);
  std::snprintf(buf, sizeof buf, "%s", format_number(lo, 3).c_str());
  dl->AddText(ImVec2(p0.x + 3, p1.y - bottom - ImGui::GetFontSize()), IM_COL32(150, 150, 150, 255), buf);
  // TRANSLATORS: the last training step, written under a plot's right end.
  std::snprintf(buf, sizeof buf, _("step %.0f"), static_cast<double>(x_max));
  dl->AddText(ImVec2(p1.x - ImGui::CalcTextSize(buf).x - 4, p1.y - bottom + 1), IM_COL32(150, 150, 150, 255), buf);
  dl->AddText(ImVec2(p0.x + 4, p1.y - bottom + 1), IM_COL32(150, 150, 150, 255), "0");
  float lx = p0.x + std::max(48.0f, ImGui::CalcTextSize(buf).x + 12);
  std::vector<ImVec2> line;
  for (const PlotSeries& s : series) {
    // One polyline, at most two points (the lowest and the highest, in their order) per pixel
    // column: a run's curves grow by 5 points a second, and drawn a segment per point they made
    // handing ImGui's lists to OpenGL 3.4 ms a frame after 5 minutes (2.5 ms so; hover
    // benchmark, --train, ATTNLAB_HOVER_BENCH_TRAIN_S=300).
    line.clear();
    for (std::size_t i = 0; i < s.x.size();) {
      const ImVec2 first = at(s.x[i], s.y[i]);
      std::size_t low = i, high = i, j = i + 1;
      for (; j < s.x.size() && std::floor(at(s.x[j], s.y[j]).x) == std::floor(first.x); ++j) {
        if (s.y[j] < s.y[low]) low = j;
        if (s.y[j] > s.y[high]) high = j;
      }
      line.push_back(at(s.x[std::min(low, high)], s.y[std::min(low, high)]));
      if (low != high) line.push_back(at(s.x[std::max(low, high)], s.y[std::max(low, high)]));
      i = j;
    }
    if (line.size() > 1) dl->AddPolyline(line.data(), static_cast<int>(line.size()), s.colour, ImDrawFlags_None, 1.5f);
    if (s.x.size() == 1) dl->AddCircleFilled(at(s.x[0], s.y[0]), 2.5f, s.colour);
    if (!s.label.empty()) {
      dl->AddText(ImVec2(lx, p0.y + 2), s.colour, s.label.c_str());
      lx += ImGui::CalcTextSize(s.label.c_str()).x + 8;
    }
  }
}

RunCurves run_curves(const std::vector<TrainPoint>& points, const std::string& prefix, const ImU32 (&colours)[3]) {
  // TRANSLATORS: the curves' legends: the loss, the accuracy on the training set and on the test set, the loss on the fixed crops.
  RunCurves c{{{}, {}, colours[0], prefix + _("loss")}, {{}, {}, colours[1], prefix + tr_c("plot legend", "train")},
              {{}, {}, colours[2], prefix + tr_c("plot legend", "test")}, {{}, {}, colours[2], prefix + _("fixed crops")}};
  for (const TrainPoint& p : points) {
    const auto x = static_cast<float>(p.step);
    c.loss.x.push_back(x);
    c.loss.y.push_back(p.loss);
    c.loss_hi = std::max(c.loss_hi, p.loss);
    if (p.train_accuracy >= 0) {
      c.train.x.push_back(x);
      c.train.y.push_back(p.train_accuracy);
    }
    if (p.test_accuracy >= 0) {
      c.test.x.push_back(x);
      c.test.y.push_back(p.test_accuracy);
    }
    if (p.fixed_loss >= 0) {
      c.fixed.x.push_back(x);
      c.fixed.y.push_back(p.fixed_loss);
      c.loss_hi = std::max(c.loss_hi, p.fixed_loss);
    }
  }
  return c;
}

namespace {

// TRANSLATORS: what the classifier reads: the cls token's output, or the average of the patches' outputs.
const char* const kPoolNames[] = {N_("cls token"), N_("average of patches")};
// TRANSLATORS: the kinds of position encoding: learned, sine-cosine (fixed), or none.
const char* const kPosNames[] = {N_("learned"), N_("sine-cosine (fixed)"), "none"};  // "none": translated with its context where shown
constexpr int kPatches[] = {2, 4, 7, 14};

// The shown run's shape and switches, fixed once it has started; before, one click takes the
// other run's (then change one switch to compare).
void shape_section(TrainSession& train, const TrainSession& other) {
  TrainConfig& c = train.config();
  ImGui::BeginDisabled(train.started());
  // TRANSLATORS: %s is the other run, A or B.
  const std::string copy = text_format(_("Copy run %s's settings"), other.name().c_str());
  // TRANSLATORS: %s is the other run, A or B (a shorter form of "Copy run %s's settings").
  const std::string copy_short = text_format(_("Copy run %s"), other.name().c_str());
  if (ImGui::Button(fitting_label({copy.c_str(), copy_short.c_str()}))) c = other.config();
  record_widget("train:copy");
  const float w = ImGui::GetFontSize() * 7;
  // The model: a ViT, or a small ResNet on the same data and schedule (the deck's question, "do
  // transformers learn differently from CNNs?", as an experiment: which learns faster here?).
  // TRANSLATORS: the kind of model trained: ViT (vision transformer) or CNN (convolutional network, a ResNet).
  ImGui::TextUnformatted(_("model"));
  // TRANSLATORS: Vision Transformer, the model's kind (an abbreviation).
  same_line_if_room(radio_width(_("ViT")));
  // TRANSLATORS: Vision Transformer, the model's kind (an abbreviation); keep "##train_model".
  if (ImGui::RadioButton(_("ViT##train_model"), !c.cnn)) c.cnn = false;
  record_widget("train:model_vit");
  // Beside the word while it fits, else below, shorter in a narrow column (UI scale 2 on a projector).
  // TRANSLATORS: a convolutional neural network, here a ResNet (the model's kind).
  const char* const cnn_name = _("CNN (ResNet)");
  // TRANSLATORS: a convolutional neural network (the model's kind, short).
  const char* const cnn_short = _("CNN");
  const bool cnn_long = radio_width(cnn_name) <= ImGui::GetContentRegionAvail().x;
  same_line_if_room(radio_width(cnn_long ? cnn_name : cnn_short));
  if (ImGui::RadioButton(ui_id(cnn_long ? cnn_name : cnn_short, "train_model_cnn").c_str(), c.cnn)) c.cnn = true;  // i18n: English (the id)
  record_widget("train:model_cnn");
  auto number = [&](const char* label, const char* id, int& v, int lo, int hi, int step) {
    if (ImGui::InputInt(fit_label(label, w).c_str(), &v, step, step * 4)) v = std::clamp(v, lo, hi);
    record_widget(id);
  };
  if (c.cnn) {
    // A ResNet of BasicBlocks (core/cnn/cnn_train.hpp): its width and blocks per stage; the
    // parameter count set beside the other run's, so that "about the ViT's size" can be seen.
    // TRANSLATORS: the ResNet's width: its channels.
    number(_("width (channels)"), "train:cnn_width", c.cnn_shape.width, 2, 128, 2);
    int blocks = c.cnn_shape.stage_blocks[0];
    number(_("blocks per stage"), "train:cnn_blocks", blocks, 1, 4, 1);
    c.cnn_shape.stage_blocks = {blocks, blocks, blocks, blocks};
    const TrainConfig& o = other.config();
    const double mine = static_cast<double>(c.cnn_shape.parameters()) / 1000.0;
    const double theirs = static_cast<double>(o.cnn ? o.cnn_shape.parameters() : o.shape.parameters()) / 1000.0;
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    // TRANSLATORS: this model's parameters in thousands (k), then the other run (A or B), its kind (CNN or ViT) and its parameters.
    text_wrapped(_("%.0fk parameters (run %s's %s: %.0fk)"), mine, other.name().c_str(), o.cnn ? _("CNN") : _("ViT"), theirs);
    ImGui::PopStyleColor();
  } else if (task_switch(c)) {
    masked_switches(c, w * 1.4f);
  } else {
    // The lecture's switch, one click: what the classifier reads.
    // TRANSLATORS: what the classifier reads of the tokens (cls token, or the average of the patches).
    ImGui::TextUnformatted(_("pooling"));
    for (int pool = 0; pool < 2; ++pool) {  // beside the word while it fits, else below, shorter in a narrow column
      // TRANSLATORS: a short form of "average of patches" (pooling).
      const char* name = pool && radio_width(_(kPoolNames[pool])) > ImGui::GetContentRegionAvail().x ? _("average") : _(kPoolNames[pool]);
      same_line_if_room(radio_width(name));
      const VitPooling p = pool ? VitPooling::Average : VitPooling::Token;
      if (ImGui::RadioButton(name, c.shape.pooling == p)) c.shape.pooling = p;
      record_widget(pool ? "train:pool_avg" : "train:pool_cls");
    }
    int patch = static_cast<int>(std::find(std::begin(kPatches), std::end(kPatches), c.shape.patch) - std::begin(kPatches));
    // TRANSLATORS: a patch size in pixels, then the grid of patches it cuts the image into.
    const std::string first = text_format(_("%d (%d x %d patches)"), 2, 14, 14);
    const char* const patch_names[] = {first.c_str(), "4 (7 x 7)", "7 (4 x 4)", "14 (2 x 2)"};
    // TRANSLATORS: the patch size (pixels).
    if (ImGui::Combo(fit_label(_("patch"), w * 1.4f).c_str(), &patch, patch_names, 4)) c.shape.patch = kPatches[patch];
    record_widget("train:patch");
  }
  if (!c.cnn) {
    int pos = static_cast<int>(c.shape.pos);
    // TRANSLATORS: no position encoding.
    const char* const pos_names[] = {_(kPosNames[0]), _(kPosNames[1]), tr_c("position encoding", "none")};
    // TRANSLATORS: the kind of position encoding (a combo's label).
    if (ImGui::Combo(fit_label(_("position"), w * 1.4f).c_str(), &pos, pos_names, 3)) c.shape.pos = static_cast<VitPosKind>(pos);
    record_widget("train:pos");
    // TRANSLATORS: the model's depth: its transformer blocks.
    number(_("depth (blocks)"), "train:depth", c.shape.depth, 1, 12, 1);
    // TRANSLATORS: the number of attention heads per block.
    number(_("heads"), "train:heads", c.shape.heads, 1, 16, 1);
    // TRANSLATORS: D is the tokens' dimension.
    number(_("D (token width)"), "train:dim", c.shape.D, 4, 512, 8);
  }
  // TRANSLATORS: the batch size (images per training step).
  number(_("batch"), "train:batch", c.batch, 1, 1024, 16);
  // TRANSLATORS: the training steps the learning-rate schedule spans.
  number(_("steps (schedule)"), "train:steps", c.steps, 1, 1000000, 500);
  // TRANSLATORS: the random seed.
  number(_("seed"), "train:seed", c.seed, 0, 1000000, 1);
  float lr = static_cast<float>(c.lr);
  if (ImGui::InputFloat(fit_label(_("learning rate"), w).c_str(), &lr, 0.0005f, 0.002f, "%.4f")) c.lr = std::clamp(lr, 1e-6f, 1.0f);
  record_widget("train:lr");
  ImGui::EndDisabled();
}

void run_section(AppState& state, TrainSession& train) {
  if (!train.started()) {
    // TRANSLATORS: starts training the run.
    if (ImGui::Button(_("Start"))) {
      try {
        train.start();
      } catch (const Error& e) {
        state.show_error(text_format(_("cannot train this model: %s"), e.what()));
      }
    }
    record_widget("train:start");
  } else if (train.running()) {
    if (ImGui::Button(_("Pause"))) train.pause();
    record_widget("train:pause");
  } else {
    ImGui::BeginDisabled(train.finished());
    if (ImGui::Button(_("Resume"))) train.resume();
    record_widget("train:resume");
    ImGui::EndDisabled();
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(!train.started());
  if (ImGui::Button(_("Reset"))) train.reset();
  record_widget("train:reset");
  ImGui::EndDisabled();
  if (train.started()) {
    const TrainConfig& c = train.config();
    char bar[96];
    // TRANSLATORS: the training step reached, of the steps scheduled.
    std::snprintf(bar, sizeof bar, _("step %lld of %d"), static_cast<long long>(train.step()), c.steps);
    ImGui::ProgressBar(static_cast<float>(train.step()) / static_cast<float>(c.steps), ImVec2(-1, 0), bar);
    record_widget("train:progress");
    const bool masked = train.task() == VitTask::MaskedPatches;
    if (train.points().empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      wrap_text(masked ? _("cutting the crops and making the model...") : _("reading Fashion-MNIST and making the model..."));
      ImGui::PopStyleColor();
    } else {
      const TrainPoint& p = train.points().back();
      // TRANSLATORS: training steps per second, then the loss.
      text_wrapped(_("%.1f steps/s   loss %.3f"), train.steps_per_second(), static_cast<double>(p.loss));
      if (masked) {
        text_wrapped(_("loss on %d fixed crops %.4f"), kTrainFixedCrops, static_cast<double>(std::max(train.fixed_loss(), 0.0f)));
      } else {
        const float test = train.test_accuracy();
        // TRANSLATORS: the accuracy in percent on the training set, then on the test set's first %d images.
        text_wrapped(_("train %.1f %%   test %.1f %% (%d images)"), 100.0 * p.train_accuracy, test >= 0 ? 100.0 * test : 0.0, kTrainEvalImages);
      }
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    wrap_text(train.waiting_turn() ? _("waiting for the other run's chunk (they take turns)")
              : train.running()    ? _("training on the scheduler's low-priority thread")
              : train.in_flight()  ? _("pausing: the chunk under way ends first")
              // TRANSLATORS: a training run's state.
              : train.finished()   ? _("finished")
                                   // TRANSLATORS: a training run's state.
                                   : _("paused"));
    ImGui::PopStyleColor();
  }
}

// Which run the maps show, each with how far it is, and how the two share the training thread.
void runs_section(AppState& state, const TrainRuns& runs) {
  // TRANSLATORS: followed by the choice "run A", "run B": which run the maps show.
  ImGui::TextUnformatted(_("The maps show"));
  for (int r = 0; r < 2; ++r) {
    // TRANSLATORS: a training run, A or B.
    const std::string label = text_format(_("run %s"), runs[r].name().c_str());
    same_line_if_room(radio_width(label.c_str()));
    if (ImGui::RadioButton(label.c_str(), state.train_run == r)) state.train_run = r;
    record_widget(r ? "train:run_b" : "train:run_a");
  }
  for (int r = 0; r < 2; ++r) {
    const TrainSession& run = runs[r];
    if (!run.started()) {
      // TRANSLATORS: a training run (A or B) that has not started.
      ImGui::TextDisabled(_("%s: not started"), run.name().c_str());
      continue;
    }
    // TRANSLATORS: added to a run's line (below) when it is finished or paused.
    const char* state_text = run.running() ? "" : run.finished() ? _(" (finished)") : _(" (paused)");
    if (run.is_cnn()) {
      const float test = run.test_accuracy();
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      // TRANSLATORS: the run (A or B), its step, its test accuracy in percent, then " (finished)", " (paused)" or nothing.
      text_wrapped(_("%s: CNN, step %lld, test %.1f %%%s"), run.name().c_str(), static_cast<long long>(run.step()), test >= 0 ? 100.0 * test : 0.0,
                   state_text);
      ImGui::PopStyleColor();
      continue;
    }
    if (run.task() == VitTask::MaskedPatches) {
      // TRANSLATORS: the run (A or B), its step, its loss on the fixed crops, then " (finished)", " (paused)" or nothing.
      ImGui::TextDisabled(_("%s: masked patches, step %lld, fixed-crops loss %.4f%s"), run.name().c_str(), static_cast<long long>(run.step()),
                          static_cast<double>(std::max(run.fixed_loss(), 0.0f)), state_text);
      continue;
    }
    const float test = run.test_accuracy();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    // TRANSLATORS: the run (A or B), its pooling's name (cls or avg, kept as it is), its step, its test accuracy in percent,
    // then " (finished)", " (paused)" or nothing.
    text_wrapped(_("%s: %s pooling, step %lld, test %.1f %%%s"), run.name().c_str(), pooling_name(run.shape().pooling),
                 static_cast<long long>(run.step()), test >= 0 ? 100.0 * test : 0.0, state_text);
    ImGui::PopStyleColor();
  }
  if (runs.a.running() && runs.b.running())
    text_wrapped("%s", _("A and B take turns, one chunk of about 0.2 s each, on one low-priority thread of the scheduler: each "
                         "trains at about half its speed alone, and the window's frames always come first."));
}

// The probe both runs' maps are of (the document's): a test image, or the photo the window has
// open, made as the data are (28 x 28 grey); what the shown run predicts for it.
void probe_section(AppState& state, TrainSession& train) {
  const bool masked = train.task() == VitTask::MaskedPatches;
  if (masked) {
    // A masked-patch run's maps are of the photo it learns from, whole, at the crops' size.
    // TRANSLATORS: the run (A or B), then the crop's width x height.
    text_wrapped(_("Run %s's maps are of the photo it trains on, whole, at %d x %d pixels (a crop of all of it)."),
                 train.name().c_str(), train.shape().image_cols, train.shape().image_rows);
  } else {
    // TRANSLATORS: the probe: the image both runs' maps are computed on.
    ImGui::TextUnformatted(_("Probe (both runs' maps are of it)"));
    // TRANSLATORS: a Fashion-MNIST test image (chosen by its number beside).
    if (ImGui::RadioButton(_("test image"), !state.train_probe_photo)) state.train_probe_photo = false;
    record_widget("train:probe_test");
    same_line_if_room(ImGui::GetFontSize() * 4);
    ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 9, ImGui::GetContentRegionAvail().x));
    ImGui::BeginDisabled(state.train_probe_photo);
    ImGui::SliderInt("##probe", &state.train_probe, 0, kFashionMnistTestCount - 1);
    state.train_probe = std::clamp(state.train_probe, 0, kFashionMnistTestCount - 1);  // Ctrl+click types any number
    record_widget("train:probe");
    ImGui::EndDisabled();
    // TRANSLATORS: the photo's file name; it is made 28 x 28 pixels grey, as the data are.
    const std::string photo = text_format(_("the photo, %s (28 x 28 grey)"), state.image_path.filename().string().c_str());
    const char* photo_label = radio_width(photo.c_str()) <= ImGui::GetContentRegionAvail().x ? photo.c_str() : _("the photo");
    if (ImGui::RadioButton(photo_label, state.train_probe_photo)) state.train_probe_photo = true;
    record_widget("train:probe_photo");
  }
  if (const CnnSnapshot* snap = train.cnn_snapshot()) {
    // A CNN has no attention to map: the probe with where its decision is sensitive over it.
    const float side = ImGui::GetFontSize() * 3;
    ImGui::Image(train.cnn_texture(), ImVec2(side, side));
    record_widget("train:probe_image");
    ImGui::SameLine();
    const auto& labels = snap->model->arch.labels;
    // TRANSLATORS: the run (A or B), the class it predicts, its probability in percent.
    ImGui::TextDisabled(_("run %s predicts %s (%.0f %%)"), train.name().c_str(),
                        snap->klass >= 0 && snap->klass < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(snap->klass)].c_str() : "?",
                        100.0 * snap->probability);
  } else if (const VitRun* run = train.vit().run()) {
    // What the model sees: the probe as the input (a test image, the photo made as the data are, or the whole photo).
    const float side = ImGui::GetFontSize() * 3;
    ImGui::Image(train.vit().photo(), ImVec2(side, side));
    record_widget("train:probe_image");
    const auto top = run->top_classes(1);  // none from a masked-patch model: it has no classifier
    if (!top.empty()) {
      ImGui::SameLine();
      const auto& labels = run->model().arch.labels;
      const int c = top[0].first;
      ImGui::TextDisabled(_("run %s predicts %s (%.0f %%)"), train.name().c_str(),
                          c < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(c)].c_str() : "?", 100.0 * top[0].second);
    }
  }
  setting_widget(state, "vit.rollout", {.scope = "train", .help = false});
}

void save_section(AppState& state, TrainSession& train) {
  if (state.ui.train_folder_text.empty()) state.ui.train_folder_text = (export_folder(state) / "trained-vit").string();
  wrap_text(_("Save checkpoint to (a new folder; never written over)"));
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText("##train_folder", &state.ui.train_folder_text);
  record_widget("train:folder");
  ImGui::BeginDisabled(!train.started() || train.save_pending());
  if (ImGui::Button(fitting_label({_("Save checkpoint"), _("Save")}))) train.save(state.ui.train_folder_text);
  record_widget("train:save");
  ImGui::EndDisabled();
  if (!train.last_saved().empty()) {
    ImGui::SameLine();
    if (train.is_cnn()) {
      if (ImGui::Button(_("Open in the CNN tab"))) {  // beside the ViT, as the gallery's ResNets
        state.cnn_model = train.last_saved();
        state.vit_view = "cnn";
      }
    } else if (ImGui::Button(_("Open as ViT"))) {
      state.commands.open_model(train.last_saved());
    }
    record_widget("train:open");
    // TRANSLATORS: the folder the checkpoint was saved to.
    ImGui::TextDisabled(_("saved: %s"), train.last_saved().string().c_str());
  }
}

}  // namespace

void draw_train_panel(AppState& state, TrainRuns& runs) {
  // Start on screen without scrolling (a projector's short column): a line of what this is, the
  // rest on hover; the runs, Start; then the model's switches.
  wrap_text(_("Train a small ViT and watch its attention change."));
  help_marker(_("Train small ViTs here, on Fashion-MNIST's classes or on masked patches of the photo, and watch their attention "
                "change: run A, and run B to compare (e.g. cls against average pooling). The maps show the chosen run on its "
                "probe image."));
  runs_section(state, runs);
  TrainSession& train = runs[state.train_run];
  run_section(state, train);
  ImGui::Separator();
  // TRANSLATORS: a section's header; %s is the run, A or B.
  const std::string header = ui_id(text_format(_("Model and run %s"), train.name().c_str()), "train_model");
  if (ImGui::CollapsingHeader(header.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) shape_section(train, runs[1 - state.train_run]);
  ImGui::Separator();
  probe_section(state, train);
  ImGui::Separator();
  save_section(state, train);
}

namespace {

// The Train tab's similarity view: the shown run's layers against themselves, or run A's against
// run B's over the same examples (the deck's CKA slide: do two models learn alike?), once both
// have a snapshot.
void draw_train_cka(AppState& state, TrainRuns& runs, TrainSession& shown, CkaJob& cka) {
  const bool both = runs.a.vit().run() && runs.b.vit().run();
  ImGui::BeginDisabled(!both);
  if (ImGui::RadioButton(_("one run's layers"), !state.ui.train_cka_runs)) state.ui.train_cka_runs = false;
  record_widget("train:cka_one");
  ImGui::SameLine();
  if (ImGui::RadioButton(_("run A's layers (rows) against run B's (columns)"), state.ui.train_cka_runs)) state.ui.train_cka_runs = true;
  record_widget("train:cka_runs");
  ImGui::EndDisabled();
  if (!both) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", _("(start both runs to compare them)"));
  }
  CkaRequest request = cka_request(state.ui.train_cka_runs && both ? runs.a.vit() : shown.vit(), 0);
  if (state.ui.train_cka_runs && both) {
    const CkaRequest other = cka_request(runs.b.vit(), 0);
    request.b = other.a;
    request.b_name = other.a_name;
  }
  draw_cka_view(state, cka, request, /*auto_start=*/!runs.a.running() && !runs.b.running());
}

}  // namespace

namespace {

// The Train tab's curves: the loss, the accuracy (or masked patches' reconstruction) and every
// head's mean attention distance against the step, three columns.
void draw_train_curves(AppState& state, TrainSession& train) {
  const auto& points = train.points();
  const ImU32 colours[3] = {IM_COL32(255, 160, 60, 255), IM_COL32(80, 160, 255, 255), IM_COL32(90, 220, 120, 255)};
  const RunCurves curves = run_curves(points, "", colours);
  const float avail = ImGui::GetContentRegionAvail().x, gap = ImGui::GetStyle().ItemSpacing.x;
  // The panel's height (at most 14 lines: in a scrolling column the room below is not the panel's).
  const float h = std::clamp(ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() - 6, 60.0f, ImGui::GetFontSize() * 14);
  // Three columns; masked patches give the middle one, the reconstruction's three pictures, more room.
  const bool masked = train.task() == VitTask::MaskedPatches;
  // A narrow column (a projector at a large UI scale): the three one under the other, each as wide as it.
  const bool stacked = avail < ImGui::GetFontSize() * 24;
  const float w = stacked ? avail : (avail - 2 * gap) / 3;
  const float middle = stacked ? avail : masked ? (avail - 2 * gap) * 0.42f : w, side_w = stacked ? avail : masked ? (avail - 2 * gap) * 0.29f : w;
  auto next_column = [&] {
    if (!stacked) ImGui::SameLine();
  };
  ImGui::BeginGroup();
  if (masked) step_plot("train:loss_plot", _("loss (mean squared error)"), ImVec2(side_w, h), {curves.loss, curves.fixed}, 0.0f, curves.loss_hi);
  else step_plot("train:loss_plot", _("loss (cross-entropy)"), ImVec2(w, h), {curves.loss}, 0.0f, curves.loss_hi);
  ImGui::EndGroup();
  next_column();
  ImGui::BeginGroup();
  if (masked) draw_reconstruction(train, ImVec2(middle, h + ImGui::GetTextLineHeightWithSpacing()));
  else step_plot("train:accuracy_plot", _("accuracy"), ImVec2(w, h), {curves.train, curves.test}, 0.0f, 1.0f);
  ImGui::EndGroup();
  next_column();
  ImGui::BeginGroup();
  if (train.is_cnn()) {
    // A CNN has no heads: in their place, the probe with the input gradient of its prediction.
    wrap_text(_("no attention heads: where the prediction is sensitive, |d logit / d pixel|"));
    const float side = std::max(std::min(side_w, h - ImGui::GetTextLineHeightWithSpacing()), 32.0f);
    if (train.cnn_snapshot()) ImGui::Image(train.cnn_texture(), ImVec2(side, side));
    else ImGui::Dummy(ImVec2(side, side));
    record_widget("train:cnn_gradient");
    ImGui::EndGroup();
    return;
  }
  // One line per head of the map's layer: local heads fall, global ones stay high.
  std::vector<PlotSeries> heads;
  float dmax = 0.0f, dmin = 1e9f;
  const int L = train.shape().depth;
  const int layer = L > 0 ? choice_layer(state.train, L) : 0;
  for (int head = 0; head < train.shape().heads && !points.empty(); ++head) {
    PlotSeries s{{}, {}, vit_head_colour(head), std::to_string(head)};
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
  // TRANSLATORS: the plot of the heads' mean attention distance in pixels; %d is the layer.
  const std::string title = text_format(_("distance (px), layer %d"), layer);
  step_plot("train:distance_plot", title.c_str(), ImVec2(side_w, h), heads, std::max(dmin - pad, 0.0f), dmax + pad);
  ImGui::EndGroup();
}

}  // namespace

void draw_train_lower(AppState& state, TrainRuns& runs, MapSource& a, MapSource& b, CkaJob& cka,
                      const std::vector<std::unique_ptr<View>>& views) {
  TrainSession& train = runs[state.train_run];
  MapSource& source = state.train_run == 1 ? b : a;
  // TRANSLATORS: a tab; %s is the run, A or B.
  const std::string curves_tab = ui_id(text_format(_("Curves, run %s"), train.name().c_str()), "curves");
  ViewSource run{state, source, kVitOffers, nullptr, &train.vit(), &state.train,
                 [&] { draw_train_cka(state, runs, train, cka); }};
  // The views: the curves, runs A and B, then the views that work on a ViT (view.hpp) on the
  // shown run's latest snapshot, its similarity view computed again on request while training runs.
  // A CNN run has no attention for the map views: its curves and A against B.
  const std::vector<View*> offered = train.is_cnn() ? std::vector<View*>{} : views_for(views, run);
  // TRANSLATORS: a tab comparing runs A and B.
  std::vector<std::string> labels = {curves_tab, ui_id(_("A and B"), "A and B")}, names = {"train_tab:curves", "train_tab:runs"};
  for (const View* view : offered) {
    labels.emplace_back(ui_id(view->label(), view->name()));  // the tab keeps its id whatever the language
    names.push_back(std::string("train_tab:") + view->name());
  }
  auto draw = [&](std::size_t t) {
    if (t == 0) draw_train_curves(state, train);
    else if (t == 1) draw_train_comparison(state, runs, a, b);
    else offered[t - 2]->draw(run);
  };
  if (!tabs_fit(labels)) {  // a narrow column: the views' names flowed over a few lines, none cut, the view below
    if (const int t = flowed_choices(labels, names, state.ui.train_view); t >= 0) state.ui.train_view = t;
    ImGui::Separator();
    draw(std::min(static_cast<std::size_t>(std::max(state.ui.train_view, 0)), labels.size() - 1));
    return;
  }
  if (!ImGui::BeginTabBar("train_lower")) return;
  for (std::size_t t = 0; t < labels.size(); ++t) {
    // Each tab recorded as soon as it is begun, before its contents (widget_log.hpp, record_tab).
    const bool open = ImGui::BeginTabItem(labels[t].c_str());
    record_tab(names[t], labels[t].c_str());
    if (!open) continue;
    state.ui.train_view = static_cast<int>(t);
    draw(t);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

}  // namespace attnlab::app

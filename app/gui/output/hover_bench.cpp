#include "app/gui/output/hover_bench.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/base/platform.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>


namespace attnlab::app {

Spread spread_of(std::vector<double> ms) {
  if (ms.empty()) throw Error(_("no frames to summarize"));
  std::sort(ms.begin(), ms.end());
  const auto rank = [&](double p) {  // nearest rank: the smallest value with at least p of the list at or below it
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(ms.size())));
    return ms[std::clamp<std::size_t>(k, 1, ms.size()) - 1];
  };
  return {rank(0.5), rank(0.95), ms.back(), ms.size()};
}

std::vector<Cell> hover_path(int cols, int rows, int hovers, std::uint32_t seed) {
  if (cols < 1 || rows < 1) throw Error(_("hover path: the grid is empty"));
  if (hovers < 1) throw Error(_("hover path: needs at least one hover"));
  if (cols * rows < 2 && hovers > 1) throw Error(_("hover path: a grid of one patch has nowhere to move"));
  std::mt19937 gen(seed);
  std::vector<Cell> out;
  out.reserve(static_cast<std::size_t>(hovers));
  Cell c{cols / 2, rows / 2};
  out.push_back(c);
  while (static_cast<int>(out.size()) < hovers) {
    const auto r = gen();  // raw output: the same numbers everywhere
    const int dc = static_cast<int>(r % 3) - 1, dr = static_cast<int>((r / 3) % 3) - 1;
    const Cell n{c.col + dc, c.row + dr};
    if ((dc == 0 && dr == 0) || n.col < 0 || n.row < 0 || n.col >= cols || n.row >= rows) continue;
    out.push_back(c = n);
  }
  return out;
}

HoverReplay::HoverReplay(HoverBenchConfig config) : config_(std::move(config)) {
  std::error_code ec;
  if (std::filesystem::exists(config_.out, ec))
    throw Error(text_format(_("the hover benchmark's report %s already exists; name a new file"), config_.out.string().c_str()));
  const auto dir = config_.out.has_parent_path() ? config_.out.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(dir, ec)) throw Error(text_format(_("no folder %s for the hover benchmark's report"), dir.string().c_str()));
  if (config_.hovers < 1) throw Error(_("the hover benchmark needs at least one hover"));
}

const std::vector<Cell>& HoverReplay::path(int cols, int rows) {
  if (path_.empty()) path_ = hover_path(cols, rows, config_.hovers, config_.seed);
  return path_;
}

namespace {
double ms_between(FrameMarks::Clock::time_point a, FrameMarks::Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

void HoverReplay::frame(const FrameMarks& marks, const gl::TransferCounts& moved, const Shown& drawn) {
  const auto end = marks.end;
  if (started_) {
    frame_ms_.push_back(ms_between(last_end_, end));
    events_ms_.push_back(ms_between(last_end_, marks.start));
    views_ms_.push_back(ms_between(marks.start, marks.drawn));
    submit_ms_.push_back(ms_between(marks.drawn, marks.rendered));
    swap_ms_.push_back(ms_between(marks.rendered, end));
    cpu_ms_ = platform::process_cpu_ms() - cpu_ms_start_;  // all threads, Mesa's too
    train_last_ = train_step_;
    frame_readbacks_.push_back(static_cast<int>(moved.readbacks));
    frame_waited_.push_back(static_cast<int>(moved.waited()));
    frame_uploads_.push_back(static_cast<int>(moved.uploads));
    readback_bytes_ += static_cast<std::int64_t>(moved.readback_bytes);
    upload_bytes_ += static_cast<std::int64_t>(moved.upload_bytes);
  }
  last_end_ = end;
  if (!waiting_) return;
  if (stepping_ && drawn.layer == target_layer_ && drawn.head == target_head_) {
    step_ms_.push_back(ms_between(moved_at_, end));
    waiting_ = stepping_ = false;
  } else if (!stepping_ && drawn.query == target_) {
    latency_ms_.push_back(ms_between(moved_at_, end));
    waiting_ = false;
  }
}

std::optional<ReplayMove> HoverReplay::next() {
  if (waiting_ || path_.empty()) return std::nullopt;
  const auto every = static_cast<std::size_t>(std::max(config_.step_every, 0));
  if (config_.vit && every > 0 && index_ > 0 && index_ < path_.size() && index_ % every == 0 &&
      static_cast<std::size_t>(steps_) < index_ / every) {
    waiting_ = stepping_ = true;
    return ReplayMove{ReplayMove::Kind::Step, {}, steps_++};
  }
  if (index_ >= path_.size()) return std::nullopt;
  started_ = true;
  waiting_ = true;
  target_ = path_[index_++];
  if (index_ == 1) {
    cpu_ms_start_ = platform::process_cpu_ms();
    train_first_ = train_step_;
  }
  return ReplayMove{ReplayMove::Kind::Hover, target_, 0};
}

void HoverReplay::trained(std::int64_t step) { train_step_ = step; }

void HoverReplay::stepped(Clock::time_point when, int layer, int head) {
  moved_at_ = when;
  target_layer_ = layer;
  target_head_ = head;
}

std::string HoverReplay::finish(const std::string& renderer) const {
  const Spread frame = spread_of(frame_ms_), latency = spread_of(latency_ms_);
  const int max_readbacks = *std::max_element(frame_readbacks_.begin(), frame_readbacks_.end());
  const auto frames_with_readbacks = std::count_if(frame_readbacks_.begin(), frame_readbacks_.end(), [](int n) { return n > 0; });
  const int max_waited = *std::max_element(frame_waited_.begin(), frame_waited_.end());
  nlohmann::json j;
  j["renderer"] = renderer;
  j["source"] = {{"kind", source_.kind}, {"grid", {{"cols", source_.cols}, {"rows", source_.rows}}}, {"layers", source_.layers},
                 {"heads", source_.heads}, {"runner", source_.runner}};
  if (source_.kind != "hand-made") j["source"]["model"] = source_.model;  // the checkpoint, or the run being trained
  j["hovers"] = config_.hovers;
  j["hovers_shown"] = latency_ms_.size();
  j["patch"] = config_.vit ? source_.patch : config_.patch;
  j["seed"] = config_.seed;
  j["frames"] = frame.count;
  j["frame_ms"] = {{"median", frame.median}, {"p95", frame.p95}, {"max", frame.max}};
  j["query_to_screen_ms"] = {{"median", latency.median}, {"p95", latency.p95}, {"max", latency.max}};
  // A ViT's layer/head steps: the key pressed to the frame whose map shows the new layer or head.
  j["layer_head_steps"] = step_ms_.size();
  if (!step_ms_.empty()) {
    const Spread step = spread_of(step_ms_);
    j["step_to_screen_ms"] = {{"median", step.median}, {"p95", step.p95}, {"max", step.max}};
  }
  j["step_to_screen_ms_all"] = step_ms_;
  // Where a frame's time goes (medians): waiting for and handling window events; the views
  // (their GPU passes and read-backs); handing ImGui's lists to OpenGL; the swap with glFinish
  // (llvmpipe rasterizes here and Xvfb takes the pixels).
  j["stage_median_ms"] = {{"events", spread_of(events_ms_).median},
                          {"views", spread_of(views_ms_).median},
                          {"submit", spread_of(submit_ms_).median},
                          {"swap_and_finish", spread_of(swap_ms_).median}};
  j["process_cpu_ms_per_frame"] = cpu_ms_ / static_cast<double>(frame.count);
  // Read-backs: all of them, and those that waited for the GPU (made before their fence had
  // signalled; gl::TransferCounts::waited).
  j["readbacks"] = {{"max_per_frame", max_readbacks},
                    {"frames_with_any", frames_with_readbacks},
                    {"bytes", readback_bytes_},
                    {"waited_max_per_frame", max_waited}};
  j["uploads"] = {{"total", std::accumulate(frame_uploads_.begin(), frame_uploads_.end(), 0)}, {"bytes", upload_bytes_}};
  // --train: the training steps made while the replay ran, over its wall time (the frames' sum).
  const double wall_s = std::accumulate(frame_ms_.begin(), frame_ms_.end(), 0.0) / 1e3;
  const std::int64_t trained = train_last_ - train_first_;
  const double train_rate = wall_s > 0 ? static_cast<double>(trained) / wall_s : 0.0;
  if (config_.train)
    j["training"] = {{"step_at_start", train_first_}, {"step_at_end", train_last_}, {"steps", trained},
                     {"seconds", wall_s}, {"steps_per_second", train_rate}};
  if (!video_.is_null()) j["video"] = video_;
  j["frame_ms_all"] = frame_ms_;
  j["query_to_screen_ms_all"] = latency_ms_;
  write_file_safely(config_.out, j.dump(1) + "\n", /*overwrite=*/false);
  char what[400];
  if (config_.train)
    std::snprintf(what, sizeof what,
                  // TRANSLATORS: the hover benchmark's summary: hovers, the grid's columns x rows, layers x heads, the
                  // layer/head steps made, then the training steps made while it ran, seconds and steps per second.
                  _("%d hovers over the model being trained (%d x %d patches, %d layers x %d heads) with %zu layer/head steps, "
                    "training %lld steps in %.1f s (%.1f steps/s)"),
                  config_.hovers, source_.cols, source_.rows, source_.layers, source_.heads, step_ms_.size(),
                  static_cast<long long>(trained), wall_s, train_rate);
  else if (config_.vit)
    // TRANSLATORS: hovers, the model's file name, the grid's columns x rows, layers x heads, where attention ran
    // ("cpu" or "gpu", kept as it is), the layer/head steps made.
    std::snprintf(what, sizeof what, _("%d hovers over the ViT %s (%d x %d patches, %d layers x %d heads, %s path) with %zu layer/head steps"),
                  config_.hovers, std::filesystem::path(source_.model).filename().string().c_str(), source_.cols, source_.rows,
                  source_.layers, source_.heads, source_.runner.c_str(), step_ms_.size());
  else
    // TRANSLATORS: K is the patch size in pixels.
    std::snprintf(what, sizeof what, _("%d hovers at K = %d"), config_.hovers, config_.patch);
  if (!video_.is_null()) {  // --video: "…, while clip.mp4 played (123 frames shown, 4 dropped)"
    char played[300];
    // TRANSLATORS: added to the benchmark's summary: the video's file name, its frames shown and dropped, then
    // possibly "; it ended before the replay did".
    std::snprintf(played, sizeof played, _(", while %s played (%lld frames shown, %lld dropped%s)"),
                  std::filesystem::path(video_.value("path", std::string())).filename().string().c_str(),
                  static_cast<long long>(video_.value("frames_shown", std::int64_t{0})),
                  static_cast<long long>(video_.value("frames_dropped", std::int64_t{0})),
                  video_.value("ended", false) ? _("; it ended before the replay did") : "");
    std::strncat(what, played, sizeof what - std::strlen(what) - 1);
  }
  char line[900];
  std::snprintf(line, sizeof line,
                // TRANSLATORS: the hover benchmark's result line; the first %s is the summary above, p95 the 95th
                // percentile, the last %s the OpenGL renderer's name.
                _("hover benchmark: %s, %zu frames: frame median %.1f ms, p95 %.1f ms; pointer move to "
                  "new map on screen median %.1f ms, p95 %.1f ms; read-backs: at most %d in a frame, at most %d of them waiting for the GPU, %ld "
                  "frames with any; "
                  "process CPU %.1f ms per frame (%s)"),
                what, frame.count, frame.median, frame.p95, latency.median, latency.p95, max_readbacks,
                max_waited, static_cast<long>(frames_with_readbacks), cpu_ms_ / static_cast<double>(frame.count), renderer.c_str());
  return line;
}

}  // namespace attnlab::app

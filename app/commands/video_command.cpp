#include "app/commands/video_command.hpp"

#include "app/commands/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/base/error.hpp"
#include "core/io/files.hpp"
#include "core/gpu/vit_backend.hpp"
#include "core/io/overlay.hpp"
#include "core/base/parse.hpp"
#include "core/io/video.hpp"
#include "core/vit/vit_run.hpp"

namespace attnlab::app {

std::string video_usage() {
  return R"(  attnlab video --model PATH --in VIDEO|--camera DEVICE --out FILE.mp4|FILE.gif [--view map|rollout|norms]
              [--layer L] [--head H|mean|max|min] [--query cls|regN|COL,ROW]
              [--fps F] [--max-seconds S] [--resize S] [--bilinear] [--colormap NAME]
              [--normalization N] [--opacity A] [--backend auto|gpu|cpu] [--force]
                           every frame of VIDEO (MP4, WebM, MKV, MOV, AVI, animated GIF…)
                           through the ViT, its map over the frame (as render --view
                           overlay draws a still), written as H.264 MP4 (MPEG-4 part 2
                           where this FFmpeg lacks libx264) or a GIF with one palette,
                           with a sidecar FILE.json; a progress line on stderr. --fps:
                           frames per second written (default the video's; frames are
                           dropped to it, never made up); --max-seconds: stop after S
                           seconds of video (default 600 for MP4, 30 for GIF, 10 for a
                           camera); --camera DEVICE: a camera (v4l2 on Linux) instead
  attnlab video --list-cameras
                           the cameras FFmpeg finds, one a line, or "no camera found"
)";
}

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

std::filesystem::path sidecar_of(const std::filesystem::path& out) {
  auto j = out;
  j.replace_extension(".json");
  return j;
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

// The model, its runner and the display settings: draws the overlaid picture of any image.
class Overlayer {
 public:
  Overlayer(const Document& d, const OverlayChoices& choices) : d_(d), choices_(choices) {
    if (choices.view != "map" && choices.view != "rollout" && choices.view != "norms")
      throw Error("unknown view '" + choices.view + "' (expected map, rollout or norms)");
    std::error_code ec;
    if (!std::filesystem::exists(d.model_path, ec))
      throw Error("the model '" + d.model_path.string() + "' does not exist");
    model_ = std::make_shared<const VitModel>(load_vit(d.model_path));
    runner_ = choose_vit_runner(d.vit_backend);
    budget_ = vit_memory_budget();
  }

  const VitModel& model() const { return *model_; }
  std::int64_t budget() const { return budget_; }
  int resize() const { return d_.vit_resize > 0 ? d_.vit_resize : vit_trained_size(model_->arch); }

  // Runs the model on an image (the forward pass; every later read is cheap).
  VitRun run(const Image& image) const { return VitRun(model_, image, resize(), *runner_.runner, budget_); }

  // The overlaid picture of `image` given its run: the model's input (scaled, cropped to whole
  // patches) with the map over it. `tau` != 1 only for the map view (a sweep).
  std::vector<std::uint8_t> draw(const Image& image, const VitRun& run, const Resolved& r, double tau, int& width,
                                 int& height) const {
    const SourceGrid g = run.grid();
    std::vector<float> values;
    if (choices_.view == "rollout")
      values = run.rollout_row(r.layer, r.head.head >= 0 ? HeadFusion::Mean : r.head.fusion, r.query);
    else if (choices_.view == "norms") {
      const std::vector<float> norms = run.token_norms(r.layer);
      values.assign(norms.begin() + g.prefix, norms.end());
    } else if (tau != 1.0)
      values = row_at_temperature(run, r.layer, r.head, r.query, tau);
    else
      values = run.patch_row(r.layer, r.head, r.query);
    const Image photo = crop_image(vit_scaled_image(image, resize()), run.input_width(), run.input_height());
    width = photo.width;
    height = photo.height;
    return overlay_heat_map(photo, values, g.cols, g.rows, d_.colormap, d_.normalization, d_.opacity, d_.bilinear);
  }

  // The sidecar's common part: the document, the program, the model, the choice as resolved.
  nlohmann::json sidecar(const VitRun& run, const Resolved& r) const {
    nlohmann::json j = to_json(d_);
    j["program"] = {{"name", "attnlab"}, {"version", ATTNLAB_VERSION}};
    j["vit_model_file"] = model_->file.string();
    j["vit_model_sha256"] = model_->sha256;
    j["backend"] = run.path() + " (" + runner_.why + ")";
    j["overlay"] = {{"view", choices_.view},
                    {"layer", r.layer},
                    {"head", head_choice_text(r.head)},
                    {"query", query_text(r.query, run.grid())},
                    {"resize", resize()},
                    {"grid", {{"cols", run.grid().cols}, {"rows", run.grid().rows}}},
                    {"colormap", std::string(colormap_name(d_.colormap))},
                    {"normalization", std::string(normalization_name(d_.normalization))},
                    {"opacity", d_.opacity},
                    {"bilinear", d_.bilinear}};
    return j;
  }

 private:
  Document d_;
  OverlayChoices choices_;
  std::shared_ptr<const VitModel> model_;
  VitRunnerChoice runner_;
  std::int64_t budget_ = 0;
};

// The output and its sidecar must be free (or --force) and the folder must exist: checked before
// any work.
void check_outputs(const std::filesystem::path& out, bool force, std::initializer_list<const char*> extensions) {
  if (out.empty()) throw Error("--out FILE is required");
  std::string ext = out.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string names;
  bool ok = false;
  for (const char* e : extensions) {
    ok = ok || ext == e;
    names += (names.empty() ? "" : " or ") + std::string(e);
  }
  if (!ok) throw Error("--out must name a " + names + " file, got '" + out.string() + "'");
  std::error_code ec;
  const auto dir = out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path();
  if (!std::filesystem::is_directory(dir, ec))
    throw Error("cannot write '" + out.string() + "': the folder '" + dir.string() + "' does not exist");
  for (const auto& p : {out, sidecar_of(out)})
    if (!force && std::filesystem::exists(p, ec))
      throw Error("'" + p.string() + "' exists; nothing was written (use --force to replace it)");
}

// The sidecar after the picture or video; if it fails, the picture goes again.
void write_sidecar(const std::filesystem::path& out, const nlohmann::json& j, bool force) {
  try {
    write_file_safely(sidecar_of(out), j.dump(2) + "\n", force);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(out, ec);
    throw;
  }
}

// A progress line on stderr: redrawn in place on a terminal, every tenth frame otherwise.
class Progress {
 public:
  explicit Progress(double total) : total_(total), tty_(::isatty(2) != 0), start_(std::chrono::steady_clock::now()) {}
  void frame(int written, double t, bool last = false) {
    if (!last && !tty_ && written % 10 != 0) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double share = total_ > 0 ? std::clamp(t / total_, 0.0, 1.0) : 0.0;
    const int filled = static_cast<int>(std::lround(share * 20));
    std::fprintf(stderr, "%sattnlab video: [%s%s] %3.0f%% %d frame(s), %.1f s of video, %.1f frames/s%s",
                 tty_ ? "\r" : "", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(20 - filled), '.').c_str(), share * 100, written, t,
                 s > 0 ? written / s : 0.0, tty_ && !last ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  double total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

int run_video(const std::vector<std::string>& in) {
  std::vector<std::string> args = in;
  const bool force = take_flag(args, "--force");
  const std::filesystem::path out = take_option(args, "--out");
  if (take_flag(args, "--list-cameras")) {
    if (!args.empty()) throw Error("--list-cameras takes no other option, got '" + args[0] + "'");
    const std::vector<CameraInfo> cameras = list_cameras();
    if (cameras.empty()) std::printf("no camera found\n");
    for (const CameraInfo& c : cameras) std::printf("%s\t%s\n", c.device.c_str(), c.name.c_str());
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  const std::string input = take_option(args, "--in");
  const std::string camera = take_option(args, "--camera");
  const std::string model = take_option(args, "--model");
  Document d;
  OverlayChoices choices;
  std::string fps_text, max_text;
  std::vector<std::pair<std::string, std::string>> extra;
  std::vector<std::string> known = choice_flag_names();
  known.insert(known.end(), {"--view", "--fps", "--max-seconds"});
  parse_document_flags(args, kFlagsRenderModel, d, known, &extra, " for video");
  for (const auto& [k, v] : extra) {
    if (read_choice_flag(choices.choice, k, v)) continue;
    if (k == "--view") choices.view = v;
    else if (k == "--fps") fps_text = v;
    else if (k == "--max-seconds") max_text = v;
  }
  if (!d.image_path.empty())
    throw Error("attnlab video reads --in VIDEO, not an image (for a still: attnlab render --model … --view overlay)");
  if (model.empty()) throw Error("--model PATH is required");
  if (input.empty() == camera.empty())
    throw Error("give one of --in VIDEO and --camera DEVICE (attnlab video --list-cameras lists them)");
  check_outputs(out, force, {".mp4", ".gif"});
  const bool gif = video_encoder_for(out) == "gif";
  const double fps = fps_text.empty() ? 0.0 : parse_float(fps_text, "--fps", 0.1f, 120.0f);
  const double max_seconds =
      max_text.empty() ? (gif ? 30.0 : 600.0) : parse_float(max_text, "--max-seconds", 0.01f, 36000.0f);
  d.model_path = std::filesystem::absolute(model);
  d.source = ShownSource::Vit;

  Overlayer overlayer(d, choices);  // the model first: a bad one is refused before the video is read
  // A camera and a file differ only in the opening (core/io/video.hpp).
  VideoReader reader = camera.empty() ? VideoReader::open_file(input, video_max_pixels(overlayer.budget()))
                                      : VideoReader::open_camera(camera, video_max_pixels(overlayer.budget()));
  const std::string source = camera.empty() ? "'" + input + "'" : "the camera '" + camera + "'";
  const VideoInfo info = reader.info();
  const double rate = fps > 0 ? fps : info.fps > 0 ? std::min(info.fps, 120.0) : 25.0;
  Progress progress(std::min(info.duration > 0 ? info.duration : max_seconds, max_seconds));
  std::optional<VideoWriter> writer;
  nlohmann::json sidecar;
  int width = 0, height = 0, written = 0;
  double next_time = 0, last_time = 0;
  while (auto frame = reader.next()) {
    if (frame->time >= max_seconds - 1e-9) break;
    if (frame->time + 0.5 / rate < next_time) continue;  // dropped to the output's rate
    while (next_time <= frame->time + 0.5 / rate) next_time += 1.0 / rate;
    const VitRun run = overlayer.run(frame->image);
    const Resolved r = resolve(choices, run);  // checked on the first frame's grid, again if the size changes
    int w = 0, h = 0;
    const std::vector<std::uint8_t> rgb = overlayer.draw(frame->image, run, r, 1.0, w, h);
    if (!writer) {
      width = w;
      height = h;
      writer.emplace(out, w, h, rate, force);
      sidecar = overlayer.sidecar(run, r);
    } else if (w != width || h != height) {
      throw Error(source + ": the picture changes size at frame " + std::to_string(frame->index) + " (" +
                  std::to_string(w) + "x" + std::to_string(h) + " after " + std::to_string(width) + "x" +
                  std::to_string(height) + "); nothing was written");
    }
    writer->write(rgb);
    ++written;
    last_time = frame->time;
    progress.frame(written, last_time);
  }
  if (!writer) throw Error(source + ": no frame before --max-seconds; nothing was written");
  writer->finish();
  progress.frame(written, last_time, true);
  sidecar["video"] = {{"in", camera.empty() ? std::filesystem::absolute(input).string() : camera},
                      {"camera", !camera.empty()},
                      {"out", out.filename().string()},
                      {"encoder", writer->encoder()},
                      {"frames", written},
                      {"fps", rate},
                      {"width", width & (gif ? ~0 : ~1)},
                      {"height", height & (gif ? ~0 : ~1)},
                      {"max_seconds", max_seconds},
                      {"source",
                       {{"width", info.width},
                        {"height", info.height},
                        {"fps", info.fps},
                        {"duration", info.duration},
                        {"codec", info.codec}}}};
  write_sidecar(out, sidecar, force);
  std::printf("attnlab: wrote %s (%d frames, %s) and %s\n", out.string().c_str(), written, writer->encoder().c_str(),
              sidecar_of(out).string().c_str());
  return 0;
}

int run_overlay_still(const Document& d, const OverlayChoices& choices, const std::filesystem::path& out, bool force) {
  check_outputs(out, force, {".png"});
  const Overlayer overlayer(d, choices);
  const Image image = load_image(d.image_path);
  const VitRun run = overlayer.run(image);
  const Resolved r = resolve(choices, run);
  int w = 0, h = 0;
  const std::vector<std::uint8_t> rgb = overlayer.draw(image, run, r, 1.0, w, h);
  write_png(out, w, h, 3, rgb, force);
  nlohmann::json sidecar = overlayer.sidecar(run, r);
  sidecar["render"] = {{"view", "overlay"}, {"width", w}, {"height", h}, {"finished", true}};
  write_sidecar(out, sidecar, force);
  std::printf("attnlab: wrote %s and %s\n", out.string().c_str(), sidecar_of(out).string().c_str());
  return 0;
}

int run_overlay_sweep(const Document& d, const OverlayChoices& choices, const SweepRequest& sweep,
                      const std::filesystem::path& out, bool force) {
  if (sweep.kind != "layer" && sweep.kind != "head" && sweep.kind != "query-row" && sweep.kind != "tau")
    throw Error("--sweep must be layer, head, query-row or tau, got '" + sweep.kind + "'");
  if (sweep.kind == "tau" && choices.view != "map")
    throw Error("--sweep tau varies a row of A: it takes --view map only");
  if (!sweep.values.empty() && sweep.kind != "tau") throw Error("--sweep-values goes with --sweep tau");
  check_outputs(out, force, {".gif", ".mp4"});
  const Overlayer overlayer(d, choices);
  const Image image = load_image(d.image_path);
  const VitRun run = overlayer.run(image);
  const Resolved base = resolve(choices, run);
  const SourceGrid g = run.grid();
  // One frame per value: the choice with the swept part replaced, and τ.
  std::vector<std::pair<Resolved, double>> frames;
  nlohmann::json values = nlohmann::json::array();
  if (sweep.kind == "layer")
    for (int l = 0; l < run.layers(); ++l) {
      frames.push_back({{l, base.head, base.query}, 1.0});
      values.push_back(l);
    }
  else if (sweep.kind == "head")
    for (int h = 0; h < run.heads(); ++h) {
      frames.push_back({{base.layer, HeadChoice{h, HeadFusion::Mean}, base.query}, 1.0});
      values.push_back(h);
    }
  else if (sweep.kind == "query-row") {
    const int row =
        base.query >= g.prefix ? (base.query - g.prefix) / g.cols : g.rows / 2;  // a prefix query: the middle row
    for (int c = 0; c < g.cols; ++c) {
      frames.push_back({{base.layer, base.head, g.prefix + row * g.cols + c}, 1.0});
      values.push_back(std::to_string(c) + "," + std::to_string(row));
    }
  } else {
    for (const std::string& v : split_commas(sweep.values.empty() ? "0.25,0.5,1,2,4" : sweep.values)) {
      const float tau = parse_float(v, "--sweep-values", 1e-3f, 1e3f);
      frames.push_back({base, tau});
      values.push_back(tau);
    }
  }
  if (frames.empty()) throw Error("--sweep " + sweep.kind + ": nothing to sweep");
  std::optional<VideoWriter> writer;
  int width = 0, height = 0;
  for (const auto& [r, tau] : frames) {
    const std::vector<std::uint8_t> rgb = overlayer.draw(image, run, r, tau, width, height);
    if (!writer) writer.emplace(out, width, height, sweep.fps, force);
    writer->write(rgb);
  }
  writer->finish();
  nlohmann::json sidecar = overlayer.sidecar(run, base);
  sidecar["sweep"] = {{"kind", sweep.kind},           {"values", values}, {"fps", sweep.fps}, {"frames", frames.size()},
                      {"encoder", writer->encoder()}, {"width", width},   {"height", height}};
  write_sidecar(out, sidecar, force);
  std::printf("attnlab: wrote %s (%zu frames, %s) and %s\n", out.string().c_str(), frames.size(),
              writer->encoder().c_str(), sidecar_of(out).string().c_str());
  return 0;
}

}  // namespace attnlab::app

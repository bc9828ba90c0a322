#include "core/vit/vit_auto.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <istream>
#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/files.hpp"
#include "core/base/platform.hpp"
#include "core/io/user_config.hpp"

namespace attnlab {
namespace {

std::string trim(std::string s) {
  const auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

std::string ms_text(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, ms >= 10 ? "%.0f ms" : "%.1f ms", ms);
  return b;
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  const std::tm tm = platform::utc_time(now);
  char b[16];
  std::strftime(b, sizeof b, "%Y-%m-%d", &tm);
  return b;
}

double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

}  // namespace

std::string cpu_model_name_from(std::istream& cpuinfo) {
  std::string line;
  while (std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || trim(line.substr(0, colon)) != "model name") continue;
    if (std::string name = trim(line.substr(colon + 1)); !name.empty()) return name;
  }
  return "unknown CPU";
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  return cpu_model_name_from(in);
}

std::string vit_auto_summary(const VitAutoTiming& t) {
  // TRANSLATORS: after "cpu " or "gpu " (the paths' names): the path's forward pass was not timed.
  const char* not_timed = _("not timed");
  const std::string cpu = t.cpu_ms >= 0 ? "cpu " + ms_text(t.cpu_ms) : std::string("cpu ") + not_timed;
  const std::string gpu =
      t.gpu_ms >= 0 ? "gpu " + ms_text(t.gpu_ms) : std::string("gpu ") + not_timed + (t.note.empty() ? "" : " (" + t.note + ")");
  if (t.remembered)
    // TRANSLATORS: after "auto: " (the backend's name): %1$s is the path chosen (cpu or gpu), then both paths' times
    // ("cpu 71 ms", "gpu 286 ms") and the date they were measured (YYYY-MM-DD).
    return "auto: " + text_format(_("remembered %s (%s, %s, measured %s)"), t.choice.c_str(), cpu.c_str(), gpu.c_str(),
                                  t.measured.c_str());
  return "auto: " + cpu + ", " + gpu + " \u2192 " + t.choice;
}

std::string vit_auto_key(const std::string& renderer, const std::string& cpu, const VitArchitecture& a, int tokens) {
  return renderer + " | " + cpu + " | L" + std::to_string(a.depth) + " D" + std::to_string(a.D) + " H" +
         std::to_string(a.heads) + " MLP" + std::to_string(a.mlp_hidden) + " P" + std::to_string(a.patch) + " T" +
         std::to_string(tokens);
}

VitAutoStore::VitAutoStore() : file_(user_config_dir() / "vit_backend.json") {}

std::optional<VitAutoTiming> VitAutoStore::find(const std::string& key) const {
  const nlohmann::json j = read_json(file_);
  const auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return std::nullopt;
  VitAutoTiming t;
  t.cpu_ms = it->value("cpu_ms", -1.0);
  t.gpu_ms = it->value("gpu_ms", -1.0);
  t.choice = it->value("choice", std::string());
  t.measured = it->value("measured", std::string());
  t.remembered = true;
  if (t.choice != "cpu" && t.choice != "gpu") return std::nullopt;
  return t;
}

void VitAutoStore::remember(const std::string& key, const VitAutoTiming& t) const {
  nlohmann::json j = read_json(file_);
  j[key] = {{"cpu_ms", t.cpu_ms}, {"gpu_ms", t.gpu_ms}, {"choice", t.choice}, {"measured", t.measured}};
  std::error_code ec;
  std::filesystem::create_directories(file_.parent_path(), ec);
  write_file_safely(file_, j.dump(2) + "\n", /*overwrite=*/true);
}

VitAutoRunner::VitAutoRunner(std::unique_ptr<VitRunner> cpu, MakeRunner make_gpu, std::string renderer,
                             std::string gpu_note, std::string cpu_model, VitAutoStore store, Clock clock)
    : cpu_(std::move(cpu)),
      make_gpu_(std::move(make_gpu)),
      renderer_(std::move(renderer)),
      gpu_note_(std::move(gpu_note)),
      cpu_model_(std::move(cpu_model)),
      store_(std::move(store)),
      clock_(clock ? std::move(clock) : Clock(steady_ms)) {
  if (!cpu_) throw Error(_("auto: no CPU path"));
}

VitRunner& VitAutoRunner::gpu() {
  if (!gpu_) gpu_ = make_gpu_();
  if (!gpu_) throw Error(_("auto: no GPU runner"));
  return *gpu_;
}

VitAutoRunner::~VitAutoRunner() = default;

VitPass VitAutoRunner::run(const VitModel& model, const VitInput& input, std::int64_t budget,
                           const std::atomic<bool>* stop) {
  auto timed = [&](VitRunner& runner, std::int64_t bytes, double& ms) {
    const double start = clock_();
    VitPass pass = runner.run(model, input, bytes, stop);
    ms = clock_() - start;
    return pass;
  };
  timing_ = VitAutoTiming{};
  timing_.measured = today_utc();
  if (!make_gpu_) {  // nothing to compare: the CPU path, timed for the record
    timing_.note = gpu_note_;
    timing_.choice = "cpu";
    chosen_ = cpu_.get();
    return timed(*cpu_, budget, timing_.cpu_ms);
  }
  const std::string key = vit_auto_key(renderer_, cpu_model_, model.arch, model.arch.prefix() + input.N());
  if (std::optional<VitAutoTiming> known = store_.find(key)) {
    timing_ = *known;
    chosen_ = known->choice == "gpu" ? &gpu() : cpu_.get();
    return chosen_->run(model, input, budget, stop);
  }
  // Both, the CPU's pass kept while the GPU's runs within what is left of the budget.
  ++measurements_;
  VitPass cpu_pass = timed(*cpu_, budget, timing_.cpu_ms);
  if (stop && stop->load()) throw Error(_("cancelled"));
  VitPass gpu_pass;
  try {
    gpu_pass = timed(gpu(), std::max<std::int64_t>(budget - cpu_pass.bytes(), 0), timing_.gpu_ms);
  } catch (const Error& e) {
    if (stop && stop->load()) throw;
    timing_.gpu_ms = -1;
    // TRANSLATORS: why the GPU path has no time: %s is its error.
    timing_.note = text_format(_("failed: %s"), e.what());
    timing_.choice = "cpu";
    chosen_ = cpu_.get();
    return cpu_pass;  // not remembered: the GPU may fit another input of this shape's budget
  }
  const bool gpu_faster = timing_.gpu_ms < timing_.cpu_ms;
  timing_.choice = gpu_faster ? "gpu" : "cpu";
  chosen_ = gpu_faster ? gpu_.get() : cpu_.get();  // gpu_ made by the measurement
  try {
    store_.remember(key, timing_);
  } catch (const std::exception& e) {
    // TRANSLATORS: the timing could not be saved: %s is why.
    timing_.note = text_format(_("not remembered: %s"), e.what());
  }
  return gpu_faster ? std::move(gpu_pass) : std::move(cpu_pass);
}

}  // namespace attnlab

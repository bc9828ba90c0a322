// libFuzzer target: `attnlab render --from SIDECAR.json --out OUT.png --force` end to end with a
// hostile sidecar: run_render (app/gui/output/render_commands.hpp), the code the command runs, reads the
// fuzzed JSON from a file, restores every setting from it (apply_json), draws the view without a
// window (EGL) and writes the PNG and its sidecar into a folder of the process's own. The input
// is the sidecar's bytes; when it is a JSON object, its "image" (a string) is pointed at a small
// 40 × 30 picture written by the harness and its "vit"."model" (a non-empty string) at the
// bundled Fashion-MNIST ViT, so that the settings, not a missing file, decide what happens. The
// memory budget is 256 MiB (ATTNLAB_MEMORY_BUDGET_MB): large sizes are refused, not allocated.
// A custom mutator makes three mutations in four on the JSON itself (a value replaced by one of
// another type or size, a key removed, a value copied elsewhere), the rest byte-wise: a sidecar
// that is valid JSON with a field of the wrong type is what a hand-edited file looks like.
// A sidecar is either drawn or refused with one attnlab::Error of one line; anything else (a
// crash, a sanitizer report, another exception, a hang past -timeout) is a finding. Seeds:
// tests/fuzz/corpus/render_from (sidecars written by attnlab render); findings are kept in
// tests/fuzz/regressions/render_from and replayed by the fuzz_render_from_replay test.
#include "tests/fuzz/fuzz_support.hpp"
#include "app/gui/output/render_commands.hpp"
#include "core/base/error.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

[[noreturn]] void broken(const std::string& what) { attnlab::fuzz::report_finding("fuzz_render_from", what); }

const fs::path& folder() { return attnlab::fuzz::temp_folder("render-from"); }

// A 40 × 30 binary PPM: a gradient with a bright square, so that every view has something to show.
fs::path small_image() {
  const fs::path path = folder() / "small.ppm";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << "P6\n40 30\n255\n";
  for (int y = 0; y < 30; ++y)
    for (int x = 0; x < 40; ++x) {
      const bool square = x >= 10 && x < 20 && y >= 8 && y < 18;
      const unsigned char rgb[3] = {static_cast<unsigned char>(square ? 250 : x * 6), static_cast<unsigned char>(y * 8),
                                    static_cast<unsigned char>(square ? 40 : 200 - x * 4)};
      f.write(reinterpret_cast<const char*>(rgb), 3);
    }
  if (!f) broken("cannot write " + path.string());
  return path;
}

// Every value below `j` (objects' members and arrays' elements), with its parent.
void collect(nlohmann::json& j, std::vector<std::pair<nlohmann::json*, nlohmann::json*>>& out) {
  if (j.is_object())
    for (auto& [key, value] : j.items()) {
      out.emplace_back(&value, &j);
      collect(value, out);
    }
  else if (j.is_array())
    for (auto& value : j) {
      out.emplace_back(&value, &j);
      collect(value, out);
    }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  if (rng() % 4 != 0) {
    nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    std::vector<std::pair<nlohmann::json*, nlohmann::json*>> nodes;
    if (!j.is_discarded()) collect(j, nodes);
    if (!nodes.empty()) {
      auto [node, parent] = nodes[rng() % nodes.size()];
      const nlohmann::json other = *nodes[rng() % nodes.size()].first;
      switch (rng() % 12) {
        case 0: *node = nullptr; break;
        case 1: *node = (rng() & 1) != 0; break;
        case 2: *node = static_cast<std::int64_t>(rng() % 20) - 2; break;
        case 3: {
          static const double kNumbers[] = {1e30, -1e30, 2147483648.0, 8193.0, 15.0, 0.5, -0.0, 1e-300};
          *node = kNumbers[rng() % 8];
          break;
        }
        case 4: *node = std::numeric_limits<std::uint64_t>::max() - rng() % 3; break;
        case 5: *node = (rng() & 1) != 0 ? std::string() : std::string("x\ny"); break;
        case 6: *node = nlohmann::json::array(); break;
        case 7: *node = nlohmann::json::object(); break;
        case 8: *node = other; break;
        case 9:
          if (node->is_number()) *node = node->get<double>() * ((rng() & 1) != 0 ? 1000.0 : -1.0);
          else *node = other;
          break;
        default:  // a member or element removed
          if (parent->is_object()) {
            for (auto it = parent->begin(); it != parent->end(); ++it)
              if (&*it == node) {
                parent->erase(it);
                break;
              }
          } else if (parent->is_array() && !parent->empty()) {
            parent->erase(parent->begin() + static_cast<std::ptrdiff_t>(rng() % parent->size()));
          }
      }
      const std::string out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (out.size() <= max_size) {
        std::memcpy(data, out.data(), out.size());
        return out.size();
      }
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("ATTNLAB_MEMORY_BUDGET_MB", "256", 1);
  setenv("ATTNLAB_THREADS", "2", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fs::path image = small_image();
  const fs::path sidecar = folder() / "sidecar.json", out = folder() / "out.png";
  std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    if (const auto it = j.find("image"); it != j.end() && it->is_string()) *it = image.string();
    if (const auto vit = j.find("vit"); vit != j.end() && vit->is_object())
      if (const auto model = vit->find("model"); model != vit->end() && model->is_string() && !model->get<std::string>().empty())
        *model = (fs::path(ATTNLAB_FUZZ_ASSETS) / "fashion_vit").string();
    text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  {
    std::ofstream f(sidecar, std::ios::binary | std::ios::trunc);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!f) broken("cannot write " + sidecar.string());
  }
  try {
    attnlab::app::run_render({"--from", sidecar.string(), "--out", out.string(), "--force"});
  } catch (const attnlab::Error& e) {
    const std::string message = e.what();
    if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
    if (std::getenv("ATTNLAB_FUZZ_VERBOSE")) std::fprintf(stderr, "refused: %s\n", message.c_str());
  }
  return 0;
}

// Choosing the runner of a forward pass (--backend) and what a pass may cost: its bytes against
// the memory budget.
#include "core/vit/vit.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace attnlab {

VitBackend parse_vit_backend(const std::string& text, const char* flag) {
  if (text == "auto") return VitBackend::Auto;
  if (text == "gpu") return VitBackend::Gpu;
  if (text == "cpu") return VitBackend::Cpu;
  // TRANSLATORS: %1$s is a flag or field (--backend); auto, gpu and cpu are its values, typed as they are.
  throw Error(text_format(_("%s must be auto, gpu or cpu, got '%s'"), flag, text.c_str()));
}

const char* vit_backend_name(VitBackend backend) {
  switch (backend) {
    case VitBackend::Auto: return "auto";
    case VitBackend::Gpu: return "gpu";
    case VitBackend::Cpu: return "cpu";
  }
  return "auto";
}

bool is_software_renderer(std::string_view renderer) {
  std::string lower(renderer);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* name : {"llvmpipe", "softpipe", "swiftshader"})
    if (lower.find(name) != std::string::npos) return true;
  return false;
}

std::int64_t VitPass::bytes() const {
  std::int64_t n = 0;
  for (const Matrix& q : Q) n += q.size();
  for (const Matrix& k : K) n += k.size();
  for (const RowVector& t : token_norms) n += t.size();
  n += distance.size() + static_cast<std::int64_t>(logits.size());
  return n * static_cast<std::int64_t>(sizeof(float));
}

std::int64_t vit_pass_bytes(const VitArchitecture& arch, int T) {
  const std::int64_t t = T, D = arch.D, L = arch.depth, hidden = arch.mlp_hidden;
  const std::int64_t kept = 2 * L * t * D + L * t;              // Q, K, norms
  const std::int64_t working = t * (D + D + 3 * D + D + hidden)  // X, LN(X), QKV, O, MLP hidden
                               + 2 * 64 * t                      // a block of score rows, per thread
                               + t * 3 * arch.patch * arch.patch;  // the patches
  return (kept + working) * static_cast<std::int64_t>(sizeof(float));
}

std::int64_t vit_memory_budget() { return static_cast<std::int64_t>(memory_budget()); }

void vit_check_budget_for(const VitArchitecture& arch, const VitInput& input, std::int64_t budget, const char* what,
                          const std::function<std::int64_t(int)>& bytes) {
  const int T = arch.prefix() + input.N();
  const std::int64_t need = bytes(T);
  if (need <= budget) return;
  // The largest short side (a multiple of P) whose grid, at this image's aspect, fits.
  const double aspect = static_cast<double>(std::max(input.scaled_width, input.scaled_height)) /
                        std::max(1, std::min(input.scaled_width, input.scaled_height));
  int fits = 0;
  for (int side = arch.patch; side <= 65536; side += arch.patch) {
    const int short_patches = side / arch.patch;
    const int long_patches = static_cast<int>(std::floor(side * aspect)) / arch.patch;
    if (bytes(arch.prefix() + short_patches * long_patches) > budget) break;
    fits = side;
  }
  const auto need_mib = static_cast<long long>(need >> 20), budget_mib = static_cast<long long>(budget >> 20);
  if (fits > 0)
    // TRANSLATORS: %2$s is "the forward pass" or "the gradient pass"; MiB: mebibytes; --resize is a flag, %5$d pixels.
    throw Error(text_format(_("the image gives %d tokens: %s would need %lld MiB, over the %lld MiB memory budget; use --resize %d "
                              "or less"),
                            T, what, need_mib, budget_mib, fits));
  // TRANSLATORS: %2$s is "the forward pass" or "the gradient pass"; MiB: mebibytes.
  throw Error(text_format(_("the image gives %d tokens: %s would need %lld MiB, over the %lld MiB memory budget; no size fits this "
                            "budget"),
                          T, what, need_mib, budget_mib));
}

void vit_check_budget(const VitArchitecture& arch, const VitInput& input, std::int64_t budget) {
  // TRANSLATORS: goes into "the image gives %d tokens: %s would need %lld MiB, ...".
  vit_check_budget_for(arch, input, budget, _("the forward pass"), [&arch](int t) { return vit_pass_bytes(arch, t); });
}

}  // namespace attnlab

#include "core/base/budget.hpp"

#include "core/base/platform.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>


namespace attnlab {

std::uint64_t memory_budget() {
  if (const char* env = std::getenv("ATTNLAB_MEMORY_BUDGET_MB")) {
    char* end = nullptr;
    const long long mb = std::strtoll(env, &end, 10);
    if (end != env && *end == '\0' && mb > 0 && mb < (1ll << 43)) return static_cast<std::uint64_t>(mb) << 20;
  }
  const std::uint64_t known = platform::physical_memory();
  const std::uint64_t physical = known > 0 ? known : (std::uint64_t{4} << 30);
  return std::max<std::uint64_t>(physical / 4, std::uint64_t{256} << 20);
}

std::size_t checked_product(std::initializer_list<std::size_t> factors) {
  std::size_t out = 1;
  for (const std::size_t f : factors)
    if (__builtin_mul_overflow(out, f, &out)) return std::numeric_limits<std::size_t>::max();
  return out;
}

std::size_t checked_sum(std::size_t a, std::size_t b) {
  std::size_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<std::size_t>::max() : out;
}

std::string mib_text(std::size_t bytes) {
  // TRANSLATORS: a size too large to count (EiB: exbibytes, 2^60 bytes).
  if (bytes == std::numeric_limits<std::size_t>::max()) return _("more than 16 EiB");
  // TRANSLATORS: a size in mebibytes (MiB, 2^20 bytes), e.g. "12 MiB".
  return text_format(_("%zu MiB"), bytes / (std::size_t{1} << 20) + (bytes % (std::size_t{1} << 20) != 0));
}

void check_memory(std::size_t bytes, std::uint64_t budget, const std::string& what, const std::string& hint) {
  if (bytes <= budget) return;
  // TRANSLATORS: %1$s is the work ("decoding 'photo.jpg' (4000x3000 pixels)"), %2$s a size ("12 MiB"), %3$llu
  // the budget in MiB. ATTNLAB_MEMORY_BUDGET_MB is an environment variable: keep it as it is.
  std::string message = text_format(_("%s would need %s, over the %llu MiB memory budget (ATTNLAB_MEMORY_BUDGET_MB)"),
                                    what.c_str(), mib_text(bytes).c_str(), static_cast<unsigned long long>(budget >> 20));
  if (!hint.empty()) message += "; " + hint;
  throw Error(message);
}

}  // namespace attnlab

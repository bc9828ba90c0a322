#pragma once
// One memory budget for every path that allocates from what a user gives (a patch size, an
// image, a checkpoint, a training run): sizes computed in size_t with checked multiplication,
// summed and compared with the budget before anything is allocated.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace attnlab {

/// Work this small is never refused by a memory budget: the app's start-up (the safari photo at
/// K = 16, about 7 MiB) and the small test models must not be refused by a budget of 1 MiB that is
/// set to refuse a ViT's forward pass.
inline constexpr std::size_t kAlwaysAllowedBytes = std::size_t{64} << 20;

/// The memory one piece of work may use, in bytes: ATTNLAB_MEMORY_BUDGET_MB when set (a
/// positive integer of MiB), otherwise a quarter of the machine's physical memory, at least
/// 256 MiB.
std::uint64_t memory_budget();

/// The product of `factors`, or SIZE_MAX when it overflows size_t (so that a sum or a budget
/// check built on it refuses instead of wrapping round). Never throws.
std::size_t checked_product(std::initializer_list<std::size_t> factors);

/// a + b, or SIZE_MAX when it overflows.
std::size_t checked_sum(std::size_t a, std::size_t b);

/// Bytes as "N MiB" (rounded up; "more than 16 EiB" for SIZE_MAX).
std::string mib_text(std::size_t bytes);

/// Throws Error, one line: "<what> would need N MiB, over the B MiB memory budget
/// (ATTNLAB_MEMORY_BUDGET_MB)<; hint>" when `bytes` > `budget`. `hint` says what would fit
/// (e.g. "K up to 1200 fits"); empty for none.
void check_memory(std::size_t bytes, std::uint64_t budget, const std::string& what, const std::string& hint = "");

}  // namespace attnlab

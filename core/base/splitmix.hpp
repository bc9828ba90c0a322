#pragma once
// splitmix64 (Steele, Lea and Flood 2014; Vigna's reference constants): a small seeded stream of
// 64-bit numbers that is the same on every platform, unlike the standard library's
// distributions. Used where a seed must give the same data everywhere: Fashion-MNIST's batches,
// the photo's training crops and masks, the stand-in weights of the structure demos.
#include <cstddef>
#include <cstdint>
#include <utility>

namespace attnlab {

/// The next number of the stream whose state is `state` (advanced by the golden-ratio step, then mixed).
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A uniform double in [0, 1) from the top 53 bits of the stream's next number.
inline double splitmix64_uniform(std::uint64_t& state) { return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53; }

/// Fisher–Yates: the `count` elements from `first` in a random order drawn from the stream
/// (element i, from the last down, swapped with one at next % (i + 1)).
template <class RandomIt>
void splitmix64_shuffle(RandomIt first, std::size_t count, std::uint64_t& state) {
  for (std::size_t i = count; i-- > 1;) std::swap(first[i], first[splitmix64(state) % (i + 1)]);
}

}  // namespace attnlab

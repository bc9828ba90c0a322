// The default colormap, chosen for projection (issue 16): over the safari photo at the default
// opacity, and after a projector's low contrast, the most-attended patches stay a saturated
// colour that stands out from the photo. Fire's white top, the old default, does not: it fades
// to the grey of a washed-out projection, which is what made the strongest patches look "not
// selected" in front of a class.
#include "core/base/colormap.hpp"
#include "core/hand_made/reference.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <numeric>

using namespace attnlab;

namespace {

using Rgb = std::array<float, 3>;

// A classroom projector in a lit room: the black level raised to 30 % and the peak at 85 %
// (a contrast of under 3:1), on every channel.
Rgb projected(Rgb c) {
  for (float& v : c) v = 0.30f + 0.55f * v;
  return c;
}

float saturation(const Rgb& c) {  // HSV saturation: (max - min) / max
  const float hi = std::max({c[0], c[1], c[2]}), lo = std::min({c[0], c[1], c[2]});
  return hi > 0 ? (hi - lo) / hi : 0.0f;
}

float distance(const Rgb& a, const Rgb& b) {
  float d = 0;
  for (int k = 0; k < 3; ++k) d += (a[k] - b[k]) * (a[k] - b[k]);
  return std::sqrt(d);
}

struct Look {
  float top_saturation;  // mean saturation of the 5 % most-attended patches, as projected
  float top_stands_out;  // mean distance between those patches with and without the map
};

// The main view's picture, patch by patch: the photo's mean colour under the row's colour
// (min-max, the default scale) at the default opacity, as a projector shows it.
Look look(Colormap c, const Image& photo, const PatchGrid& g, const std::vector<float>& row) {
  const ValueRange range = normalization_range(row, {}, Normalization::MinMax);
  std::vector<int> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t top = std::max<size_t>(row.size() / 20, 1);
  std::partial_sort(order.begin(), order.begin() + static_cast<long>(top), order.end(),
                    [&](int a, int b) { return row[static_cast<size_t>(a)] > row[static_cast<size_t>(b)]; });
  Look out{0, 0};
  for (size_t n = 0; n < top; ++n) {
    const int j = order[n];
    Rgb mean{0, 0, 0};
    for (int y = 0; y < g.K; ++y)
      for (int x = 0; x < g.K; ++x)
        for (int k = 0; k < 3; ++k) mean[k] += photo.at(g.col_of(j) * g.K + x, g.row_of(j) * g.K + y, k) / float(g.K * g.K);
    const float t = normalize_value(row[static_cast<size_t>(j)], range, Normalization::MinMax);
    const auto map = colormap_rgb8(c, t);
    Rgb mixed;
    for (int k = 0; k < 3; ++k) mixed[k] = (1 - kDefaultOverlayOpacity) * mean[k] + kDefaultOverlayOpacity * map[k] / 255.0f;
    out.top_saturation += saturation(projected(mixed)) / float(top);
    out.top_stands_out += distance(projected(mixed), projected(mean)) / float(top);
  }
  return out;
}

}  // namespace

TEST(ColormapProjector, DefaultTopStaysSaturatedOverThePhotoOnAProjector) {
  const Image photo = load_image(attnlab::testing::asset("safari.jpg"));
  for (const float tau : {1.0f, 0.05f}) {
    Settings s;
    s.temperature = tau;
    const Reference ref(photo, s);
    const PatchGrid& g = ref.grid();
    const auto w = ref.row(0, g.index(19, 5)).weights;  // colour head, query on the giraffe's neck
    const std::vector<float> row(w.data(), w.data() + w.size());
    const Look def = look(kDefaultColormap, photo, g, row), fire = look(Colormap::Fire, photo, g, row);
    std::printf("tau %g: default (%s) top saturation %.3f, stands out by %.3f; fire %.3f, %.3f\n", double(tau),
                std::string(colormap_name(kDefaultColormap)).c_str(), double(def.top_saturation),
                double(def.top_stands_out), double(fire.top_saturation), double(fire.top_stands_out));
    EXPECT_GT(def.top_saturation, 0.35f) << "tau " << tau;
    EXPECT_GT(def.top_stands_out, 0.15f) << "tau " << tau;
    // The measure tells the two apart: the white top of fire washes out.
    EXPECT_LT(fire.top_saturation, 0.2f) << "tau " << tau;
    EXPECT_GT(def.top_saturation, 2 * fire.top_saturation) << "tau " << tau;
  }
}

TEST(ColormapProjector, TablesAreTheCommittedCetMaps) {
  // Ends of the committed tables, as colorcet lists them: heat (CET-L4) black to yellow, fire
  // (CET-L3) black to white, gray (CET-L1) black to white.
  auto entry = [](Colormap c, int k) {
    const auto t = colormap_table(c);
    return Rgb{t[k * 3], t[k * 3 + 1], t[k * 3 + 2]};
  };
  EXPECT_EQ(entry(Colormap::Heat, 0), (Rgb{0, 0, 0}));
  EXPECT_NEAR(entry(Colormap::Heat, 255)[0], 1.0f, 1e-3);
  EXPECT_NEAR(entry(Colormap::Heat, 255)[1], 1.0f, 1e-3);
  EXPECT_NEAR(entry(Colormap::Heat, 255)[2], 0.0f, 1e-3);
  EXPECT_NEAR(entry(Colormap::Fire, 255)[2], 1.0f, 1e-3);
  EXPECT_EQ(entry(Colormap::Gray, 0), (Rgb{0, 0, 0}));
  for (int c = 0; c < kColormapCount; ++c)
    for (const float v : colormap_table(static_cast<Colormap>(c))) ASSERT_TRUE(v >= 0 && v <= 1) << colormap_name(static_cast<Colormap>(c));
  EXPECT_EQ(parse_colormap("heat"), Colormap::Heat);
  EXPECT_EQ(kDefaultColormap, Colormap::Heat);
}

// The Train tab's probe and photo, handed to both runs (train_probe_feed.hpp).
#include "app/gui/train/train_probe_feed.hpp"

#include "core/io/fashion_mnist.hpp"

#include <algorithm>
#include <memory>
#include <utility>

namespace attnlab::app {

bool TrainProbeFeed::update(const AppState& state, const HandMadeSession& hand_made, TrainRuns& runs) {
  // The photo a masked-patch run cuts its crops from, when it starts: the window's.
  if (hand_made.has_image() && state.image_path.string() != given_photo_) {
    given_photo_ = state.image_path.string();
    auto shared = std::make_shared<const Image>(hand_made.image());
    runs.a.set_photo(shared, state.image_path.filename().string());
    runs.b.set_photo(std::move(shared), state.image_path.filename().string());
  }
  const bool photo = state.train_probe_photo && hand_made.has_image();
  const std::string key = photo ? "photo:" + state.image_path.string() : "test:" + std::to_string(state.train_probe);
  if (key == given_probe_) return false;
  given_probe_ = key;
  TrainProbe probe;
  if (photo) {
    const VitTrainShape input;  // the data's 28 × 28, whatever the runs' shapes
    probe.photo = std::make_shared<const Image>(fashion_mnist_style(hand_made.image(), input.image_rows, input.image_cols));
    probe.name = "photo " + state.image_path.filename().string();
  } else {
    probe.test_index = std::clamp(state.train_probe, 0, kFashionMnistTestCount - 1);
    probe.name = "test image " + std::to_string(probe.test_index);
  }
  runs.a.set_probe(probe);
  runs.b.set_probe(std::move(probe));
  return true;
}

}  // namespace attnlab::app

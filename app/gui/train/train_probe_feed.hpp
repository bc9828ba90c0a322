#pragma once
// What the Train tab's runs are shown on, kept in step with the document, an object the App owns
// and calls once a frame: the probe both runs' maps are of (a Fashion-MNIST test image,
// Document::train_probe, or the window's photo made as the training data are,
// Document::train_probe_photo) and the photo a masked-patch run cuts its crops from.
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/sessions/train_session.hpp"
#include "app/gui/state/app_state.hpp"

#include <string>

namespace attnlab::app {

class TrainProbeFeed {
 public:
  /// Hands both runs of `runs` the photo open in the window (`hand_made`'s image, named by
  /// state.image_path) when it changed, and the probe the document asks for when it changed.
  /// Returns true when the probe changed (its maps are to be drawn again).
  bool update(const AppState& state, const HandMadeSession& hand_made, TrainRuns& runs);

 private:
  std::string given_probe_;  // the probe last handed to the runs ("test:17", "photo:PATH")
  std::string given_photo_;  // the photo last handed to the runs for masked patches (its path)
};

}  // namespace attnlab::app

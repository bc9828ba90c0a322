#pragma once
// The ViT beside a CNN (issue 50, SPEC §14; the lecture deck's last question, "how does the way
// vision transformers see differ from CNNs?"): a ResNet (a checkpoint in torchvision's or timm's
// names, or a ResNet-18 with random weights made here) set beside the ViT the tab shows, on the
// same photo. Three pictures, the document's cnn.show: both models' effective receptive fields of
// the same point of the photo at matched relative depth (the ViT's query, its layer); the ResNet's
// Grad-CAM of its likeliest class at that depth; and the CKA between every ViT layer and every
// ResNet block over Fashion-MNIST test images (core/cnn/model_cka.hpp). Every computation is a
// job on the app's scheduler ("cnn:…"), never in a frame.
#include "app/gui/maps/view.hpp"

#include <memory>

namespace attnlab::app {

/// The view "cnn" (tab "CNN"): it needs a ViT's pass.
std::unique_ptr<View> make_cnn_view();

/// The ResNet block at the same relative depth as ViT layer `layer` of `layers`:
/// round((layer + 1)·B / layers) − 1, clamped to 0 … B − 1 (the last layer to the last block).
int matched_block(int layer, int layers, int blocks);

}  // namespace attnlab::app

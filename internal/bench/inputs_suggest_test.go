package bench

import (
	"reflect"
	"testing"
)

// TestSuggestShape: the suggested sizes of dynamic dimensions fit what
// they likely are.
func TestSuggestShape(t *testing.T) {
	tests := []struct {
		name       string
		decl, want []int64
	}{
		{"audio [batch, samples]", []int64{-1, -1}, []int64{1, 512}},
		{"a recurrent state's batch", []int64{2, -1, 128}, []int64{2, 1, 128}},
		{"tokens and features", []int64{-1, -1, 384}, []int64{1, 128, 384}},
		{"an image", []int64{-1, 3, -1, -1}, []int64{1, 3, 224, 224}},
		{"fixed", []int64{1, 16}, []int64{1, 16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := suggestShape(tt.decl, 1); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("suggestShape(%v) = %v, want %v", tt.decl, got, tt.want)
			}
		})
	}
}

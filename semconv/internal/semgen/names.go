package semgen

import (
	"go/token"
	"strings"
	"unicode"
	"unicode/utf8"
)

// initialisms are the name parts that stay upper-case (or keep a fixed
// spelling) in Go identifiers. The list is the team's, from CONVENTIONS.md.
var initialisms = map[string]string{
	"ai":   "AI",
	"cpu":  "CPU",
	"dram": "DRAM",
	"ecc":  "ECC",
	"gpu":  "GPU",
	"http": "HTTP",
	"id":   "ID",
	"io":   "IO",
	"ipc":  "IPC",
	"json": "JSON",
	"kv":   "KV",
	"os":   "OS",
	"pcie": "PCIe",
	"pid":  "PID",
	"qps":  "QPS",
	"sla":  "SLA",
	"sm":   "SM",
	"tpot": "TPOT",
	"ttft": "TTFT",
	"uuid": "UUID",
}

// GoName turns a semantic-convention name such as "hw.gpu.io" into the Go
// identifier the generated code uses for it ("HwGPUIO"): the name is split
// on '.', '_' and '-', each part is title-cased, and the parts listed in
// initialisms keep their fixed spelling.
func GoName(name string) string {
	parts := strings.FieldsFunc(name, func(r rune) bool {
		return r == '.' || r == '_' || r == '-'
	})
	var b strings.Builder
	for _, p := range parts {
		if s, ok := initialisms[strings.ToLower(p)]; ok {
			b.WriteString(s)
			continue
		}
		r, n := utf8.DecodeRuneInString(p)
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(p[n:])
	}
	return b.String()
}

// validIdent reports whether s can be used as an exported Go identifier.
func validIdent(s string) bool {
	return token.IsIdentifier(s) && token.IsExported(s)
}

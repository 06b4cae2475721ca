package otlpjson

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

var (
	marshalOptions = protojson.MarshalOptions{
		UseEnumNumbers: true, // OTLP JSON: enums as integers
		// UseProtoNames false: lowerCamelCase field names.
		// EmitUnpopulated false: unset fields are left out.
	}
	unmarshalOptions = protojson.UnmarshalOptions{
		DiscardUnknown: true, // OTLP JSON receivers must ignore unknown fields
	}
)

// Marshal encodes m, an OTLP message such as an ExportTraceServiceRequest,
// as one line of OTLP JSON without the trailing newline: compact, field
// names in lowerCamelCase, enums as integers, ids as lowercase hex.
func Marshal(m proto.Message) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendMarshal(&buf, m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// AppendLine appends m's OTLP JSON encoding and a line end to buf: one
// record of an OTLP/JSON lines file, for an Appender. On error buf may hold
// part of the encoding: reset it.
func AppendLine(buf *bytes.Buffer, m proto.Message) error {
	if err := appendMarshal(buf, m); err != nil {
		return err
	}
	buf.WriteByte('\n')
	return nil
}

// appendMarshal appends the OTLP JSON encoding of m to buf.
func appendMarshal(buf *bytes.Buffer, m proto.Message) error {
	raw, err := marshalOptions.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s as JSON: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	if err := transcodeIDs(buf, raw, toHex); err != nil {
		return fmt.Errorf("encode %s ids as hex: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}

// Unmarshal decodes one OTLP JSON value (a line without its newline) into m,
// which it resets first. It accepts what the OTLP specification says
// receivers must: hex ids in either case, unknown fields (ignored),
// snake_case names, enum names and 64-bit integers as numbers.
func Unmarshal(line []byte, m proto.Message) error {
	var buf bytes.Buffer
	buf.Grow(len(line))
	if err := transcodeIDs(&buf, line, toBase64); err != nil {
		return err
	}
	if err := unmarshalOptions.Unmarshal(buf.Bytes(), m); err != nil {
		return fmt.Errorf("not a valid %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}

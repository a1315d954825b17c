package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ByteSize is a size in bytes, written in YAML as a number of bytes or a
// number with a unit: B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB
// (powers of 1024), e.g. "512MiB" or "2GB".
type ByteSize int64

// byteUnits are the accepted units, longest first.
var byteUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30},
	{"B", 1},
}

// ParseByteSize reads a size such as "1GiB", "500 MB" or "1048576". Pure.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	factor := int64(1)
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with B, KB, MB, GB, KiB, MiB or GiB)", s)
	}
	v := n * float64(factor)
	if v < 0 || v > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return ByteSize(v), nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *ByteSize) UnmarshalYAML(node *yaml.Node) error {
	v, err := ParseByteSize(node.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", node.Line, err)
	}
	*b = v
	return nil
}

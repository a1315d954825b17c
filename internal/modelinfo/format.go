package modelinfo

import "fmt"

// FormatUSD is an amount in US dollars with the precision small amounts
// need: $0, $0.0042, $1.37. Pure.
func FormatUSD(v float64) string {
	switch {
	case v == 0:
		return "$0"
	case v < 0.01:
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

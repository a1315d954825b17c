package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime/debug"
	"sync"

	"go.temporal.io/sdk/worker"
)

// setBinaryChecksum gives the Temporal SDK this binary's checksum (which a
// worker reports with every workflow task it completes) from the build
// information the binary carries, once per process. Left to itself, the SDK
// computes it at the first worker.New by reading and hashing the whole
// executable, some 170 MB: a third of a second of every one-shot chat.
var setBinaryChecksum = sync.OnceFunc(func() { worker.SetBinaryChecksum(binaryChecksum()) })

// binaryChecksum identifies the build: a hash of its build information
// (module versions and sums, build settings, -ldflags with the version
// and commit), or "" when the binary carries none, which leaves the SDK to
// compute its own.
func binaryChecksum() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(bi.String()))
	return "talaria-" + hex.EncodeToString(sum[:16])
}

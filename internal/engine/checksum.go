package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
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
// and commit) and of the executable's size and time (a build without a
// commit, e.g. in a container with -buildvcs=false, still differs from
// other builds of other code), or "" when the binary carries no build
// information, which leaves the SDK to compute its own.
func binaryChecksum() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(bi.String()))
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			fmt.Fprintf(h, "\n%d %d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return "talaria-" + hex.EncodeToString(h.Sum(nil)[:16])
}

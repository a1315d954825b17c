package embedded

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// BenchmarkClientCompression: activity round trips on loopback with the
// SDK's default gzip compression of requests and without it, in one run.
// cpu-µs/activity is the process's CPU time (server, worker and client are
// all in it) per round trip.
func BenchmarkClientCompression(b *testing.B) {
	for _, bc := range []struct {
		name string
		c    client.GrpcCompression
	}{
		{"gzip", &client.GrpcCompressionGzip{}},
		{"none", &client.GrpcCompressionNone{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := startEphemeral(b, Options{})
			c, err := client.Dial(client.Options{HostPort: s.HostPort(), Namespace: s.Namespace(), Logger: quietSDKLogger(),
				ConnectionOptions: client.ConnectionOptions{TLS: s.ClientTLS(), GrpcCompression: bc.c}})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			startWorker(b, c)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			runChain(ctx, b, c, "warmup", activitiesPerWorkflow)
			iterations, cpu0, start := 0, processCPU(b), time.Now()
			for b.Loop() {
				runChain(ctx, b, c, fmt.Sprintf("chain-%d", iterations), activitiesPerWorkflow)
				iterations++
			}
			n := float64(iterations * activitiesPerWorkflow)
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/n, "ns/activity")
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/n, "cpu-µs/activity")
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

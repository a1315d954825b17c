package embedded

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
)

// rpcTimes sums the client-side time of each gRPC method.
type rpcTimes struct {
	mu    sync.Mutex
	total map[string]time.Duration
	count map[string]int
}

func (r *rpcTimes) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	r.mu.Lock()
	r.total[method] += time.Since(start)
	r.count[method]++
	r.mu.Unlock()
	return err
}

func (r *rpcTimes) mean(method string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.count[method] == 0 {
		return 0
	}
	return r.total[method] / time.Duration(r.count[method])
}

// BenchmarkActivityRoundTripRPCs splits a sequential activity round trip on
// the tuned ephemeral server into the worker's two completion calls, timed
// by a client interceptor, and the rest (the dispatch of the next workflow
// task to the worker's poll).
func BenchmarkActivityRoundTripRPCs(b *testing.B) {
	s := startEphemeral(b, Options{})
	times := &rpcTimes{total: map[string]time.Duration{}, count: map[string]int{}}
	c, err := client.Dial(client.Options{HostPort: s.HostPort(), Namespace: s.Namespace(), Logger: quietSDKLogger(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(times.intercept)}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	startWorker(b, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	runChain(ctx, b, c, "rpc-warmup", activitiesPerWorkflow)
	times.mu.Lock()
	times.total, times.count = map[string]time.Duration{}, map[string]int{}
	times.mu.Unlock()
	n := 0
	start := time.Now()
	for b.Loop() {
		runChain(ctx, b, c, fmt.Sprintf("rpc-chain-%d", n), activitiesPerWorkflow)
		n++
	}
	per := time.Since(start) / time.Duration(n*activitiesPerWorkflow)
	const svc = "/temporal.api.workflowservice.v1.WorkflowService/"
	activityDone, taskDone := times.mean(svc+"RespondActivityTaskCompleted"), times.mean(svc+"RespondWorkflowTaskCompleted")
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(per), "ms/activity")
	b.ReportMetric(ms(activityDone), "ms/RespondActivityTaskCompleted")
	b.ReportMetric(ms(taskDone), "ms/RespondWorkflowTaskCompleted")
	b.ReportMetric(ms(per-activityDone-taskDone), "ms/dispatch+rest")
}

package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/pgtest"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// TestProductionTopology starts, as processes, the deployment that
// docker-compose.yml describes with containers: one Temporal server keeping
// its state in PostgreSQL (`talaria temporal --temporal-db`, in place of the
// temporalio/server container and its schema set-up), Talaria's store in
// PostgreSQL, `talaria serve` against that external Temporal, two `talaria
// worker` and one `talaria scheduler`. A client's turn and a cron job's
// scheduled slot (started by a scheduler's tick, not by hand) run through it
// and finish, the server's Web UI finds the turn by its session id and stop
// reason, and Temporal's own PostgreSQL databases hold both workflows.
// The HTTP API is not part of the topology yet: it does not exist so far.
func TestProductionTopology(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("several processes and a minute-long cron wait")
	}
	storeDSN := pgtest.DSN(t, "topology")
	temporalDSN, temporalDB := pgtest.TemporalDatabase(t)

	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		if last, ok := req.LastMessage(); ok && strings.Contains(last.Content, "overnight alerts") {
			return fakellm.TextStep("Overnight: all quiet.")
		}
		return fakellm.TextStep("Hello from the cluster.")
	}))
	defer model.Close()

	temporalHost := newUser(t, model.URL())
	port := freePort(t)
	// The DSN comes through the environment, as a password should (not in
	// the process list).
	temporalHost.env["TALARIA_TEMPORAL_DB"] = temporalDSN
	temporal := temporalHost.daemon("talaria temporal: ready", "temporal", "--temporal-port", fmt.Sprint(port),
		"--ui-port", fmt.Sprint(freePort(t)))
	if line := serveOutput(temporal); !strings.Contains(line, "state in PostgreSQL postgres://") || !strings.Contains(line, temporalDB) {
		t.Fatalf("the ready line does not say where the state is:\n%s", line)
	}
	if _, err := os.Stat(filepath.Join(temporalHost.home, "temporal", "temporal.db")); !os.IsNotExist(err) {
		t.Fatalf("talaria temporal --temporal-db made a SQLite file (%v)", err)
	}

	// Every other process is configured as the compose services are: through
	// the environment alone, with the server's credential.
	cred := engine.CredentialPath(temporalHost.home)
	address := fmt.Sprintf("127.0.0.1:%d", port)
	shared := map[string]string{
		"TEMPORAL_ADDRESS": address, "TEMPORAL_NAMESPACE": "default", "TALARIA_DB": storeDSN,
		"TEMPORAL_TLS_CLIENT_CERT_PATH": cred, "TEMPORAL_TLS_CLIENT_KEY_PATH": cred,
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH": cred, "TEMPORAL_TLS_SERVER_NAME": "localhost",
	}
	process := func() *user {
		u := newUser(t, model.URL())
		for k, v := range shared {
			u.env[k] = v
		}
		return u
	}
	process().daemon("talaria serve: ready", "serve", "--temporal-address", address)
	for range 2 {
		process().daemon("talaria worker: ready", "worker")
	}
	process().daemon("talaria scheduler: ready", "scheduler")

	client := process()
	// docker-compose.yml's health check of the Talaria services.
	if out, stderr, code := client.run(time.Minute, "doctor"); code != 0 || !strings.Contains(out, address+" answers") {
		t.Fatalf("doctor in the topology: exit %d\n%s%s", code, out, stderr)
	}
	res, stderr, code := client.chatJSON(2*time.Minute, "--session", "topology", "-q", "hello")
	if code != 0 || !res.Completed || res.FinalResponse == nil || *res.FinalResponse != "Hello from the cluster." {
		t.Fatalf("turn through the topology: exit %d, result %+v\n%s", code, res, stderr)
	}

	// The API alone, as its compose service runs it: a chat completion
	// through it is a turn of the same cluster.
	apiHost := process()
	apiHost.env["TALARIA_API_KEY"] = testAPIKey
	apiPort := freePort(t)
	apiHost.daemon("talaria api: ready", "api", "--api-listen", fmt.Sprintf("127.0.0.1:%d", apiPort))
	var completion struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	body := map[string]any{"model": "talaria", "messages": []map[string]string{{"role": "user", "content": "hello over the API"}}}
	if status := apiCall(t, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", apiPort), body, &completion); status != http.StatusOK ||
		len(completion.Choices) != 1 || completion.Choices[0].Message.Content != "Hello from the cluster." {
		t.Fatalf("a completion through talaria api: %d %+v", status, completion)
	}

	if out, stderr, code := client.run(time.Minute, "cron", "add", "--name", "minutely", "--schedule", "* * * * *",
		"--prompt", "summarise the overnight alerts", "--deliver", "local"); code != 0 {
		t.Fatalf("cron add: exit %d %s%s", code, out, stderr)
	}
	// The next minute's slot is started by a scheduler's tick.
	var runs string
	waitFor(t, 150*time.Second, func() bool {
		runs, _, _ = client.run(time.Minute, "cron", "runs", "minutely")
		return strings.Contains(runs, "completed") || strings.Contains(runs, "failed")
	})
	if !strings.Contains(runs, "completed") || strings.Contains(runs, "failed") {
		t.Fatalf("cron runs:\n%s", runs)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := models.Open(ctx, storeDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	turns, err := store.Turns(ctx, "topology")
	if err != nil || len(turns) != 1 || turns[0].Status != "completed" {
		t.Fatalf("turns in the shared store: %+v %v", turns, err)
	}

	// The Web UI of that server finds the turn by its session and how it
	// ended: custom search attributes work on PostgreSQL visibility.
	login := regexp.MustCompile(`web UI (http://\S+)\)`).FindStringSubmatch(serveOutput(temporal))
	if login == nil {
		t.Fatalf("no web UI URL on talaria temporal's ready line:\n%s", serveOutput(temporal))
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	if status, body := fetch(ctx, t, browser, login[1]); status != http.StatusOK {
		t.Fatalf("web UI: %d %.200q", status, body)
	}
	base, _, _ := strings.Cut(login[1], "?")
	list := base + "api/v1/namespaces/default/workflows?" +
		url.Values{"query": {`TalariaSessionId="topology" AND TalariaStopReason="text_response"`}}.Encode()
	var listed string
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := fetch(ctx, t, browser, list)
		if status == http.StatusOK && strings.Contains(body, `"turn/topology/1"`) && strings.Contains(body, "COMPLETED") {
			break
		}
		listed = fmt.Sprintf("%d %.600s", status, body)
		if time.Now().After(deadline) {
			t.Fatalf("the web UI does not list the turn by its session and stop reason: %s", listed)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Temporal kept both workflows in PostgreSQL: its visibility database
	// lists a completed turn and a completed cron run.
	vis, err := sql.Open("pgx", pgtest.Database(t, temporalDB+"_visibility"))
	if err != nil {
		t.Fatal(err)
	}
	defer vis.Close()
	completed := map[string]int{}
	waitFor(t, 30*time.Second, func() bool {
		rows, err := vis.QueryContext(ctx, `SELECT workflow_type_name, count(*) FROM executions_visibility WHERE status = 2 GROUP BY 1`)
		if err != nil {
			return false
		}
		defer rows.Close()
		clear(completed)
		for rows.Next() {
			var name string
			var n int
			if rows.Scan(&name, &n) == nil {
				completed[name] = n
			}
		}
		return completed[workflows.TurnWorkflowName] >= 1 && completed[workflows.CronRunWorkflowName] >= 1
	})
}

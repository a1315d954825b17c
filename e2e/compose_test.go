package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/talaria-agent/talaria/config"
)

// composeFile is the part of docker-compose.yml these tests read.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Profiles    []string          `yaml:"profiles"`
	Restart     string            `yaml:"restart"`
	Ports       []string          `yaml:"ports"`
	Healthcheck *struct {
		Test    []string `yaml:"test"`
		Disable bool     `yaml:"disable"`
	} `yaml:"healthcheck"`
	// The long form only: the short list form cannot say "healthy".
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Deploy struct {
		Replicas *int `yaml:"replicas"`
	} `yaml:"deploy"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose composeFile
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if len(compose.Services) == 0 {
		t.Fatal("docker-compose.yml has no services")
	}
	return compose
}

// talariaService reports whether the service runs the Talaria image.
func (s composeService) talaria() bool { return strings.HasPrefix(s.Image, "talaria") }

// TestComposeConfiguresThroughKnownVariables: docker-compose.yml cannot run
// here, so this keeps it honest: every Talaria service runs a real command
// and is configured only through variables the binary reads.
func TestComposeConfiguresThroughKnownVariables(t *testing.T) {
	t.Parallel()
	compose := readCompose(t)
	known := config.EnvKeys()
	commands := []string{"serve", "worker", "scheduler", "temporal", "api", "chat", "send"}
	found := 0
	for name, svc := range compose.Services {
		if !svc.talaria() {
			continue
		}
		found++
		if len(svc.Command) > 0 && !slices.Contains(commands, svc.Command[0]) {
			t.Errorf("service %s runs unknown command %q", name, svc.Command[0])
		}
		for key := range svc.Environment {
			if !slices.Contains(known, key) {
				t.Errorf("service %s sets %s, which talaria does not read", name, key)
			}
		}
		if svc.Environment["TEMPORAL_ADDRESS"] == "" || !strings.HasPrefix(svc.Environment["TALARIA_DB"], "postgres://") {
			t.Errorf("service %s is not pointed at the shared Temporal and PostgreSQL", name)
		}
	}
	if found < 3 {
		t.Fatalf("found %d talaria services", found)
	}
}

// TestComposeTopology: the file holds the topology that
// TestProductionTopology runs as processes: serve against the external
// Temporal, at least two workers and a scheduler, and a Temporal whose
// schema is set up by a one-shot job before it starts.
func TestComposeTopology(t *testing.T) {
	t.Parallel()
	compose := readCompose(t)
	byCommand := map[string][]string{}
	workers := 0
	for name, svc := range compose.Services {
		if !svc.talaria() || len(svc.Profiles) > 0 || len(svc.Command) == 0 {
			continue
		}
		byCommand[svc.Command[0]] = append(byCommand[svc.Command[0]], name)
		if svc.Command[0] == "worker" {
			n := 1
			if svc.Deploy.Replicas != nil {
				n = *svc.Deploy.Replicas
			}
			workers += n
		}
		if svc.Command[0] == "serve" && !slices.Contains(svc.Command, "--temporal-address") {
			t.Errorf("service %s: serve must use the cluster (--temporal-address), not embed a Temporal", name)
		}
	}
	if len(byCommand["serve"]) != 1 || len(byCommand["scheduler"]) < 1 || workers < 2 {
		t.Fatalf("talaria services by command %v, %d workers: want serve, a scheduler and two workers", byCommand, workers)
	}
	var server, schemaJob string
	for name, svc := range compose.Services {
		switch {
		case strings.HasPrefix(svc.Image, "temporalio/server:"):
			server = name
		case strings.HasPrefix(svc.Image, "temporalio/admin-tools:") && strings.Contains(strings.Join(svc.Command, " "), "update-schema"):
			schemaJob = name
		}
	}
	if server == "" || schemaJob == "" {
		t.Fatalf("want a temporalio/server service and an admin-tools job running update-schema (server %q, job %q)", server, schemaJob)
	}
	if c := compose.Services[server].DependsOn[schemaJob].Condition; c != "service_completed_successfully" {
		t.Errorf("%s starts before %s has set the schema up (condition %q)", server, schemaJob, c)
	}
	script := strings.Join(compose.Services[schemaJob].Command, "\n")
	for _, want := range []string{"temporal_visibility", "setup-schema", "postgresql/v12"} {
		if !strings.Contains(script, want) {
			t.Errorf("the schema job's script lacks %q", want)
		}
	}
}

// TestComposeHealthAndOrder: every long-running service has a health
// check, every dependency waits for a healthy or finished service (never
// just a started one), and one-shot jobs are not restarted for ever.
func TestComposeHealthAndOrder(t *testing.T) {
	t.Parallel()
	compose := readCompose(t)
	oneShot := map[string]bool{}
	for _, svc := range compose.Services {
		for dep, d := range svc.DependsOn {
			if d.Condition == "service_completed_successfully" {
				oneShot[dep] = true
			}
		}
	}
	for name, svc := range compose.Services {
		for dep, d := range svc.DependsOn {
			target, ok := compose.Services[dep]
			switch {
			case !ok:
				t.Errorf("%s depends on %s, which is not a service", name, dep)
			case d.Condition == "service_healthy":
				if target.Healthcheck == nil || target.Healthcheck.Disable || len(target.Healthcheck.Test) == 0 {
					t.Errorf("%s waits for %s to be healthy, which has no health check", name, dep)
				}
			case d.Condition == "service_completed_successfully":
			default:
				t.Errorf("%s depends on %s with condition %q: want service_healthy or service_completed_successfully", name, dep, d.Condition)
			}
		}
		switch {
		case oneShot[name]:
			if svc.Restart == "always" || svc.Restart == "unless-stopped" {
				t.Errorf("one-shot job %s has restart %q: it would never complete", name, svc.Restart)
			}
		case len(svc.Profiles) > 0:
			// Run by hand (docker compose run): no health to wait for.
		default:
			if svc.Healthcheck == nil || svc.Healthcheck.Disable || len(svc.Healthcheck.Test) == 0 {
				t.Errorf("long-running service %s has no health check", name)
			}
			if svc.Restart == "" || svc.Restart == "no" {
				t.Errorf("long-running service %s is not restarted when it stops (restart %q)", name, svc.Restart)
			}
		}
	}
}

// TestComposeImagesPinned: every image names a version (no implicit or
// explicit latest), no deprecated Temporal image is used, and the Temporal
// server and its tools are the version the talaria binary embeds, so the
// cluster's schema is the one the tests run against.
func TestComposeImagesPinned(t *testing.T) {
	t.Parallel()
	compose := readCompose(t)
	serverVersion := moduleVersion(t, "go.temporal.io/server")
	if serverVersion == "" {
		t.Fatal("go.mod does not require go.temporal.io/server")
	}
	// The Web UI talaria serves itself, when it does, is the one to run.
	uiVersion := moduleVersion(t, "github.com/temporalio/ui-server/v2")
	deprecated := []string{"temporalio/auto-setup", "temporalio/web", "temporalio/tctl"}
	for name, svc := range compose.Services {
		if svc.talaria() {
			if svc.Build == nil {
				t.Errorf("service %s runs the talaria image without building it", name)
			}
			continue
		}
		repo, tag, ok := strings.Cut(svc.Image, ":")
		if !ok || tag == "" || tag == "latest" || strings.Contains(tag, "latest") {
			t.Errorf("service %s: image %q is not pinned to a version", name, svc.Image)
		}
		if slices.Contains(deprecated, repo) {
			t.Errorf("service %s uses the deprecated image %s", name, repo)
		}
		if (repo == "temporalio/server" || repo == "temporalio/admin-tools") && "v"+tag != serverVersion {
			t.Errorf("service %s: %s, but talaria embeds Temporal server %s", name, svc.Image, serverVersion)
		}
		if repo == "temporalio/ui" && uiVersion != "" && "v"+tag != uiVersion {
			t.Errorf("service %s: %s, but talaria serves the Web UI %s", name, svc.Image, uiVersion)
		}
		if major, _, _ := strings.Cut(tag, "."); repo == "postgres" && (len(major) < 2 || major < "16") {
			t.Errorf("service %s: %s; use a maintained PostgreSQL (16 or later)", name, svc.Image)
		}
	}
}

// TestComposePublishesOnLoopbackOnly: the cluster has no authentication of
// its own, so no port is published on every interface.
// TestComposeAPIRequiresAKey: the API service listens on every interface
// of its container, so compose must refuse to start it without a key.
func TestComposeAPIRequiresAKey(t *testing.T) {
	t.Parallel()
	found := false
	for name, svc := range readCompose(t).Services {
		if !svc.talaria() || len(svc.Command) == 0 || svc.Command[0] != "api" {
			continue
		}
		found = true
		if key := svc.Environment["TALARIA_API_KEY"]; !strings.HasPrefix(key, "${TALARIA_API_KEY:?") {
			t.Errorf("service %s: TALARIA_API_KEY is %q, want ${TALARIA_API_KEY:?...} (required)", name, key)
		}
	}
	if !found {
		t.Fatal("no service runs talaria api")
	}
}

func TestComposePublishesOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	for name, svc := range readCompose(t).Services {
		for _, p := range svc.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") && !strings.HasPrefix(p, "[::1]:") {
				t.Errorf("service %s publishes %q beyond the loopback interface", name, p)
			}
		}
	}
}

// TestComposeConfigLint runs Docker's own check of the file when the docker
// command and its compose plugin are installed.
func TestComposeConfigLint(t *testing.T) {
	t.Parallel()
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker command here; the YAML tests above check the file")
	}
	if err := exec.Command(docker, "compose", "version").Run(); err != nil {
		t.Skip("docker has no compose plugin here; the YAML tests above check the file")
	}
	cmd := exec.Command(docker, "compose", "-f", "docker-compose.yml", "config", "-q")
	cmd.Dir = ".."
	// The API's key is required (compose refuses to start without one).
	cmd.Env = append(os.Environ(), "TALARIA_API_KEY=compose-lint-key-0123456789")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("docker compose config: %v\n%s", err, out.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("docker compose config did not finish within a minute")
	}
}

// moduleVersion reads a required module's version from ../go.mod ("" when
// it is not required).
func moduleVersion(t *testing.T, module string) string {
	t.Helper()
	f, err := os.Open("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1]
		}
	}
	return ""
}

package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/talaria-agent/talaria/config"
)

// TestComposeConfiguresThroughKnownVariables: docker-compose.yml cannot run
// here, so this keeps it honest: every Talaria service runs a real command
// and is configured only through variables the binary reads.
func TestComposeConfiguresThroughKnownVariables(t *testing.T) {
	data, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	known := config.EnvKeys()
	commands := []string{"serve", "worker", "scheduler", "temporal", "chat", "send"}
	found := 0
	for name, svc := range compose.Services {
		if !strings.HasPrefix(svc.Image, "talaria") {
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

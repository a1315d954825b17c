package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPrecedence: defaults < config.yaml < environment < flags, and a
// flag given empty clears a value.
func TestPrecedence(t *testing.T) {
	t.Parallel()

	str := func(s string) *string { return &s }
	tests := []struct {
		name      string
		yaml      string
		env       map[string]string
		flags     Overrides
		address   string
		namespace string
		logLevel  string
		modelName string
	}{
		{"defaults", "", nil, Overrides{}, "", DefaultNamespace, "warn", DefaultModel},
		{"file beats defaults", "temporal:\n  address: file:7233\n  namespace: filens\nlog_level: info\nmodel:\n  name: filem\n", nil, Overrides{},
			"file:7233", "filens", "info", "filem"},
		{"env-style key in the file", "TEMPORAL_ADDRESS: flat:7233\n", nil, Overrides{}, "flat:7233", DefaultNamespace, "warn", DefaultModel},
		{"environment beats file", "temporal:\n  address: file:7233\nlog_level: info\nmodel:\n  name: filem\n",
			map[string]string{"TEMPORAL_ADDRESS": "env:7233", "TALARIA_LOG_LEVEL": "error", "TALARIA_MODEL": "envm"}, Overrides{},
			"env:7233", DefaultNamespace, "error", "envm"},
		{"empty environment variable leaves the file's value", "temporal:\n  address: file:7233\n",
			map[string]string{"TEMPORAL_ADDRESS": ""}, Overrides{}, "file:7233", DefaultNamespace, "warn", DefaultModel},
		{"flags beat environment", "temporal:\n  namespace: filens\n",
			map[string]string{"TEMPORAL_ADDRESS": "env:7233", "TEMPORAL_NAMESPACE": "envns"},
			Overrides{TemporalAddress: str("flag:7233"), Namespace: str("flagns"), LogLevel: str("debug")},
			"flag:7233", "flagns", "debug", DefaultModel},
		{"a flag given empty clears the value", "temporal:\n  address: file:7233\n",
			map[string]string{"TEMPORAL_ADDRESS": "env:7233"}, Overrides{TemporalAddress: str("")},
			"", DefaultNamespace, "warn", DefaultModel},
		{"a flag not given leaves the value", "", map[string]string{"TEMPORAL_NAMESPACE": "envns"}, Overrides{Namespace: nil},
			"", "envns", "warn", DefaultModel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			home := t.TempDir()
			if tt.yaml != "" {
				if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c, err := Resolve(home, env(tt.env), tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			if c.Temporal.Address != tt.address || c.Temporal.Namespace != tt.namespace || c.LogLevel != tt.logLevel || c.Model.Name != tt.modelName {
				t.Fatalf("address %q namespace %q log_level %q model %q; want %q %q %q %q",
					c.Temporal.Address, c.Temporal.Namespace, c.LogLevel, c.Model.Name,
					tt.address, tt.namespace, tt.logLevel, tt.modelName)
			}
		})
	}
}

// TestEmptyDBFlagIsTheDefault: --db "" drops a configured database for
// the default one in the home.
func TestEmptyDBFlagIsTheDefault(t *testing.T) {
	t.Parallel()

	home := t.TempDir()
	empty := ""
	c, err := Resolve(home, env(map[string]string{"TALARIA_DB": "postgres://u@h/db"}), Overrides{DB: &empty})
	if err != nil {
		t.Fatal(err)
	}
	if c.DB != filepath.Join(home, "talaria.db") {
		t.Fatalf("db = %q", c.DB)
	}
}

// TestResolveValidates: an override that breaks the configuration is
// refused like a bad file value.
func TestResolveValidates(t *testing.T) {
	t.Parallel()

	empty := ""
	if _, err := Resolve(t.TempDir(), env(nil), Overrides{Namespace: &empty}); err == nil {
		t.Fatal("an empty namespace passed")
	}
	bad := "loud"
	if _, err := Resolve(t.TempDir(), env(nil), Overrides{LogLevel: &bad}); err == nil {
		t.Fatal("log level loud passed")
	}
}

// TestLoadCreatesNothing: reading the configuration of a home that does
// not exist leaves it not existing.
func TestLoadCreatesNothing(t *testing.T) {
	t.Parallel()

	home := filepath.Join(t.TempDir(), "absent", ".talaria")
	if _, err := Resolve(home, env(nil), Overrides{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(home)); !os.IsNotExist(err) {
		t.Fatalf("loading created %s (stat: %v)", filepath.Dir(home), err)
	}
}

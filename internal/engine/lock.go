package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrLocked means another Talaria process holds $TALARIA_HOME.
var ErrLocked = errors.New("another talaria process is using this TALARIA_HOME")

// ErrNoServe means no running `talaria serve` published its address.
var ErrNoServe = errors.New("no talaria serve is running")

const (
	lockFile  = "talaria.lock"
	serveFile = "serve.json"
)

// Lock is an exclusive, advisory lock on $TALARIA_HOME. The kernel drops it
// when the process dies, even by SIGKILL.
type Lock struct{ f *os.File }

// TryLock takes the lock without waiting; ErrLocked when it is held.
func TryLock(home string) (*Lock, error) {
	f, err := os.OpenFile(filepath.Join(home, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("lock %s: %w", home, err)
	}
	return &Lock{f: f}, nil
}

// Release drops the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// ServeInfo is what a running `talaria serve` publishes for clients.
type ServeInfo struct {
	PID             int       `json:"pid"`
	TemporalAddress string    `json:"temporal_address"`
	Namespace       string    `json:"namespace"`
	DB              string    `json:"db"`
	ModelEndpoint   string    `json:"model_endpoint"`
	ModelConfigured bool      `json:"model_configured"`
	Model           string    `json:"model"`
	StartedAt       time.Time `json:"started_at"`
	// Credential is set when the Temporal is the serve's embedded one, which
	// admits only clients presenting CredentialPath(home).
	Credential bool `json:"credential,omitempty"`
	// ModelSettings are the model settings serve's turns use now (no
	// secrets); serve rewrites them when it reloads config.yaml.
	ModelSettings *ModelSettings `json:"model_settings,omitempty"`
	// ModelEnv names the variables of serve's environment that set model
	// settings: they override config.yaml, in serve as everywhere.
	ModelEnv []string `json:"model_env,omitempty"`
	// ConfigLoadedAt is when serve last (re)loaded its model settings.
	ConfigLoadedAt time.Time `json:"config_loaded_at,omitzero"`
	// UI is the embedded Temporal Web UI's URL with its token (the file is
	// its owner's only); empty when serve runs none.
	UI string `json:"ui,omitempty"`
}

// WithModel sets the model fields of info from settings.
func (info ServeInfo) WithModel(s ModelSettings, at time.Time) ServeInfo {
	info.ModelConfigured, info.Model = s.Configured, s.Model
	info.ModelEndpoint = s.BaseURL
	if !s.Configured {
		info.ModelEndpoint = "https://api.openai.com/v1"
	}
	info.ModelSettings, info.ConfigLoadedAt = &s, at.UTC()
	return info
}

// WriteServeInfo publishes info atomically (mode 0600: it names the DB).
func WriteServeInfo(home string, info ServeInfo) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("encode serve info: %w", err)
	}
	tmp := filepath.Join(home, serveFile+".tmp")
	if err := writePrivateFile(tmp, data); err != nil {
		return fmt.Errorf("write serve info: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(home, serveFile)); err != nil {
		return fmt.Errorf("write serve info: %w", err)
	}
	return nil
}

// ReadServeInfo reads what a running serve published; ErrNoServe when absent.
func ReadServeInfo(home string) (ServeInfo, error) {
	var info ServeInfo
	data, err := os.ReadFile(filepath.Join(home, serveFile))
	if errors.Is(err, fs.ErrNotExist) {
		return info, ErrNoServe
	}
	if err != nil {
		return info, fmt.Errorf("read serve info: %w", err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("decode %s: %w", serveFile, err)
	}
	return info, nil
}

// RemoveServeInfo withdraws the published info.
func RemoveServeInfo(home string) {
	_ = os.Remove(filepath.Join(home, serveFile))
}

// writePrivateFile writes data to path, readable and writable only by its
// owner whatever the umask or the mode of an existing file.
func writePrivateFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Chmod(0o600), f.Close())
}

// EnsureHome creates home (0700) when missing and checks that it is writable.
func EnsureHome(home string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("TALARIA_HOME %s cannot be created: %w", home, err)
	}
	probe, err := os.CreateTemp(home, ".write-check-*")
	if err != nil {
		return fmt.Errorf("TALARIA_HOME %s is not writable: %w", home, err)
	}
	name := probe.Name()
	probe.Close()
	os.Remove(name)
	return nil
}

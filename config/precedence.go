package config

// Overrides are values given on the command line, the highest precedence.
// A nil field was not given and leaves the value alone; a field pointing to
// "" clears it (an empty --temporal-address embeds a server again, an empty
// --db is the default database in $TALARIA_HOME).
type Overrides struct {
	TemporalAddress *string
	Namespace       *string
	DB              *string
	LogLevel        *string
	// UIPort is --ui-port (serve, temporal).
	UIPort *int
	// MetricsListen is --metrics-listen (serve, worker, scheduler, temporal).
	MetricsListen *string
	// APIListen is --api-listen (serve, api).
	APIListen *string
}

// Apply sets every given override on cfg. Pure.
func (o Overrides) Apply(cfg *Config) {
	set := func(src *string, dst *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(o.TemporalAddress, &cfg.Temporal.Address)
	set(o.Namespace, &cfg.Temporal.Namespace)
	set(o.DB, &cfg.DB)
	if o.DB != nil && *o.DB == "" {
		cfg.DB = Default(cfg.Home).DB
	}
	set(o.LogLevel, &cfg.LogLevel)
	set(o.MetricsListen, &cfg.Metrics.Listen)
	set(o.APIListen, &cfg.API.Listen)
	if o.UIPort != nil {
		cfg.Temporal.UIPort = *o.UIPort
	}
}

// Resolve is the effective configuration for home: defaults, then
// home/config.yaml, then the environment (getenv), then the overrides;
// normalised and validated. Like Load, it reads only and creates nothing.
func Resolve(home string, getenv func(string) string, o Overrides) (Config, error) {
	cfg, err := Load(home, getenv)
	if err != nil {
		return cfg, err
	}
	o.Apply(&cfg)
	if err := cfg.Normalize(); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

package config

import "testing"

func TestParseByteSize(t *testing.T) {
	t.Parallel()

	tests := []struct {
		in   string
		want ByteSize
		bad  bool
	}{
		{in: "1048576", want: 1 << 20},
		{in: "1GiB", want: 1 << 30},
		{in: "512 MiB", want: 512 << 20},
		{in: "2GB", want: 2e9},
		{in: "1.5KiB", want: 1536},
		{in: "10B", want: 10},
		{in: "0", want: 0},
		{in: "", bad: true},
		{in: "GiB", bad: true},
		{in: "lots", bad: true},
		{in: "-1GiB", bad: true},
		{in: "NaN", bad: true},
		{in: "1e30GiB", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, bad %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

func TestOutputQuotaLoads(t *testing.T) {
	t.Parallel()

	home := t.TempDir()
	writeConfigFile(t, home, "tools:\n  output_quota: 256MiB\n")
	c, err := Load(home, env(nil))
	if err != nil || c.Tools.OutputQuota != 256<<20 {
		t.Fatalf("%d, %v", c.Tools.OutputQuota, err)
	}
	writeConfigFile(t, home, "tools:\n  output_quota: plenty\n")
	if _, err := Load(home, env(nil)); err == nil {
		t.Fatal("a quota that is no size loaded")
	}
	c = Default(home)
	c.Tools.OutputQuota = -1
	if err := c.Validate(); err == nil {
		t.Fatal("a negative quota is valid")
	}
}

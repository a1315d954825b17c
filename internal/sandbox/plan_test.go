package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestOrderMounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []mount
		want string // kind@dst in order
	}{
		{"parents before children", []mount{{kind: writable, dst: "/home/u/proj"}, {kind: hiddenDir, dst: "/home/u"}},
			"hidden:/home/u writable:/home/u/proj"},
		{"the home inside a writable working directory stays hidden", []mount{{kind: hiddenDir, dst: "/root/.talaria"}, {kind: writable, dst: "/root"}},
			"writable:/root hidden:/root/.talaria"},
		{"hidden wins over writable on one path", []mount{{kind: writable, dst: "/h"}, {kind: hiddenDir, dst: "/h/"}},
			"hidden:/h"},
		{"read-only wins over writable on one path", []mount{{kind: readOnly, dst: "/w/AGENTS.md"}, {kind: writable, dst: "/w/AGENTS.md"}, {kind: writable, dst: "/w"}},
			"writable:/w readonly:/w/AGENTS.md"},
		{"a hidden file in a writable root", []mount{{kind: hiddenFile, dst: "/w/.netrc"}, {kind: writable, dst: "/w"}},
			"writable:/w hiddenfile:/w/.netrc"},
		{"siblings sorted", []mount{{kind: writable, dst: "/b"}, {kind: writable, dst: "/a"}},
			"writable:/a writable:/b"},
		{"a stand-in wins over the anchor of its place, read-only over it", []mount{{kind: writable, dst: "/w/.git"},
			{kind: standIn, src: "/w/.git/talaria-stage/s", dst: "/w/.git"}, {kind: readOnly, dst: "/w/.git/config"}, {kind: writable, dst: "/w"}},
			"writable:/w standin:/w/.git readonly:/w/.git/config"},
	}
	names := map[kind]string{writable: "writable", standIn: "standin", readOnly: "readonly", hiddenDir: "hidden", hiddenFile: "hiddenfile"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, m := range orderMounts(tc.in) {
				got = append(got, names[m.kind]+":"+m.dst)
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("got %s, want %s", g, tc.want)
			}
		})
	}
}

func TestBwrapArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		net        Network
		shared     bool
		mountsWant []string
	}{{NetworkOff, false, nil}, {NetworkOn, true, nil}} {
		args := bwrapArgs(Command{Settings: Settings{Mode: ModeWorkspaceWrite, Network: tc.net}, Dir: "/w"},
			[]mount{{kind: writable, dst: "/w"}, {kind: hiddenDir, dst: "/h"}, {kind: hiddenFile, dst: "/etc/shadow"}}, 3)
		joined := strings.Join(args, " ")
		for _, want := range []string{"--ro-bind / /", "--tmpfs /tmp", "--tmpfs /run", "--bind /w /w", "--tmpfs /h", "--ro-bind /dev/null /etc/shadow",
			"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop ALL", "--chdir /w", "--seccomp 3"} {
			if !strings.Contains(joined, want) {
				t.Errorf("network %s: %q lacks %q", tc.net, joined, want)
			}
		}
		if got := slices.Contains(args, "--share-net"); got != tc.shared {
			t.Errorf("network %s: --share-net %v, want %v", tc.net, got, tc.shared)
		}
		if args[len(args)-1] != "--" {
			t.Errorf("args end with %q, want --", args[len(args)-1])
		}
	}
}

func TestNormalized(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   Settings
		ok   bool
		mode Mode
	}{
		{Settings{}, true, ModeWorkspaceWrite},
		{Settings{Mode: ModeReadOnly, Network: NetworkOn}, true, ModeReadOnly},
		{Settings{Mode: ModeOff}, true, ModeOff},
		{Settings{Mode: "danger-full-access"}, false, ""},
		{Settings{Network: "maybe"}, false, ""},
		{Settings{Ports: []int{0}}, false, ""},
	} {
		got, err := tc.in.Normalized()
		if (err == nil) != tc.ok {
			t.Errorf("%+v: err %v, want ok %v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && got.Mode != tc.mode {
			t.Errorf("%+v: mode %s, want %s", tc.in, got.Mode, tc.mode)
		}
	}
}

package approval

import (
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestAllowlistOutsideTheSandbox: without a sandbox, what the table says is
// Dangerous or Blocked stays so, and of its Safe commands only those known
// to only read stay Safe.
func TestAllowlistOutsideTheSandbox(t *testing.T) {
	t.Parallel()
	cases := readTable(t, "testdata/commands.txt")
	safe, asks := 0, 0
	for _, tc := range cases {
		got := AssessIn(tc.cmd, Where{})
		if got.Risk < tc.risk {
			t.Errorf("line %d: AssessIn(%q, outside) = %v, weaker than the table's %v", tc.line, tc.cmd, got.Risk, tc.risk)
		}
		if tc.risk == turnapi.RiskSafe {
			if got.Risk == turnapi.RiskSafe {
				safe++
			} else {
				asks++
			}
		}
	}
	t.Logf("of the table's safe commands, %d stay safe outside the sandbox and %d ask", safe, asks)
}

func TestReadOnlyAllowlist(t *testing.T) {
	t.Parallel()
	outside := Where{}
	for _, tc := range []struct {
		command string
		safe    bool
	}{
		{"ls -la", true},
		{"git status && git diff --stat && git log --oneline -5", true},
		{"grep -rn TODO . | sort | uniq -c | head", true},
		{"cat README.md", true},
		{"find . -name '*.go' | wc -l", true},
		{"sed -n '1,20p' main.go", true},
		{"echo hello > /dev/null", true},
		{"sh -c 'ls -l'", true},
		{"tar -tzf x.tgz", true},
		{"go version", true},
		{"git branch -a", true},
		{"sleep 4; talaria approve SESSION --always", false},
		{"talaria approve s1", false},
		{"/usr/local/bin/talaria sessions list", false},
		{"curl -s http://127.0.0.1:8642/v1/runs", false},
		{"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 7233))'", false},
		{"bash x.sh", false},
		{"echo x > notes.txt", false},
		{"sed -i s/a/b/ f", false},
		{"sort -o out.txt in.txt", false},
		{"find . -name x -delete", false},
		{"git -c core.pager=sh log", false},
		{"git push", false},
		{"git branch -D main", false},
		{"git config user.name x", false},
		{"tar -xf x.tar", false},
		{"make", false},
		{"go build ./...", false},
		{"sudo ls", false},
		{"ssh host ls", false},
		{"awk '{print > \"f\"}' x", false},
		{"X=talaria; $X approve s", false},
		{"cp a b", false},
		// Option spellings GNU's getopt takes (found in review).
		{`git grep -O'sh -c "id > /tmp/p"' foo`, false},
		{"git grep --open=sh foo", false},
		{"git grep -nO foo", false},
		{"sort -S 64k --compress-program=sh x", false},
		{"sort --out=$HOME/.bashrc x", false},
		{"sort --o=f x", false},
		{"sort -ro out.txt in.txt", false},
		{"sed --in-pl 's/a/b/' f", false},
		{"sed --fi=script f", false},
		{`CC='sh -c x' go list -export .`, false},
		{"go list ./...", false},
		{"GOFLAGS=-toolexec=x go version", false},
		{"HOME=./evil git status", false},
		{"GIT_DIR=./evil git log", false},
		{"export PATH=.:$PATH", false},
		{`gawk '@include "inplace"; {print}' f`, false},
		{`gawk '@load "rwarray"; BEGIN{writea("/p",a)}'`, false},
		{"file --comp -m x", false},
		{"rg --hostname-bin=./x foo", false},
		{"awk -E f", false},
		{"mawk -W exec f", false},
		{"sort -n in.txt", true},
		{"LANG=C sort in.txt", true},
	} {
		got := AssessIn(tc.command, outside)
		if (got.Risk == turnapi.RiskSafe) != tc.safe {
			t.Errorf("AssessIn(%q, outside) = %v %s (%s), want safe %v", tc.command, got.Risk, got.Rule, got.Reason, tc.safe)
		}
	}
}

// TestSystemCommandsAskOutside: what used to have a rule of its own
// (writes to system paths, dotfiles, git hooks or Talaria's home, chmod
// 777, shutdown, services, kills, package removal, crontab -r, history -c,
// disk and firewall tools) asks outside the sandbox as a command that does
// not only read, and runs inside it, where the kernel holds it.
func TestSystemCommandsAskOutside(t *testing.T) {
	t.Parallel()
	for _, c := range []string{
		`echo x > /etc/hosts`,
		`echo x >> /etc/environment`,
		`echo 'nameserver 1.1.1.1' | sudo tee /etc/resolv.conf`,
		`sudo cp app /usr/local/bin/`,
		`mv build/lib.so /lib/x86_64-linux-gnu/`,
		`sudo sed -i 's/a/b/' /etc/ssh/sshd_config`,
		`sed -i.bak s/a/b/ /etc/fstab`,
		`chmod 600 /etc/shadow`,
		`sudo chown root /opt/app`,
		`ln -sf /tmp/x /usr/bin/python`,
		`echo 1 > /proc/sys/vm/drop_caches`,
		`cat x > /tmp/../etc/passwd`,
		`rm /etc/nginx/sites-enabled/default`,
		`chmod -R 777 .`,
		`chmod -R a+rwx ~/site`,
		`echo 'alias ls=rm' > ~/.bashrc`,
		`echo key > ~/.ssh/authorized_keys`,
		`echo key >> ~/.ssh/authorized_keys`,
		`printf '' > $HOME/.profile`,
		`cp evil ~/.zshrc`,
		`echo key >> ~/.bashrc`,
		`echo x > ~/.talaria/SOUL.md`,
		`python3 -c 'import os; os.remove("x")'`,
		`shutdown -h now`,
		`sudo reboot`,
		`halt`,
		`poweroff`,
		`init 0`,
		`init 6`,
		`systemctl reboot`,
		`sudo systemctl stop nginx`,
		`systemctl --now disable docker`,
		`systemctl mask sshd`,
		`service nginx stop`,
		`kill -9 -1`,
		`kill -KILL -1`,
		`kill -s KILL -1`,
		`killall node`,
		`pkill -9 python`,
		`pkill --signal KILL -f server`,
		`sudo apt-get remove -y nginx`,
		`apt purge nginx`,
		`apt-get -y autoremove`,
		`pip uninstall -y requests`,
		`python3 -m pip uninstall requests`,
		`npm uninstall -g typescript`,
		`yum remove httpd`,
		`pacman -Rns foo`,
		`crontab -r`,
		`crontab -u bob -r`,
		`history -c`,
		`fdisk /dev/sda`,
		`parted /dev/sda mklabel gpt`,
		`wipefs -a /dev/sdb`,
		`mkswap /dev/sdb2`,
		`mkfs.ext4 disk.img`,
		`iptables -F`,
		`sudo iptables -t nat --flush`,
		`ufw disable`,
	} {
		if got := AssessIn(c, Where{}); got.Risk != turnapi.RiskDangerous {
			t.Errorf("AssessIn(%q, outside) = %v %s, want dangerous", c, got.Risk, got.Rule)
		}
		if got := AssessIn(c, Where{Sandboxed: true, Writable: true}); got.Risk != turnapi.RiskSafe {
			t.Errorf("AssessIn(%q, sandboxed) = %v %s, want safe", c, got.Risk, got.Rule)
		}
	}
}

// TestGrantsOutsideCoverOneCommand: outside the sandbox a grant of a
// command with a rule of its own still covers its other spellings, and
// never a command added to it that asks only as not read-only.
func TestGrantsOutsideCoverOneCommand(t *testing.T) {
	t.Parallel()
	g := turnapi.Grants{}.With(turnapi.ChoiceSession, AssessIn("rm -rf ./build", Where{}).GrantKey())
	for _, tc := range []struct {
		command string
		allowed bool
	}{
		{"rm -fr build/", true},
		{"sudo rm -rf ./build", false},
		{"rm -rf ./build; python3 x.py", false},
		{"rm -rf ./build > log.txt", false},
		{"talaria approve s", false},
	} {
		if got := g.Allows(AssessIn(tc.command, Where{})); got != tc.allowed {
			t.Errorf("a grant of rm -rf ./build allows %q: %v, want %v (pattern %q)", tc.command, got, tc.allowed, AssessIn(tc.command, Where{}).Pattern)
		}
	}
}

package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM inside the sandbox: no command needs to
// trace or read other processes, mount, load kernel code or keys, reach
// the kernel's keyrings, BPF or performance counters, or make new
// namespaces. Names unknown to the running architecture are skipped.
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"unshare", "setns", "chroot",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog",
	"open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
	"iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"fanotify_init", "nfsservctl", "vhangup", "uselib",
}

var (
	filterOnce  sync.Once
	filterBytes []byte
	filterErr   error
)

// seccompProgram is the filter bwrap loads before it runs the command, as
// the raw struct sock_filter array it reads.
func seccompProgram() ([]byte, error) {
	filterOnce.Do(func() {
		policy := seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{{
				Action: seccomp.Action(uint32(seccomp.ActionErrno) | uint32(unix.EPERM)),
				Names:  knownSyscalls(deniedSyscalls),
			}},
		}
		insts, err := policy.Assemble()
		if err != nil {
			filterErr = fmt.Errorf("sandbox: seccomp filter: %w", err)
			return
		}
		raw, err := bpf.Assemble(append(archGuard(), insts...))
		if err != nil {
			filterErr = fmt.Errorf("sandbox: seccomp filter: %w", err)
			return
		}
		buf := make([]byte, 0, 8*len(raw))
		for _, r := range raw {
			buf = binary.NativeEndian.AppendUint16(buf, r.Op)
			buf = append(buf, r.Jt, r.Jf)
			buf = binary.NativeEndian.AppendUint32(buf, r.K)
		}
		filterBytes = buf
	})
	return filterBytes, filterErr
}

// knownSyscalls keeps the names the assembler knows for this architecture.
func knownSyscalls(names []string) []string {
	var out []string
	for _, n := range names {
		p := seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{{Action: seccomp.ActionErrno, Names: []string{n}}}}
		if _, err := p.Assemble(); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// auditArch is the seccomp architecture of this build's system calls.
var auditArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64,
	"386": unix.AUDIT_ARCH_I386, "arm": unix.AUDIT_ARCH_ARM, "riscv64": unix.AUDIT_ARCH_RISCV64,
	"ppc64le": unix.AUDIT_ARCH_PPC64LE, "s390x": unix.AUDIT_ARCH_S390X}

// archGuard comes first in the filter: a system call of another
// architecture (a 32-bit int 0x80 on x86-64) or of the x32 ABI, which the
// policy's numbers do not describe, fails with EPERM.
func archGuard() []bpf.Instruction {
	deny := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	arch, ok := auditArch[runtime.GOARCH]
	if !ok {
		return nil
	}
	out := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: arch, SkipTrue: 1},
		deny,
	}
	if runtime.GOARCH == "amd64" {
		out = append(out,
			bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: 0x40000000, SkipFalse: 1},
			deny)
	}
	return out
}

package approval

// Rule ids of Blocked commands: refused without asking, never run.
const (
	RuleRootDelete      = "root_delete"       // rm -r /, rm -rf /*, rm -rf --no-preserve-root ...
	RuleHomeDelete      = "home_delete"       // rm -r ~, rm -rf $HOME, rm -rf /home/NAME
	RuleSystemDirDelete = "system_dir_delete" // rm -r /usr, rm -rf /etc/*
	RuleMkfsDevice      = "mkfs_device"       // mkfs.ext4 /dev/sdb1
	RuleRawDiskWrite    = "raw_disk_write"    // dd of=/dev/sda, cp img /dev/sda, tee /dev/nvme0n1
	RuleDiskRedirect    = "disk_redirect"     // > /dev/sda
	RuleForkBomb        = "fork_bomb"         // :(){ :|:& };:
	RuleRootChmod       = "root_chmod"        // chmod -R 777 /, chmod -R 000 ~, setfacl -R ... /
	RuleRootChown       = "root_chown"        // chown -R user /
	RuleRootOverwrite   = "root_overwrite"    // rsync --delete x/ /, tar -x -C /
)

// Rule ids of Dangerous commands: run only after a human approves.
const (
	RuleRecursiveDelete = "recursive_delete" // rm -r DIR, find -delete, find -exec rm
	RuleGitClean        = "git_clean"        // git clean -f
	RuleGitResetHard    = "git_reset_hard"   // git reset --hard
	RuleGitForcePush    = "git_force_push"   // git push --force, -f, +refspec, :branch, --mirror, --delete
	RuleGitDiscard      = "git_discard"      // git branch -D, git reflog expire, git gc --prune=now, git rm -r
	RuleSQLDrop         = "sql_drop"         // DROP TABLE|DATABASE|SCHEMA, TRUNCATE through a SQL client
	RuleTooComplex      = "too_complex"      // shells nested too deeply to check
	RuleDynamicCommand  = "dynamic_command"  // $X -rf ., $(echo rm) x, {rm,-rf,x}: what runs is not literal
	RuleUnparsable      = "unparsable"       // text a shell would not run as written
	RuleCloudMetadata   = "cloud_metadata"   // curl 169.254.169.254, metadata.google.internal
	RuleSecretRead      = "secret_read"      // cat ~/.talaria/config.yaml, curl -d @~/.ssh/id_rsa
)

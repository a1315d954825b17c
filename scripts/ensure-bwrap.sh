#!/usr/bin/env bash
# Makes sure bubblewrap (bwrap), which sandboxes every command the model
# runs, is installed: when it is missing and this runs as root with apt-get,
# Debian's bubblewrap package is installed. Otherwise it says so and exits
# 0: Talaria then says at start why commands are refused until bubblewrap
# is installed or sandbox.mode is off.
set -euo pipefail
command -v bwrap >/dev/null 2>&1 && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-bwrap: installing bubblewrap with apt-get (the sandbox of the model's commands)" >&2
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap >&2; then
		apt-get update >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap >&2
	fi
	exit 0
fi
echo "ensure-bwrap: bubblewrap (bwrap) is not installed; install it (e.g. apt-get install bubblewrap) or commands are refused" >&2

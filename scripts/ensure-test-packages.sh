#!/usr/bin/env bash
# Installs the Debian packages the test suite runs for real when they are
# missing: bubblewrap (the sandbox of the model's commands),
# python3-pytest (everyday work in the sandbox runs /usr/bin/python3 -m
# pytest) and dovecot-imapd (the real IMAP server of the email tests, which
# start their own instance; the system's service is not started). Needs
# root and apt-get; otherwise it names what is missing and exits 0, and
# the tests that need it say so.
set -euo pipefail
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || missing+=(python3-pytest)
[ -x /usr/sbin/dovecot ] || missing+=(dovecot-imapd)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-test-packages: installing ${missing[*]} with apt-get" >&2
	# Installed packages' services stay stopped: the tests start what they
	# need on their own ports.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2; then
		apt-get update >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2
	fi
	exit 0
fi
echo "ensure-test-packages: ${missing[*]} not installed; install them (apt-get install ${missing[*]}) or the tests that need them fail" >&2

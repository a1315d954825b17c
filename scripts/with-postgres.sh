#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server.
#
#   scripts/with-postgres.sh CMD [ARGS...]
#
# Starts PostgreSQL in a fresh temporary directory, listening on 127.0.0.1 at
# a free port and on a unix socket in that directory, with trust
# authentication and an empty database "talaria_test". The command runs with
#
#   TALARIA_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:PORT/talaria_test?sslmode=disable
#
# The server is stopped and the directory removed however the script exits;
# the script exits with the command's status. PostgreSQL refuses to run as
# root, so under root the server runs as the "postgres" user. Missing
# PostgreSQL binaries are installed with apt-get when running as root.
set -euo pipefail

die() { echo "with-postgres: $*" >&2; exit 1; }

[ $# -ge 1 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }

# find_pg_bin prints the directory holding initdb and pg_ctl.
find_pg_bin() {
	local dir
	if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		dir=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
		echo "$dir"
		return 0
	fi
	for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5 -V -r); do
		if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
			echo "$dir"
			return 0
		fi
	done
	return 1
}

if ! PG_BIN=$(find_pg_bin); then
	[ "$(id -u)" -eq 0 ] || die "PostgreSQL binaries (initdb, pg_ctl) not found; install PostgreSQL or run as root to have it installed"
	command -v apt-get >/dev/null 2>&1 || die "PostgreSQL binaries not found and apt-get is unavailable"
	echo "with-postgres: installing PostgreSQL with apt-get" >&2
	apt-get update >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
	PG_BIN=$(find_pg_bin) || die "PostgreSQL binaries still not found after apt-get install"
fi

# as_pg runs a command as the server's OS user.
if [ "$(id -u)" -eq 0 ]; then
	id postgres >/dev/null 2>&1 || die "running as root but there is no 'postgres' user to run the server as"
	as_pg() { runuser -u postgres -- "$@"; }
	command -v runuser >/dev/null 2>&1 || as_pg() { su -s /bin/sh postgres -c "$(printf '%q ' "$@")"; }
else
	as_pg() { "$@"; }
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/talaria-pg.XXXXXX")
DATA="$WORK/data"
started=

cleanup() {
	if [ -n "$started" ]; then
		as_pg "$PG_BIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

chmod 700 "$WORK"
mkdir "$WORK/sock"
if [ "$(id -u)" -eq 0 ]; then
	chown -R postgres: "$WORK"
fi

as_pg "$PG_BIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$WORK/initdb.log" 2>&1 ||
	{ cat "$WORK/initdb.log" >&2; die "initdb failed"; }

# port_in_use reports whether something accepts connections on 127.0.0.1:$1.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Pick a random free port; retry if another process takes it first.
for attempt in 1 2 3 4 5 6 7 8; do
	PORT=$((20000 + RANDOM % 30000))
	port_in_use "$PORT" && continue
	if as_pg "$PG_BIN/pg_ctl" -D "$DATA" -l "$WORK/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $PORT -k $WORK/sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		start >/dev/null; then
		started=1
		break
	fi
	# Most likely the port was taken meanwhile; make sure nothing is left running.
	as_pg "$PG_BIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
done
[ -n "$started" ] || { cat "$WORK/server.log" >&2 || true; die "could not start PostgreSQL"; }

"$PG_BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres talaria_test ||
	die "could not create database talaria_test"

export TALARIA_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:$PORT/talaria_test?sslmode=disable"
echo "with-postgres: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') at $TALARIA_TEST_POSTGRES_DSN" >&2

set +e
"$@"
status=$?
set -e
exit "$status"

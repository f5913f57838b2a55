#!/usr/bin/env bash
# Starts a Dovecot IMAP server on loopback for the IMAP draft test of the Company Brain email
# proposals and prints `KEY=value` lines on stdout (everything else goes to stderr):
#   eval "$(bash test/services/dovecot.sh)"
# Any user name (an e-mail address such as ana@example.com) logs in with the one random password
# printed; every mailbox has Drafts (\Drafts), Sent and Trash. Each run starts a fresh server (own
# config, port and data in a new temporary folder) and stops the one an earlier run left. Stop it:
#   kill $(cat .cache/dovecot-test.pid); rm -rf $(cat .cache/dovecot-test.data)
#   rm -f .cache/dovecot-test.pid .cache/dovecot-test.data
# Debian's dovecot-imapd is installed when missing (CI runs as root); a system Dovecot that its
# postinst may start on 143/993 is neither used nor disturbed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

pidfile="$root/.cache/dovecot-test.pid" datafile="$root/.cache/dovecot-test.data"
# Bounded waits, in steps of 0.2 s: 30 s for the IMAP greeting, 15 s for an old server to exit
# (it takes about 1 s, about 10 s while an IMAP client is still connected).
ready_steps=150 stop_steps=75

if [ ! -x /usr/sbin/dovecot ]; then
  echo "dovecot.sh: installing dovecot-imapd" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends dovecot-imapd >&2
fi

# Stops the server an earlier run left (if its pid is still a dovecot: pids are reused), removes its data.
if [ -f "$pidfile" ] && pid="$(cat "$pidfile")" && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null \
  && [ "$(cat "/proc/$pid/comm" 2>/dev/null || echo dovecot)" = dovecot ]; then
  echo "dovecot.sh: stopping the Dovecot of an earlier run (pid $pid)" >&2
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 "$stop_steps"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
fi
stale="$(cat "$datafile" 2>/dev/null || true)"
case "$stale" in */kgw-dovecot-data-*) rm -rf "$stale" ;; esac
rm -f "$pidfile" "$datafile"

# KGW_TEST_IMAP_PORT, else a port the kernel says is free (bind to 0), else 10143 (no python3).
free_port='import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
port="${KGW_TEST_IMAP_PORT:-$(python3 -c "$free_port" 2>/dev/null || echo 10143)}"
# 16 random bytes as 32 hex characters: nothing to quote in the config or in the shell.
password="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
# Dovecot refuses to run mail processes as root: mailboxes belong to nobody:nogroup, which exist
# on every Debian (first_valid_uid/gid below let them in).
uid="$(id -u nobody)"
gid="$(getent group nogroup | cut -d: -f3)"

mkdir -p "$root/.cache"
data="$(mktemp -d "${TMPDIR:-/tmp}/kgw-dovecot-data-XXXXXX")"
echo "$data" >"$datafile"
# The login (dovenull) and mail (nobody) processes must reach the sockets in $data/run.
chmod 755 "$data"
install -d -o "$uid" -g "$gid" "$data/home"
log="$data/dovecot.log" conf="$data/dovecot.conf"
# Own base_dir and state_dir, and no include of /etc/dovecot: nothing is shared with a system
# Dovecot (/run/dovecot, /var/lib/dovecot).
cat >"$conf" <<EOF
base_dir = $data/run
state_dir = $data/run
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# A refused login answers at once: the test of a wrong password need not wait out the default 2 s delay.
auth_failure_delay = 0
log_path = $log
default_internal_user = dovecot
default_login_user = dovenull
first_valid_uid = $uid
last_valid_uid = $uid
first_valid_gid = $gid
passdb {
  driver = static
  args = password=$password
}
userdb {
  driver = static
  args = uid=$uid gid=$gid home=$data/home/%u
}
mail_location = maildir:~/Maildir
namespace inbox {
  inbox = yes
$(for box in Drafts Sent Trash; do # auto-created, with the special-use flag \Drafts, \Sent, \Trash
  printf '  mailbox %s {\n    auto = subscribe\n    special_use = \\%s\n  }\n' "$box" "$box"; done)
}
service imap-login {
  inet_listener imap {
    port = $port
  }
}
EOF
# -F keeps the master in the foreground, so $! is the master itself: a plain `kill` of it makes
# it stop all its children and exit. Its own stderr (errors before log_path applies) goes to the log.
/usr/sbin/dovecot -F -c "$conf" </dev/null >>"$log" 2>&1 &
echo $! >"$pidfile"

fail() {
  echo "dovecot.sh: $1; the end of its log ($log):" >&2 && tail -n 40 "$log" >&2
  kill "$(cat "$pidfile")" 2>/dev/null || true; exit 1
}
# Ready when the port answers with the IMAP greeting ("* OK ...").
greets() { timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && IFS= read -r line <&3 && [[ $line == "* OK"* ]]' _ "$port" 2>/dev/null; }
for _ in $(seq 1 "$ready_steps"); do
  greets && break
  kill -0 "$(cat "$pidfile")" 2>/dev/null || fail "Dovecot exited"
  sleep 0.2
done
greets || fail "Dovecot did not greet on 127.0.0.1:$port within $((ready_steps / 5)) s"
echo "dovecot.sh: Dovecot $(/usr/sbin/dovecot --version) on imap://127.0.0.1:$port (pid $(cat "$pidfile"), data $data)" >&2

echo "KGW_TEST_IMAP_URL=imap://127.0.0.1:$port"
echo "KGW_TEST_IMAP_PASSWORD=$password"

#!/usr/bin/env bash
# setup.sh: installs, with apt-get, every Debian package partner_svc needs to
# build, test and demo.  Safe to run again: it installs only what is missing.
# Debian's postgresql-15 package would create and start a "main" cluster; we
# switch that off first, since tests and the demo use throw-away clusters.
set -euo pipefail

packages=(
	gcc make perl curl ca-certificates
	postgresql-common postgresql-15 postgresql-client-15 postgresql-server-dev-15
	libcurl4-openssl-dev libssl-dev libmicrohttpd-dev libjansson-dev libipc-run-perl
	openssl socat pgbouncer nginx-light
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: missing packages (${missing[*]}); run as root to install them" >&2
	exit 1
fi
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if ! dpkg-query -W -f='${Status}' postgresql-common 2>/dev/null | grep -q 'install ok installed'; then
	apt-get install -y -qq postgresql-common >/dev/null
fi
# no default cluster: nothing of ours may be left running
conf=/etc/postgresql-common/createcluster.conf
if [ -f "$conf" ]; then
	sed -i 's/^#\?\s*create_main_cluster\s*=.*/create_main_cluster = false/' "$conf"
fi
# no service started by a package (nginx would listen on every address of
# port 80): the benchmark starts its own nginx on loopback.  Docker images
# ship such a policy already; elsewhere one is put in place for the install.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	own_policy=1
fi
rc=0
apt-get install -y -qq "${missing[@]}" >/dev/null || rc=$?
[ "$own_policy" -eq 1 ] && rm -f "$policy"
exit "$rc"

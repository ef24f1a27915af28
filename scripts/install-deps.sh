#!/bin/bash
# SPDX-License-Identifier: MIT
# Installs what building, testing and the demo need on Debian 12, and
# nothing that is there already.  Run as root (CI and the dev machines
# are); prints what it installs.
set -euo pipefail

#   scripts/install-deps.sh [--demo]   --demo: only what scripts/demo.sh needs
demo=(build-essential autoconf automake libtool pkg-config libsmartcols-dev curl)
packages=("${demo[@]}" check python3 clang-14 libclang-rt-14-dev clang-format php8.2-cli gunicorn php8.2-fpm libfcgi-bin nginx apache2 libapache2-mod-php8.2 uwsgi-core uwsgi-plugin-python3 ruby libffi-platypus-perl unicorn starman puma libnet-server-perl python3-uvicorn python3-hypercorn lighttpd php8.2-cgi libapache2-mod-wsgi-py3 python3-uvloop ruby-async libmojolicious-perl libio-async-perl libanyevent-perl libnginx-mod-http-lua python3-prometheus-client postgresql-15 libpq5 libpq-dev pgbouncer nftables bash-completion debhelper dh-python lintian)
case ${1:-} in
--demo) packages=("${demo[@]}") ;;
"") ;;
*)
    echo "install-deps: unknown option $1 (usage: install-deps.sh [--demo])" >&2
    exit 2
    ;;
esac
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to install ${missing[*]} (or install them yourself)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The PostgreSQL tests make private clusters of their own: no system
# cluster is made or started by the package.
mkdir -p /etc/postgresql-common/createcluster.d
echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/50-swerve-claim.conf
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/real-servers/systemd.sh: php-fpm started as a systemd unit would, the claims
# in PostgreSQL, the credentials from Environment= and EnvironmentFile= only.
SCL_STORE=postgresql exec "$(dirname "$0")/../real-servers/systemd.sh"

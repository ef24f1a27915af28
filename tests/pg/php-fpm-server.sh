#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/real-servers/php-fpm.sh, unchanged, with the claims in PostgreSQL.
SCL_STORE=postgresql exec "$(dirname "$0")/../real-servers/php-fpm.sh"

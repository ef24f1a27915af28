#!/bin/bash
# tests/servers/php-fpm.sh, unchanged, with the claims in PostgreSQL.
SCL_STORE=postgresql exec "$(dirname "$0")/../servers/php-fpm.sh"

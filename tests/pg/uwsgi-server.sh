#!/bin/bash
# tests/servers/uwsgi.sh, unchanged, with the claims in PostgreSQL.
SCL_STORE=postgresql exec "$(dirname "$0")/../servers/uwsgi.sh"

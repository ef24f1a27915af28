#!/bin/bash
# tests/servers/gunicorn.sh, unchanged, with the claims in PostgreSQL.
SCL_STORE=postgresql exec "$(dirname "$0")/../servers/gunicorn.sh"

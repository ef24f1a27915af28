#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/real-servers/nginx.sh with the claims in PostgreSQL: its workers claim
# through Lua, and the checks of a claim directory become the database's.
SCL_STORE=postgresql exec "$(dirname "$0")/../real-servers/nginx.sh"

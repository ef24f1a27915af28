-- SPDX-License-Identifier: MIT
-- The PostgreSQL store of swerve-claim (doc/cluster.md).
--
-- Run once per database, by a role that may create schemas and roles:
--     swerve-claim db init            (with SWERVE_CLAIM_STORE set)
--     psql -f schema.sql "postgresql://..."
-- Running it again is harmless.  Then let the servers' role in:
--     GRANT swerve_claim_user TO app;
-- and, in a database of the claims' own, every other role out (any
-- session that can connect can take every claim: doc/security.md):
--     REVOKE CONNECT ON DATABASE claims FROM PUBLIC;   (db init --dedicated)
--
-- A claim is a session advisory lock with the two-int4 key
-- (1398231638, id): 1398231638 is 'SWRV', and the two-key space is not
-- the single-bigint one that Rails, GoodJob and most others use.  The id
-- comes from a registry, never from a hash of the name: two names never
-- share a lock.  A holder also holds a shared lock (-id, S), its mark: S
-- is the server's epoch second at the grant (pg_locks shows it unsigned,
-- in objid), the hold's SINCE, known without a write.

BEGIN;

CREATE SCHEMA IF NOT EXISTS swerve_claim;

-- Names to ids.  A name is bytes (bytea: not every name is UTF-8), within
-- a scope (SWERVE_CLAIM_SCOPE).  The digest only indexes them, because a
-- btree entry holds at most 2,704 bytes and a name may be 4,096; lookups
-- compare the scope and the name themselves.
CREATE TABLE IF NOT EXISTS swerve_claim.names (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope bytea NOT NULL,
    name bytea NOT NULL,
    digest bytea GENERATED ALWAYS AS (sha256(scope || '\x00'::bytea || name)) STORED UNIQUE
);

-- Fencing tokens.  One sequence for every name, taken in the holding
-- session when the holder first asks for its hold's token (never on the
-- acquire's path: the commit that WAL-logs the sequence, once every 32
-- values, flushes WAL): each token is greater than every one handed out
-- before it, across restarts (nextval never goes back, and logs ahead of
-- what it hands out; the session keeps synchronous_commit at local, or on
-- where synchronous_standby_names is set, so that log is flushed, and
-- replicated, before a token is used).
CREATE SEQUENCE IF NOT EXISTS swerve_claim.tokens AS bigint;

-- Written with every token issued, so that the commit that hands it out
-- is WAL-logged and waits for a synchronous standby, and with it all the
-- WAL before it, the sequence's among it, whatever else the transaction
-- writes (holds is unlogged, the sequence logs once every 32 values); and
-- so that a standby says which tokens reached it (tests/pg/standby.sh).  One row per backend, written only through fence_token(), which runs as
-- the schema's owner: no member can lock another session's row and so
-- hold up its tokens.
CREATE TABLE IF NOT EXISTS swerve_claim.last_token (
    backend integer PRIMARY KEY,
    token bigint NOT NULL
);

CREATE OR REPLACE FUNCTION swerve_claim.fence_token(t bigint) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog AS $$
    INSERT INTO swerve_claim.last_token VALUES (pg_backend_pid(), t)
        ON CONFLICT (backend) DO UPDATE SET token = excluded.token
$$;

-- Which hold has which token, once asked for: for swerve-claim list.  A
-- hold's token and since (its mark's second) are recorded when its token
-- is issued, by the holding session alone (token_for).  Whether a claim is held is the lock's to say: a row whose
-- since is not its backend's mark is an older hold's.  Unlogged: no WAL,
-- no flush at commit; a crash empties it, as it empties the locks.
CREATE UNLOGGED TABLE IF NOT EXISTS swerve_claim.holds (
    id integer PRIMARY KEY,
    backend integer NOT NULL,
    token bigint,
    since timestamptz NOT NULL
);
ALTER TABLE swerve_claim.holds ALTER COLUMN token DROP NOT NULL;
-- How many holds of the name had a token issued: where history's next row
-- goes.  So a released hold's row stays, its token and backend cleared.
ALTER TABLE swerve_claim.holds ADD COLUMN IF NOT EXISTS issued bigint NOT NULL DEFAULT 0;

-- The last 16 holds of each name whose token was asked for (swerve-claim
-- history): written by token_for as it issues the token, and ended by
-- release_recorded as it releases, each in the statement that writes
-- holds anyway, never on the acquire's path.  A hold whose token nobody
-- asked for has no row; one whose session ended holding it keeps its row
-- open (the server drops a session's locks without a word).  seq is the
-- name's holds' issued, the row at slot seq % 16.  Unlogged, as holds is:
-- no WAL.
CREATE UNLOGGED TABLE IF NOT EXISTS swerve_claim.history (
    id integer NOT NULL,
    slot smallint NOT NULL,
    seq bigint NOT NULL,
    token bigint NOT NULL,
    backend integer NOT NULL,
    role text NOT NULL,
    says text NOT NULL,
    since timestamptz NOT NULL,
    ended timestamptz,
    PRIMARY KEY (id, slot)
);

-- The library's statements (src/pg/session.c) all carry the backend pid
-- the session had at setup, and do nothing when the statement runs in
-- another: only a pooler in transaction mode moves a client's statements
-- between server sessions, and session locks cannot live there.
DROP FUNCTION IF EXISTS swerve_claim.recorded_token(integer);
DROP FUNCTION IF EXISTS swerve_claim.unlock_if_held(integer);
DROP FUNCTION IF EXISTS swerve_claim.acquire_within(integer, integer);
DROP FUNCTION IF EXISTS swerve_claim.release_recorded(integer, integer);

-- What libraries from before marks name in their try (it wrote a row per
-- grant, for SINCE): kept, writing nothing, so that they work on during a
-- rolling upgrade.
CREATE OR REPLACE FUNCTION swerve_claim.record_hold(claim integer) RETURNS boolean
LANGUAGE sql AS $$ SELECT claim IS NOT NULL $$;

-- The token of this session's hold of CLAIM, granted at SINCE: NULL when
-- the statement runs in another session than BACKEND (a pooler).  The
-- session holds CLAIM (the library asks only then, and a session lock goes
-- only with an unlock of its own or the session's end), so the token is
-- greater than every earlier hold's, and smaller than every later one's.
--
-- SINCE is a second of the epoch, the mark's (unsigned 32 bits) or the
-- client's clock: anything else (infinities, NaN, before 1970, past 2106)
-- no hold began at, and is refused.  A member's infinity made every
-- reader of holds and history fail (extract to bigint), for every hold.
--
-- It runs as the schema's owner, since members may not write holds; so it
-- checks, without taking a lock, that this session holds CLAIM.  A
-- member's transaction left open on a row (its own hold's, since ended)
-- must not hold up the next holder: past a short lock timeout the record
-- is left out (list shows no token), the token is still issued.
CREATE OR REPLACE FUNCTION swerve_claim.token_for(claim integer, backend integer, since double precision)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t bigint;
BEGIN
    IF claim IS NULL OR backend IS NULL OR since IS NULL THEN
        RAISE null_value_not_allowed USING MESSAGE = 'swerve_claim.token_for takes no NULL';
    END IF;
    -- NaN compares greater than every number: refused by the second test.
    IF NOT (since >= 0 AND since < 4294967296) THEN
        RAISE invalid_parameter_value USING MESSAGE = 'swerve_claim.token_for: since is no second a hold began at';
    END IF;
    IF pg_backend_pid() <> backend THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_locks
         WHERE locktype = 'advisory' AND classid = 1398231638 AND objid = claim::oid AND objsubid = 2
           AND mode = 'ExclusiveLock' AND pid = pg_backend_pid() AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) THEN
        RAISE insufficient_privilege USING MESSAGE = 'swerve_claim.token_for: this session does not hold the claim';
    END IF;
    t := nextval('swerve_claim.tokens');
    PERFORM swerve_claim.fence_token(t);
    PERFORM set_config('lock_timeout', '50ms', true);
    -- The hold's history row goes with its holds row, in one statement.
    BEGIN
        WITH k AS (
            INSERT INTO swerve_claim.holds AS h VALUES (claim, backend, t, to_timestamp(since))
                ON CONFLICT (id) DO UPDATE SET backend = excluded.backend, token = excluded.token,
                    since = excluded.since, issued = h.issued + 1
                RETURNING h.issued)
        INSERT INTO swerve_claim.history
            SELECT claim, (k.issued % 16)::smallint, k.issued, t, backend, session_user,
                   current_setting('application_name'), to_timestamp(since), NULL FROM k
            ON CONFLICT (id, slot) DO UPDATE SET seq = excluded.seq, token = excluded.token,
                backend = excluded.backend, role = excluded.role, says = excluded.says, since = excluded.since,
                ended = NULL;
    EXCEPTION WHEN lock_not_available THEN
        NULL;
    END;
    RETURN t;
END $$;

-- Gives up CLAIM and its MARK (NULL: none; libraries from before marks
-- pass two arguments) in session BACKEND and forgets its hold's token:
-- what the library runs to release a hold whose token was issued.  NULL
-- in another session.  As the schema's owner (members may not write
-- holds), deleting only this session's row.
CREATE OR REPLACE FUNCTION swerve_claim.release_recorded(claim integer, backend integer, mark integer DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    released boolean;
BEGIN
    IF pg_backend_pid() <> backend THEN
        RETURN NULL;
    END IF;
    released := pg_advisory_unlock(1398231638, claim);
    IF mark IS NOT NULL THEN
        PERFORM pg_advisory_unlock_shared(-claim, mark);
    END IF;
    -- A row the next holder is writing (its token_for) is left to it: the
    -- release never waits for a row lock.  The row forgets the hold, and
    -- keeps the name's count; the hold's history row ends with it.
    WITH k AS (
        UPDATE swerve_claim.holds h SET token = NULL, backend = 0 WHERE h.id IN
            (SELECT k.id FROM swerve_claim.holds k WHERE k.id = claim AND k.backend = release_recorded.backend
                FOR UPDATE SKIP LOCKED)
            RETURNING h.issued)
    UPDATE swerve_claim.history s SET ended = clock_timestamp() FROM k
     WHERE s.id = claim AND s.slot = (k.issued % 16)::smallint AND s.seq = k.issued
       AND s.backend = release_recorded.backend AND s.ended IS NULL;
    RETURN released;
END $$;

-- Drops the lock, and its marks, if this session, BACKEND, holds them:
-- after a statement that failed with the lock granted (session locks
-- outlive the statement's rollback).  Never in another session.
CREATE OR REPLACE FUNCTION swerve_claim.unlock_if_held(claim integer, backend integer) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_advisory_unlock(1398231638, claim) FROM pg_locks
     WHERE locktype = 'advisory' AND classid = 1398231638 AND objid = claim::oid AND objsubid = 2
       AND pid = pg_backend_pid() AND pg_backend_pid() = backend AND granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
    SELECT pg_advisory_unlock_shared(-claim, (objid::int8 - CASE WHEN objid::int8 > 2147483647 THEN 4294967296 ELSE 0 END)::int4)
      FROM pg_locks
     WHERE locktype = 'advisory' AND classid = (-claim)::oid AND objsubid = 2 AND mode = 'ShareLock'
       AND pid = pg_backend_pid() AND pg_backend_pid() = backend AND granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
$$;

-- Waits in the server's queue for up to WAIT_MS (> 0) in session BACKEND:
-- true when granted, false when the time is up or the wait was cancelled
-- (another thread of the process needs the session, or the acquire's
-- deadline passed), NULL in another session (a pooler).  A grant can slip
-- in while the timeout cancels the wait: the server then keeps the lock
-- (LockErrorCleanup in proc.c) though the wait reports the timeout; it
-- is given back here, so nothing leaks.
CREATE OR REPLACE FUNCTION swerve_claim.acquire_within(claim integer, wait_ms integer, backend integer)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF claim IS NULL OR wait_ms IS NULL OR backend IS NULL OR wait_ms <= 0 THEN
        RAISE null_value_not_allowed USING MESSAGE = 'swerve_claim.acquire_within takes no NULL, and a wait > 0';
    END IF;
    IF pg_backend_pid() <> backend THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('lock_timeout', wait_ms || 'ms', true);
    BEGIN
        PERFORM pg_advisory_lock(1398231638, claim);
    EXCEPTION WHEN lock_not_available OR query_canceled THEN
        PERFORM swerve_claim.unlock_if_held(claim, backend);
        RETURN false;
    END;
    RETURN true;
END $$;

CREATE OR REPLACE FUNCTION swerve_claim.available(claim integer) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT NOT EXISTS (SELECT 1 FROM pg_locks
         WHERE locktype = 'advisory' AND classid = 1398231638 AND objid = claim::oid AND objsubid = 2 AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))
$$;

-- Every claim held or waited for, for people (and swerve-claim list): one
-- row per holder and per waiter; a holder's since, its mark's second (or,
-- without a mark, what its token's row says), and its token once issued;
-- a waiter's since, when it began to wait.  A mark is a session's own
-- word, as its application_name is; a since no hold began at (an
-- infinity an older token_for let in) is NULL, unknown.
--
-- Advisory locks need no privilege: any session that can connect can
-- hold a key of this space (doc/security.md).  What the server knows of a
-- session is its backend, role, client address and start (the address
-- and start only for the viewer's own role or pg_read_all_stats); what it
-- says of itself is application_name, which any session sets as it
-- likes.  The library's sessions name themselves 'swerve-claim pid=P
-- host=H'; library is true only for such a session whose role is a
-- member of swerve_claim_user, and even then P and H are its own word.
-- A session that is not the library's is a foreign one.
-- (Columns are appended, never reordered: CREATE OR REPLACE VIEW.)
CREATE OR REPLACE VIEW swerve_claim.claims AS
SELECT n.scope, n.name, l.granted AS held, l.pid AS backend, a.application_name, a.client_addr,
       CASE WHEN l.granted AND h.backend = l.pid AND (m.objid IS NULL OR h.since = to_timestamp(m.objid::int8))
            THEN h.token END AS token,
       CASE WHEN l.granted THEN coalesce(to_timestamp(m.objid::int8),
                                         CASE WHEN h.backend = l.pid AND isfinite(h.since) THEN h.since END)
            ELSE l.waitstart END AS since,
       a.usename AS role,
       coalesce(a.application_name LIKE 'swerve-claim pid=%'
                AND pg_has_role(a.usesysid, 'swerve_claim_user', 'MEMBER'), false) AS library,
       a.backend_start AS connected
  FROM pg_locks l
  JOIN swerve_claim.names n ON l.objid = n.id::oid
  LEFT JOIN swerve_claim.holds h ON h.id = n.id
  LEFT JOIN pg_stat_activity a ON a.pid = l.pid
  LEFT JOIN (SELECT pid, classid, database, max(objid::int8) AS objid FROM pg_locks
              WHERE locktype = 'advisory' AND objsubid = 2 AND mode = 'ShareLock' AND granted
              GROUP BY pid, classid, database) m
         ON l.granted AND m.pid = l.pid AND m.classid = (-n.id)::oid AND m.database = l.database
 WHERE l.locktype = 'advisory' AND l.classid = 1398231638 AND l.objsubid = 2
   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database());

-- The role the servers' own role is made a member of.  A member can take
-- and release claims and read the view; it cannot rename or renumber a
-- name (INSERT of the scope and name only), nor rewind tokens.  It may
-- connect even where PUBLIC may not (swerve-claim db init --dedicated
-- revokes PUBLIC's CONNECT: who can connect can take every claim).  A
-- role that may not grant CONNECT here gets a warning, not an error.
DO $$ BEGIN
    CREATE ROLE swerve_claim_user NOLOGIN;
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;
DO $$ BEGIN
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO swerve_claim_user', current_database());
END $$;
GRANT USAGE ON SCHEMA swerve_claim TO swerve_claim_user;
GRANT SELECT, INSERT (scope, name) ON swerve_claim.names TO swerve_claim_user;
GRANT USAGE ON SEQUENCE swerve_claim.tokens TO swerve_claim_user;
-- holds only through token_for and release_recorded, each session its own
-- row: what a member could write or lock, it could keep from the tools.
REVOKE ALL ON swerve_claim.holds FROM swerve_claim_user;
GRANT SELECT ON swerve_claim.holds TO swerve_claim_user;
REVOKE ALL ON swerve_claim.history FROM swerve_claim_user;
GRANT SELECT ON swerve_claim.history TO swerve_claim_user;
GRANT SELECT ON swerve_claim.claims TO swerve_claim_user;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA swerve_claim FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA swerve_claim TO swerve_claim_user;
-- What a standby says of tokens is token_for's alone to write.
REVOKE EXECUTE ON FUNCTION swerve_claim.fence_token(bigint) FROM swerve_claim_user;

COMMIT;

-- fg-ch's schema: what `fg-ch init` runs, statement by statement, in the database it
-- is given (default fg).  Written for, and tested by tests/fg-ch.bats on, ClickHouse
-- 18.16 (Debian's clickhouse-server), the oldest release fg-ch supports; every
-- statement is idempotent.  schema-cluster.sql is the same tables for a cluster and
-- a current ClickHouse (codecs, TTL, Replicated and Distributed engines).
--
-- A window is what `fg-fold --every` writes: the folded stacks of one host over
-- window_seconds from window_start.  A stack's text is stored once, in `stacks`,
-- under a 64-bit hash of it (cityHash64); `samples` holds one row per
-- (window, stack) with its count, so a stack seen by a thousand hosts a minute costs
-- eight bytes a row there and its text once.
--
-- Idempotent inserts: each run of `fg-ch push` names its windows with a batch id (its
-- start time and process id).  Before it inserts a window it asks whether `samples`
-- holds a row of that host, window_start and batch; a window is inserted as one block,
-- so it is there entirely or not at all.  A window sent again after a crash between
-- the insert and the removal of its spool file is thus not doubled; ReplacingMergeTree
-- on the whole key makes a double (two senders on one spool, which fg-ch's lock
-- prevents) disappear at the next merge.
--
-- Sort key: (host, window_start, ...) makes one host's hour a range of the primary
-- index, and so are the windows a query by label picks in `windows`; a day of the
-- whole fleet is a partition.  Partitions are days: ClickHouse
-- 18.16 has no TTL, so retention is
--   ALTER TABLE samples DROP PARTITION 'YYYY-MM-DD'
-- (a cron job; `SELECT DISTINCT partition FROM system.parts WHERE table = 'samples'`
-- lists them).  Compression is the server's <compression> setting (LZ4 by default,
-- ZSTD by a <case><method>zstd</method></case>): 18.16 has no per-column codecs.

CREATE TABLE IF NOT EXISTS stacks (
    stack_id UInt64,   -- cityHash64(stack)
    stack String       -- the frames, root first, separated by ';', as fg-fold writes them
) ENGINE = ReplacingMergeTree ORDER BY stack_id;

CREATE TABLE IF NOT EXISTS samples (
    window_start DateTime,      -- the window's start (UTC seconds)
    window_seconds UInt32,      -- its length (fg-ch push --every)
    host String,                -- fg-ch push --host
    comm String,                -- the stack's root frame: the process name
    batch String,               -- the run of fg-ch push that sent the window
    stack_id UInt64,            -- stacks.stack_id
    count UInt64                -- samples (or the weight fg-fold folds) of the stack
) ENGINE = ReplacingMergeTree
PARTITION BY toDate(window_start)
ORDER BY (host, window_start, batch, stack_id);

-- One row a window: its labels, kept here rather than on each of its rows of samples,
-- so that a query by label reads one small row a window and then only the matching
-- windows' ranges of samples' primary index.  fg-ch push inserts it before the
-- window's samples; a row sent twice (a retry) is one for the IN that reads it.
CREATE TABLE IF NOT EXISTS windows (
    window_start DateTime,
    window_seconds UInt32,
    host String,
    labels Array(String),       -- fg-ch push --label K=V..., sorted
    batch String,
    samples UInt64,             -- the window's samples (the sum of its counts)
    stacks UInt32               -- its distinct stacks (its rows of samples)
) ENGINE = ReplacingMergeTree
PARTITION BY toDate(window_start)
ORDER BY (host, window_start, batch);

-- fg-ch push inserts a window's stacks with their text into the two tables through
-- these Null tables (which keep nothing); the views hash the text.
CREATE TABLE IF NOT EXISTS stacks_in (stack String) ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS stacks_mv TO stacks
AS SELECT cityHash64(stack) AS stack_id, stack FROM stacks_in;

CREATE TABLE IF NOT EXISTS samples_in (
    window_start UInt32,
    window_seconds UInt32,
    host String,
    batch String,
    stack String,
    count UInt64
) ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS samples_mv TO samples
AS SELECT toDateTime(window_start) AS window_start, window_seconds, host,
          splitByChar(';', stack)[1] AS comm, batch, cityHash64(stack) AS stack_id, count
FROM samples_in;

-- fg-ch's schema for a cluster of a current ClickHouse (21.8 or later): the tables of
-- schema.sql, replicated on each shard, a Distributed table over them, per-column
-- codecs and a TTL.  TESTED ON PAPER ONLY: no statement of this file has been run.
-- What was run is schema.sql, on ClickHouse 18.16 (Debian's, the only release these
-- machines install), which lacks codecs, TTL and LowCardinality; the differences below
-- are written from ClickHouse's documentation of those features, and the table layout,
-- the queries and the inserts are schema.sql's, which tests/fg-ch.bats runs.
--
-- Adapt: the cluster name (fleet), the database (fg), the retention (30 days), the
-- ZooKeeper/Keeper paths.  Run each statement on one node (ON CLUSTER runs it on
-- all), then point fg-ch at any node: `fg-ch --url https://node:8443 init` is NOT for
-- a cluster (it runs schema.sql); run this file with clickhouse-client instead:
--     clickhouse-client --multiquery < schema-cluster.sql
--
-- Layout:  stacks_local, samples_local,  ReplicatedReplacingMergeTree, on every shard
--          windows_local
--          stacks, samples, windows      Distributed over them: what fg-ch reads and
--                                        writes (samples and stacks through the *_in
--                                        tables' views)
-- Sharding: samples and windows by host (cityHash64(host)), so that a host's windows,
-- and the idempotence check fg-ch push makes before each insert (host, window,
-- batch), stay on one shard; stacks by stack_id, so a stack's text is on one shard, once.  A query
-- of all hosts runs on every shard at once, each over its share of the hosts.
--
-- Settings fg-ch needs on a cluster, passed as its URL's query parameters (fg-ch adds
-- its own after them):
--   insert_distributed_sync=1          a window's insert returns once its shard has it,
--                                      so the idempotence check sees it
--   distributed_product_mode=global    fg-ch query names the stacks of the samples it
--                                      sums with `stack_id IN (SELECT ... FROM samples)`
--                                      inside a query of `stacks`: both Distributed,
--                                      which ClickHouse refuses unless told to run the
--                                      inner one once, on the initiator (GLOBAL IN)
-- e.g. fg-ch --url 'https://node:8443/?insert_distributed_sync=1&distributed_product_mode=global'

CREATE DATABASE IF NOT EXISTS fg ON CLUSTER fleet;

-- last_seen: when a window last sent the stack.  fg-ch push sends a window's stacks with
-- each window, so a stack that a row of samples still refers to was seen within the
-- samples' retention: the two TTLs keep every stack a kept sample names.
CREATE TABLE IF NOT EXISTS fg.stacks_local ON CLUSTER fleet (
    stack_id UInt64,
    stack String CODEC(ZSTD(3)),
    last_seen DateTime DEFAULT now() CODEC(DoubleDelta, ZSTD(1))
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/fg/stacks', '{replica}', last_seen)
ORDER BY stack_id
TTL last_seen + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS fg.samples_local ON CLUSTER fleet (
    window_start DateTime CODEC(DoubleDelta, ZSTD(1)),
    window_seconds UInt32 CODEC(T64, ZSTD(1)),
    host LowCardinality(String),
    comm LowCardinality(String),
    batch LowCardinality(String),
    stack_id UInt64 CODEC(ZSTD(1)),
    count UInt64 CODEC(T64, ZSTD(1))
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/fg/samples', '{replica}')
PARTITION BY toDate(window_start)
ORDER BY (host, window_start, batch, stack_id)
TTL window_start + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS fg.windows_local ON CLUSTER fleet (
    window_start DateTime CODEC(DoubleDelta, ZSTD(1)),
    window_seconds UInt32 CODEC(T64, ZSTD(1)),
    host LowCardinality(String),
    labels Array(LowCardinality(String)),
    batch LowCardinality(String),
    samples UInt64 CODEC(T64, ZSTD(1)),
    stacks UInt32 CODEC(T64, ZSTD(1))
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/fg/windows', '{replica}')
PARTITION BY toDate(window_start)
ORDER BY (host, window_start, batch)
TTL window_start + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS fg.windows ON CLUSTER fleet AS fg.windows_local
ENGINE = Distributed(fleet, fg, windows_local, cityHash64(host));

CREATE TABLE IF NOT EXISTS fg.stacks ON CLUSTER fleet AS fg.stacks_local
ENGINE = Distributed(fleet, fg, stacks_local, stack_id);

CREATE TABLE IF NOT EXISTS fg.samples ON CLUSTER fleet AS fg.samples_local
ENGINE = Distributed(fleet, fg, samples_local, cityHash64(host));

-- The insert path of schema.sql, unchanged: fg-ch push inserts into the Null tables,
-- the views hash the stacks and write into the Distributed tables, which send each
-- row to its shard (insert_distributed_sync=1, above).
CREATE TABLE IF NOT EXISTS fg.stacks_in ON CLUSTER fleet (stack String) ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS fg.stacks_mv ON CLUSTER fleet TO fg.stacks
AS SELECT cityHash64(stack) AS stack_id, stack, now() AS last_seen FROM fg.stacks_in;

CREATE TABLE IF NOT EXISTS fg.samples_in ON CLUSTER fleet (
    window_start UInt32,
    window_seconds UInt32,
    host String,
    batch String,
    stack String,
    count UInt64
) ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS fg.samples_mv ON CLUSTER fleet TO fg.samples
AS SELECT toDateTime(window_start) AS window_start, window_seconds, host,
          splitByChar(';', stack)[1] AS comm, batch, cityHash64(stack) AS stack_id, count
FROM fg.samples_in;

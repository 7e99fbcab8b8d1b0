"""What a partition's own log lines say of its replicas and its leader, for logs without a describe snapshot.

An operator's logs often come alone: a bug report's ``server.log``, the files of one broker. The describe
snapshot is then missing, and a partition whose reassignment no controller line names would have no
assignment at all: its ISR changes would count nowhere (docs/real-cluster.md, "Logs alone"). Kafka's code
tells more than nothing:

- a line that names the whole replica list is the assignment at its instant: the LeaderAndIsr request a
  broker receives (``replicas=[…]``, with ``addingReplicas``/``removingReplicas`` from 2.4), KRaft's
  ``Replayed PartitionRecord … PartitionRegistration(replicas=…)``, the ZooKeeper controller's
  ``Changed partition … with assigned replicas …``; before the first such line the partition had that
  line's origin (its replicas less the ones being added), and each later one sets it again;
- otherwise every broker the lines show holding a replica is one: the broker that logs a line of
  ``Partition`` (only the leader shrinks or expands the ISR), of a fetcher or of the LeaderAndIsr
  handling, the leader a line names, and every member of an ISR the lines list (both sides of
  "Shrinking ISR from A to B"). A replica that no line mentions is missed (under-counting URP), and a
  move between brokers that no controller line logs leaves the union of both sets (over-counting it);
- a LeaderAndIsr request a broker received names the controller's leader, leader epoch and ISR: for a
  partition whose lines hold no leader line and no ISR change (a follower's own log), those are its
  leader and ISR from that instant;
- a ZooKeeper controller up to 1.0 logs the leader, leader epoch and ISR it elects for an offline partition
  (``Selected new leader and ISR {…}``), which no broker line before 0.11 names the epoch of, and a KRaft controller
  its unclean elections (``UNCLEAN partition change …``) (``controller_elections.elected_state``);
- the broker that logs "Shrinking/Expanding ISR", "ISR updated" or a NotEnoughReplicas rejection is the
  leader at that instant (``Partition.maybeShrinkIsr``, ``maybeExpandIsr`` and ``appendRecordsToLeader``
  run on the leader only). Before a partition's first leader line this is its leader, with an unknown
  epoch. A change ZooKeeper refused ("Cached zkVersion … skip updating ISR" next) is not used: a broker
  that lost leadership without knowing it writes it (KAFKA-2729);
- a leader line that names its ISR after changes no line shows the ISR of (a gap in the leader epochs, or in the
  partition epochs since the last line naming the ISR) names the ISR the controller elected it from: that ISR was in
  force just before it (``isr_before_unseen_changes``), not the stale one the logs last told;
- a partition whose topic was deleted stops existing (``deleted_at``), whether or not a describe names it:
  Kafka counts no partition of a topic being deleted as offline; so does one whose topic a new ZooKeeper
  controller does not list (its data was wiped while the cluster was down, or the topic deleted unseen).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.ingest.broker_sessions import active_set, lead_rows
from replicaflow.ingest.log_changes import from_to_isr
from replicaflow.ingest.log_text import id_list
from replicaflow.ingest.replay import Assignment
from replicaflow.telemetry.schema import CONTROLLER_ISR_EPOCH
from replicaflow.telemetry.spark import local_frame

KEYS = ["cluster", "topic", "partition"]
# kinds whose logging broker holds a replica of the line's partition
BROKER_HOLDS = ("isr_shrink", "isr_expand", "isr_updated", "isr_update_failed", "leader_start", "follower_start",
                "become_leader", "become_follower", "leader_and_isr", "fetchers_stopped", "fetcher_added",
                "fetcher_removed", "partition_failed", "fetch_error", "fetch_epoch_mismatch", "fetch_offset_reset",
                "truncation_failed", "log_dir_offline", "produce_rejected", "thread_died", "replica_deleted")
# kinds whose `replicas` are assigned replicas (all of them, or the live ones of an unclean election)
REPLICA_LISTS = ("leader_and_isr", "partition_change", "partition_state", "unclean_election", "elr_election",
                 "partition_offline")
# lines of a partition's deletion: its logs renamed for deletion, fetchers removed, NonExistentPartition
DELETION_KINDS = ("replica_deleted", "fetcher_removed")
NONEXISTENT = "NonExistentPartition"
# kinds only the partition's leader logs
LEADER_LOGS = ("isr_shrink", "isr_expand", "isr_updated", "produce_rejected")
# the logIdents of a KRaft controller's own components, which no broker process has: QuorumController's `[Controller N] `
# (2.8-3.4; ZooKeeper's controller writes `[Controller N]: ` before 1.0, `[Controller id=N] ` from 1.0), then
# `[QuorumController id=N] ` (3.5+), and ControllerServer's (2.8+)
_KRAFT_CONTROLLER = r"^\[(?:QuorumController id=|ControllerServer id=|Controller )(\d+)\] "
# a KRaft broker process's own: its server and its registration with the controller
_KRAFT_BROKER = r"^\[(?:BrokerServer|BrokerLifecycleManager) id=(\d+)\] "
# the controller's lines of a broker's session: the node they name is a broker
_SESSION_KINDS = ("broker_registered", "broker_unfenced", "broker_fenced", "broker_failed", "controlled_shutdown")
_INFERRED_SEQ = -(1 << 39)  # an inferred leader row comes first at its instant, as a snapshot's does
REQUEST_SEQ = 1 << 38  # a request's rows: apart from the reader's (odd, from 1), in line order
# a follower's row comes after the leader rows and ISR changes of its instant: the old leader's change of that
# millisecond is its own (rebuild._instant_order), and the new leader's line of it tells the epoch first
_FOLLOWED_SEQ = 1 << 41
# the ISR before the change in a KRaft controller's `UNCLEAN partition change … isr: [1] -> [0], …` (its members,
# none for `[]`)
_OLD_ISR = r"(?:: |, )isr: \[([\d, ]*)\] -> "


def _none() -> Column:
    return F.array().cast("array<int>")


class Whole(NamedTuple):
    """A line naming a partition's whole assignment; ``node`` is the controller that logged it when it is a
    PartitionRecord replayed (which a controller restates at its start, ingest/controller_restart.py), else None."""

    ts_ms: int
    assignment: Assignment
    node: int | None = None


@dataclass(frozen=True)
class Seen:
    """One partition: every broker its lines show holding a replica, each line naming all of them
    (``(ts_ms, assignment)`` in log order), and for its deletion: its last line that is not part of one,
    the instants the ZooKeeper controller made it NonExistentPartition, and each broker's last deletion of
    its log."""

    holders: tuple[int, ...] = ()
    wholes: tuple[Whole, ...] = ()
    last_ms: int | None = None
    nonexistent_ms: tuple[int, ...] = ()
    deleted_on: tuple[tuple[int, int], ...] = ()


def _ids(col: Column) -> Column:
    """A list field's ids (the patterns take digits only; an id too large for an int is a null element)."""
    return F.array_compact(F.coalesce(col, _none()))


def unclean_from_isr() -> Column:
    """The ISR a KRaft controller elected from, the old value of its `UNCLEAN partition change … isr: [1] -> [0]`
    line; null on other lines."""
    msg = F.col("message")
    return F.when((F.col("kind") == "unclean_election") & msg.rlike(_OLD_ISR), id_list(F.regexp_extract(msg, _OLD_ISR, 1)))


def _one(col: Column) -> Column:
    """A broker id field as a list: a leader of -1 (none) is no broker."""
    return F.when(col.isNotNull() & (col >= 0), F.array(col)).otherwise(_none())


def _whole(kind: Column) -> Column:
    """A line naming the whole assignment: a LeaderAndIsr request, a replayed PartitionRecord (state
    'new'/'existing'; a PartitionChangeRecord names changed fields only), a NewPartition's replicas, a failed
    election's assigned replicas."""
    listed = F.col("replicas").isNotNull() & (F.size("replicas") > 0)
    return listed & (kind.isin("leader_and_isr", "partition_state", "partition_offline")
                     | ((kind == "partition_change") & F.col("state").isin("new", "existing")))


def seen_replicas(events: DataFrame) -> dict[tuple[str, str, int], Seen]:
    """Per partition, what its lines say of its replicas (one Spark job; a row per partition to the driver).
    Reassignment lines are left out: their lists are targets, which ingest/replay.py plays in time."""
    kind = F.col("kind")
    nonexistent = F.coalesce((kind == "partition_state") & (F.col("state") == NONEXISTENT), F.lit(False))
    from_isr = F.when(kind.isin("isr_shrink", "isr_expand"), from_to_isr(1))
    holders = F.flatten(F.array(
        F.when(kind.isin(*BROKER_HOLDS), _one(F.col("broker"))).otherwise(_none()), _one(F.col("leader")),
        # an unclean change's ISR held replicas, unless the record moved them too (a `replicas:` field, AutoMQ)
        _ids(F.col("isr")), _ids(from_isr), _ids(F.when(F.col("replicas").isNull(), unclean_from_isr())),
        _ids(F.col("adding")), _ids(F.col("removing")),
        F.when(kind.isin(*REPLICA_LISTS), _ids(F.col("replicas"))).otherwise(_none())))
    rows = (events.where(F.col("topic").isNotNull() & F.col("partition").isNotNull() & ~kind.startswith("reassignment_"))
            .groupBy(*KEYS)
            .agg(F.array_sort(F.array_distinct(F.flatten(F.collect_list(holders)))).alias("holders"),
                 F.array_sort(F.collect_list(F.when(_whole(kind), F.struct(
                     "ts_ms", "source", "line_number", "replicas", "adding", "removing",
                     F.when(kind == "partition_change", F.col("broker")).alias("node"))))).alias("wholes"),
                 F.max(F.when(~kind.isin(*DELETION_KINDS) & ~nonexistent, F.col("ts_ms"))).alias("last_ms"),
                 F.collect_set(F.when(nonexistent, F.col("ts_ms"))).alias("nonexistent"),
                 F.collect_list(F.when((kind == "replica_deleted") & F.col("broker").isNotNull(),
                                       F.struct("broker", "ts_ms"))).alias("deleted_on"))
            .collect())
    out = {}
    for r in rows:
        deleted: dict[int, int] = {}
        for d in r["deleted_on"]:
            deleted[d["broker"]] = max(deleted.get(d["broker"], d["ts_ms"]), d["ts_ms"])
        out[(r["cluster"], r["topic"], r["partition"])] = Seen(
            tuple(r["holders"]),
            tuple(Whole(w["ts_ms"], Assignment(tuple(w["replicas"]), tuple(w["adding"] or ()),
                                               tuple(w["removing"] or ())), w["node"]) for w in r["wholes"]),
            r["last_ms"], tuple(sorted(r["nonexistent"])), tuple(sorted(deleted.items())))
    return out


# KafkaController.initializeControllerContext's list (a Scala Set: topic names hold no parenthesis, comma or space)
_LISTED_TOPICS = r"Current list of topics in the cluster: (?:Hash)?Set\(([^()]*)\)"


@dataclass(frozen=True)
class TopicEnds:
    """Per topic, the instants the controller logged its deletion done (ZooKeeper's TopicDeletionManager, KRaft's
    RemoveTopicRecord replayed); per cluster, each ZooKeeper controller's list of the topics it found at its start."""

    deleted: dict[tuple[str, str], tuple[int, ...]]
    listings: dict[str, tuple[tuple[int, frozenset[str]], ...]]

    def of(self, cluster: str, topic: str, shown_ms: int | None = None) -> tuple[int, ...]:
        """When ``topic`` stopped existing: its deletions, and each list of topics that left it out (a wiped cluster's
        controller lists none of its old topics), but a list before ``shown_ms``, an instant a describe shows it."""
        unlisted = [t for t, names in self.listings.get(cluster, ()) if topic not in names
                    and (shown_ms is None or t > shown_ms)]
        return (*self.deleted.get((cluster, topic), ()), *unlisted)


def topic_deletions(events: DataFrame) -> TopicEnds:
    """The lines that end a topic, from every cluster's events (few: collected in one job). A list of topics ends
    the ones it leaves out from the controller's list of live brokers two lines before it, read in the same step
    (KafkaController.initializeControllerContext): the brokers it leaves out are down from that line, and the
    partitions they led were offline for the millisecond to the topics' list (66 of them, on a wiped 2.8 cluster)."""
    kind = F.col("kind")
    rows = (events.where(((kind == "topic_deleted") & F.col("topic").isNotNull()) | (kind == "topics_listed")
                         | active_set())
            .select("cluster", "ts_ms", "kind", "topic", "source", "line_number", active_set().alias("brokers"),
                    F.regexp_extract("message", _LISTED_TOPICS, 1).alias("names"))
            .collect())
    deleted: dict[tuple[str, str], list[int]] = {}
    listings: dict[str, list[tuple[int, frozenset[str]]]] = {}
    brokers_listed = {(r["cluster"], r["source"], r["line_number"]): r["ts_ms"] for r in rows if r["brokers"]}
    for r in rows:
        if r["kind"] == "topic_deleted":
            deleted.setdefault((r["cluster"], r["topic"]), []).append(r["ts_ms"])
        elif r["kind"] == "topics_listed":
            names = frozenset(n for n in r["names"].split(", ") if n)
            at = next((brokers_listed[k] for k in ((r["cluster"], r["source"], r["line_number"] - n) for n in (2, 1))
                       if k in brokers_listed), r["ts_ms"])
            listings.setdefault(r["cluster"], []).append((at, names))
    return TopicEnds({k: tuple(sorted(v)) for k, v in deleted.items()},
                     {k: tuple(sorted(v, key=lambda x: x[0])) for k, v in listings.items()})


def recreated(events: DataFrame, ends: list[tuple[str, str, int | None, int]]
              ) -> dict[tuple[str, str, int], list[tuple[int, int]]]:
    """Per partition, the (end, created) instants of each end of it (``ends``: cluster, topic, partition or None for
    all of the topic's, instant) whose first line after it is the partition's creation (ZooKeeper's `… state from
    NonExistentPartition to NewPartition`, KRaft's PartitionRecord for a new partition, a leader epoch 0). The
    partition did not exist in between: its topic deleted, or its ZooKeeper wiped, and then created again under the
    same name. The lines of a deletion (logs renamed, fetchers removed) are no line of its life. One Spark job; the
    ends are few."""
    if not ends:
        return {}
    kind, epoch0 = F.col("kind"), F.col("leader_epoch") == 0
    creation = (((kind == "partition_state") & (F.col("state") == "NewPartition"))
                | ((kind == "partition_change") & (F.col("state") == "new"))
                | (kind.isin("leader_start", "follower_start", "leader_and_isr", "partition_state") & epoch0))
    table = local_frame(events.sparkSession, ends, "cluster string, topic string, end_partition int, end_ms long")
    lines = events.where(F.col("topic").isNotNull() & F.col("partition").isNotNull() & ~kind.isin(*DELETION_KINDS))
    first = (lines.join(F.broadcast(table), ["cluster", "topic"])
             .where((F.col("ts_ms") > F.col("end_ms"))
                    & (F.col("end_partition").isNull() | (F.col("end_partition") == F.col("partition"))))
             .groupBy(*KEYS, "end_ms")
             .agg(F.min(F.struct("ts_ms", "source", "line_number", F.coalesce(creation, F.lit(False)).alias("new")))
                  .alias("f"))
             .where("f.new").collect())
    out: dict[tuple[str, str, int], list[tuple[int, int]]] = {}
    for r in sorted(first, key=lambda r: r["end_ms"]):
        out.setdefault((r["cluster"], r["topic"], r["partition"]), []).append((r["end_ms"], r["f"]["ts_ms"]))
    return out


def deleted_at(seen: Seen, topic_deleted: tuple[int, ...], replicas: tuple[int, ...]) -> int | None:
    """When the partition stopped existing: the first of the controller's NonExistentPartition, its topic's
    deletion, or the last of its replicas' logs renamed for deletion (once every replica's is), that comes
    after every other line of the partition (a later line means it lives on, or was created again)."""
    times = [*seen.nonexistent_ms, *topic_deleted]
    on = dict(seen.deleted_on)
    if replicas and all(b in on for b in replicas):
        times.append(max(on[b] for b in replicas))
    after = [t for t in times if seen.last_ms is None or t >= seen.last_ms]
    return min(after) if after else None


def inferred_leaders(events: DataFrame, leaders: DataFrame) -> DataFrame:
    """Leader rows from the lines only a leader writes, where no leader row tells the leader (before the partition's
    first one, and after a row of no leader, -1: ``log_changes.told_leaders``, a whole cluster down) and only where
    the leader changes (the ``leaders`` columns; epoch and offsets unknown)."""
    refused = F.coalesce(F.col("state") == "refused", F.lit(False))  # a stale leader's change ZooKeeper refused
    told = leaders.select(*KEYS, "ts_ms", F.lit("").alias("source"), F.lit(-1).cast("long").alias("line_number"),
                          "seq", "leader", F.lit(True).alias("told"))
    logged = (events.where(F.col("kind").isin(*LEADER_LOGS) & F.col("broker").isNotNull() & ~refused
                           & F.col("topic").isNotNull() & F.col("partition").isNotNull())
              .select(*KEYS, "ts_ms", "source", "line_number", F.lit(0).cast("long").alias("seq"),
                      F.col("broker").alias("leader"), F.lit(False).alias("told"))
              .unionByName(told))
    w = Window.partitionBy(*KEYS).orderBy("ts_ms", "source", "line_number", "seq")
    in_force = F.last(F.when(F.col("told"), F.col("leader")), ignorenulls=True).over(
        w.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    return (logged.select("*", F.lag("leader").over(w).alias("before"), in_force.alias("in_force"))
            .where(~F.col("told") & F.coalesce(F.col("in_force") == -1, F.lit(True))
                   & ~F.col("before").eqNullSafe(F.col("leader")))
            .select(*KEYS, "ts_ms", (F.col("line_number") + _INFERRED_SEQ).alias("seq"), "leader")
            .transform(lead_rows))


def followed_leaders(events: DataFrame, lead: DataFrame) -> DataFrame:
    """Leader rows (``lead``'s columns) from the followers' lines, which name the leader at each new leader epoch a
    follower applies: a follower's fetcher (ReplicaFetcherManager `Added fetcher to broker L for partitions …`, with the
    epoch from 2.1, in server.log), and a KRaft follower's own line (Partition.makeFollower 3.3+: `Follower t-p starts
    at leader epoch E … Current leader is L.`, -1 where the controller elected none). From 2.6 a leader's own line is
    in state-change.log, which bug reports often leave out: the fetchers then tell who leads after a failure. The first
    follower's line of an epoch counts, unless a leader row of that epoch or a later one came first. The epoch stays
    unknown: an election that no leader line shows is not checked against an ISR the lines may have missed the
    changes of (``isr_before_unseen_changes``)."""
    epoch = F.col("leader_epoch")
    told = (events.where(F.col("kind").isin("follower_start", "fetcher_added") & F.col("leader").isNotNull()
                         & epoch.isNotNull() & F.col("topic").isNotNull() & F.col("partition").isNotNull())
            .groupBy(*KEYS, "leader_epoch").agg(F.min(F.struct("ts_ms", "source", "line_number", "leader")).alias("l"))
            .select(*KEYS, "l.ts_ms", (F.col("l.line_number") + _FOLLOWED_SEQ).alias("seq"), "l.leader", "leader_epoch",
                    F.lit(True).alias("followed")))
    rows = lead.select(*KEYS, "ts_ms", "seq", "leader", "leader_epoch", F.lit(False).alias("followed")).unionByName(told)
    known = F.max(F.when(~F.col("followed"), epoch)).over(
        Window.partitionBy(*KEYS).orderBy("ts_ms", "seq").rowsBetween(Window.unboundedPreceding, -1))
    return (rows.select("*", known.alias("known"))
            .where(F.col("followed") & ~F.coalesce(F.col("known") >= epoch, F.lit(False))).transform(lead_rows))


def stepped_down(events: DataFrame, lead: DataFrame) -> DataFrame:
    """Leader rows (``lead``'s columns) from a fetcher line without an epoch (up to 2.0: `Added fetcher for partitions
    List([t-p, initOffset O to broker BrokerEndPoint(L,…)] )`) where the broker that writes it led the partition,
    as the rows before tell (a leader line, or its own ISR changes, ``inferred_leaders``): it follows L now, so L
    leads (ReplicaManager.makeFollowers). Without it, a 0.11 broker that moved to follow another kept its leadership
    to the end of the logs."""
    fetched = (events.where((F.col("kind") == "fetcher_added") & F.col("leader_epoch").isNull()
                            & F.col("leader").isNotNull() & F.col("broker").isNotNull() & (F.col("leader") != F.col("broker"))
                            & F.col("topic").isNotNull() & F.col("partition").isNotNull())
               .select(*KEYS, "ts_ms", (F.col("line_number") + _FOLLOWED_SEQ).alias("seq"), "leader", "broker"))
    rows = (lead.select(*KEYS, "ts_ms", "seq", "leader", F.lit(None).cast("int").alias("broker"))
            .unionByName(fetched))
    in_force = F.last(F.when(F.col("broker").isNull(), F.col("leader")), ignorenulls=True).over(
        Window.partitionBy(*KEYS).orderBy("ts_ms", "seq").rowsBetween(Window.unboundedPreceding, -1))
    return (rows.select("*", in_force.alias("in_force"))
            .where(F.col("broker").isNotNull() & (F.col("in_force") == F.col("broker"))).transform(lead_rows))


def isr_after(rows: DataFrame) -> DataFrame:
    """The ISR a request or a controller's line names, as an ``isr`` row numbered right after its leader row."""
    return rows.select(*KEYS, "ts_ms", (F.col("seq") + 2).alias("seq"), "isr", "leader_epoch")


def requested_state(events: DataFrame, isr: DataFrame, leaders: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Leader and ISR rows from the LeaderAndIsr requests a broker received (the controller's decision:
    leader, leader epoch, ISR), for partitions whose lines hold no leader line and no ISR change: a
    follower's own log. Returns ``isr`` rows, ``leaders`` rows (the reader's numbering: a request's leader
    row, then its ISR row two after) and the instants whose leader row names the ISR (``carried``);
    a request repeating the partition's last leader and epoch adds no leader row."""
    logged = isr.select(*KEYS).unionByName(leaders.where(F.col("leader") != -1).select(*KEYS)).distinct()
    req = (events.where((F.col("kind") == "leader_and_isr") & F.col("topic").isNotNull()
                        & F.col("partition").isNotNull() & F.col("leader").isNotNull() & F.col("isr").isNotNull()
                        & F.col("leader_epoch").isNotNull())
           .join(logged, KEYS, "left_anti")
           .select(*KEYS, "ts_ms", "source", "line_number", "leader", "leader_epoch", "isr",
                   (F.col("line_number") * 4 + REQUEST_SEQ).alias("seq")))
    w = Window.partitionBy(*KEYS).orderBy("ts_ms", "source", "line_number")
    before = F.lag(F.struct("leader", "leader_epoch")).over(w)
    new_leader = req.select("*", before.alias("before")).where(
        ~F.col("before").eqNullSafe(F.struct("leader", "leader_epoch")))
    return isr_after(req), lead_rows(new_leader, with_epoch=True), new_leader.select(*KEYS, "ts_ms").distinct()


def recorded_state(events: DataFrame, leaders: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Leader and ISR rows from a KRaft controller's PartitionRecord lines (`Replayed PartitionRecord for new|existing
    partition …`, 3.6+; `Created partition …` 3.0-3.5): the leader, leader epoch and ISR the metadata log holds, before
    the partition's first leader row of ``leaders`` (an hour of a quorum's files whose brokers write no line until the
    controller fences them all). A controller restates its snapshot's records at each start, so only a record of a
    leader epoch past every earlier record's counts. Returns ``isr`` and ``leaders`` rows numbered as a request's
    (``requested_state``) and the instants whose leader row names the ISR."""
    first = leaders.groupBy(*KEYS).agg(F.min("ts_ms").alias("first_ms"))
    rec = (events.where((F.col("kind") == "partition_change") & F.col("state").isin("new", "existing")
                        & F.col("topic").isNotNull() & F.col("partition").isNotNull() & F.col("leader").isNotNull()
                        & F.col("isr").isNotNull() & F.col("leader_epoch").isNotNull())
           .join(first, KEYS, "left").where(F.col("first_ms").isNull() | (F.col("ts_ms") < F.col("first_ms")))
           .select(*KEYS, "ts_ms", "leader", "leader_epoch", "isr",
                   (F.col("line_number") * 4 + REQUEST_SEQ).alias("seq")))
    w = Window.partitionBy(*KEYS).orderBy("ts_ms", "seq").rowsBetween(Window.unboundedPreceding, -1)
    rec = rec.select("*", F.max("leader_epoch").over(w).alias("before")).where(
        F.col("before").isNull() | (F.col("leader_epoch") > F.col("before")))
    return isr_after(rec), lead_rows(rec, with_epoch=True), rec.select(*KEYS, "ts_ms").distinct()



def isr_before_unseen_changes(events: DataFrame, read: DataFrame, lead: DataFrame) -> DataFrame:
    """An ISR row just before each leader line that names its ISR after changes no line shows the ISR of: the ISR
    that line names, as the controller wrote it (``CONTROLLER_ISR_EPOCH``).

    Unseen changes: the line's leader epoch is more than one past the partition's last epoch the lines named, or its
    partition epoch more than one past that of the last line naming the ISR (`ISR updated … version updated to N`,
    a leader's line). They are decisions of the controller (fenced or shut-down brokers removed from the ISR) or lines
    of brokers whose logs are missing, so the ISR the logs last told is stale, and a new leader outside it would read
    as an unclean election (docs/semantics.md §6). The ISR the leader's line names is the one the controller elected
    it from, less the members it dropped: a clean election picks a member; an unclean one leaves the leader alone in
    the ISR and logs its own line (`UNCLEAN partition change …`, `No broker in ISR is alive …`). A leader epoch
    before the last one is a partition created again (a topic deleted or its cluster wiped, then created: epochs
    restart at 0), whose first leader is elected from the ISR its line names, not from the old partition's. A leader
    line that names no ISR (before 2.6) takes the ISR of the last LeaderAndIsr request a broker received for its
    leader and epoch, at or before it: the controller's decision (a 2.1 leader's epoch two past the last the logs
    named, a controlled shutdown's unseen between, read as an unclean election from a stale ISR). Epoch 0 again is a
    partition created again with the leader epoch it had (its topic deleted, or its ZooKeeper wiped), or a partition
    of one replica that came back under the epoch it had: either way its leader is a member of the ISR its line names
    (a public 2.8 cluster's 84 topic creations read as unclean elections from the old partitions' ISRs).
    ``read``: the reader's rows, where a leader line's own ISR row is numbered right after it.
    """
    keys = ["cluster", "topic", "partition"]
    before = Window.unboundedPreceding, -1
    last_epoch = F.last("leader_epoch", ignorenulls=True).over(
        Window.partitionBy(*keys).orderBy("ts_ms", "seq").rowsBetween(*before))
    kind = F.col("kind")
    names_isr = (kind == "isr_updated") | ((kind == "leader_start") & F.col("isr").isNotNull())
    last_known = F.last("partition_epoch", ignorenulls=True).over(
        Window.partitionBy(*keys).orderBy("ts_ms", "source", "line_number").rowsBetween(*before))
    unseen = (events.where(names_isr & F.col("topic").isNotNull() & F.col("partition").isNotNull())
              .select(*keys, "ts_ms", "kind", "leader_epoch", "partition_epoch", last_known.alias("last_known"))
              .where((kind == "leader_start") & (F.col("partition_epoch") > F.col("last_known") + 1))
              .select(*keys, "ts_ms", "leader_epoch", F.lit(True).alias("unseen")).distinct())
    gaps = (lead.select(*keys, "ts_ms", "seq", "leader", "leader_epoch", last_epoch.alias("last_epoch"))
            .join(unseen, [*keys, "ts_ms", "leader_epoch"], "left")
            .where((F.col("leader_epoch") > F.col("last_epoch") + 1) | (F.col("leader_epoch") < F.col("last_epoch"))
                   | ((F.col("leader_epoch") == 0) & (F.col("last_epoch") == 0)) | F.col("unseen")))
    own = read.select(*keys, "ts_ms", (F.col("seq") - 2).alias("seq"), "isr")
    at = F.struct("ts_ms", "source", "line_number")
    requests = (events.where((kind == "leader_and_isr") & F.col("isr").isNotNull() & F.col("leader").isNotNull()
                             & F.col("leader_epoch").isNotNull())
                .select(*keys, "leader", "leader_epoch", at.alias("req_at"), F.col("isr").alias("req_isr")))
    requested = (gaps.select(*keys, "ts_ms", "seq", "leader", "leader_epoch")
                 .join(requests, [*keys, "leader", "leader_epoch"])
                 .where(F.col("req_at.ts_ms") <= F.col("ts_ms"))
                 .groupBy(*keys, "ts_ms", "seq").agg(F.max_by("req_isr", "req_at").alias("req_isr")))
    return (gaps.join(own, [*keys, "ts_ms", "seq"], "left").join(requested, [*keys, "ts_ms", "seq"], "left")
            .where(F.col("isr").isNotNull() | F.col("req_isr").isNotNull())
            .select(*keys, "ts_ms", (F.col("seq") - 1).alias("seq"), F.coalesce("isr", "req_isr").alias("isr"),
                    F.lit(CONTROLLER_ISR_EPOCH).alias("leader_epoch")))


def controllers_alone(events: DataFrame) -> DataFrame:
    """(cluster, broker): KRaft nodes that are controllers and no broker (``process.roles=controller``). A node is
    one when a QuorumController or ControllerServer line names it (``_KRAFT_CONTROLLER``), and it logs no line of a
    broker's own: none of a replica it holds (``BROKER_HOLDS``), none of a BrokerServer or BrokerLifecycleManager.
    Its start and stop lines (KafkaRaftServer's, shared by both roles) are then no broker's lifetime. A node running
    both roles logs its replicas' lines; ``rebuild`` also keeps any node a describe or a line shows holding a
    replica, and any node the controller's lines of a broker's session name (4.1's BrokerServer lines are no events:
    without them the nodes of a combined cluster were controllers alone, and the rebuilt cluster had no broker)."""
    named = F.col("broker").cast("string")
    controller = F.regexp_extract("message", _KRAFT_CONTROLLER, 1) == named
    broker = F.col("kind").isin(*BROKER_HOLDS) | (F.regexp_extract("message", _KRAFT_BROKER, 1) == named)
    # a node whose session the controller tells of (registered, unfenced, fenced, shut down) is a broker
    sessions = (events.where(F.col("kind").isin(*_SESSION_KINDS) & F.col("target_broker").isNotNull())
                .select("cluster", F.col("target_broker").alias("broker")).distinct())
    return (events.where(F.col("broker").isNotNull()).groupBy("cluster", "broker")
            .agg(F.bool_or(controller).alias("controller"), F.bool_or(broker).alias("own"))
            .where(F.col("controller") & ~F.col("own")).select("cluster", "broker")
            .join(F.broadcast(sessions), ["cluster", "broker"], "left_anti"))

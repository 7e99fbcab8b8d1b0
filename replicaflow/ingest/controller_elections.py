"""The leader and ISR rows of the elections a controller logs (docs/real-cluster.md, ``leaders``): a ZooKeeper
controller's up to 1.0 and from 1.1, a KRaft controller's unclean and ELR elections, whether or not the line names the
leader epoch."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.ingest.broker_sessions import lead_rows
from replicaflow.ingest.holders import KEYS, REQUEST_SEQ, isr_after, unclean_from_isr
from replicaflow.ingest.kraft_elections import ELECTION_KINDS, LEADERLESS_BEFORE, eligible_before
from replicaflow.telemetry.schema import CONTROLLER_ISR_EPOCH

SELECTED = "Selected new leader and ISR "  # OfflinePartitionLeaderSelector's election, 0.8-1.0
# PartitionStateMachine's election, or a new partition's first leader, 1.1+ (`… state from …` is another transition's)
ELECTED = r"Changed partition \S+ from \w+ to OnlinePartition with state LeaderAndIsr\("
# its election of a new leader for a partition that has one (preferred replica, controlled shutdown, reassignment):
# the leader is a member of the ISR in force, and the line's ISR that ISR or less; or a new partition's first leader
_ISR_IN_FORCE = r"Changed partition \S+ from (?:Online|New)Partition to OnlinePartition with state "
TRIED = "Setting new leader for topicId "  # a KRaft controller's election (PartitionChangeBuilder.tryElection)


def elected_state(events: DataFrame, leaders: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Leader and ISR rows of the elections a controller logs: a ZooKeeper controller's for
    an offline partition up to 1.0 (OfflinePartitionLeaderSelector: `Selected new leader and ISR {"leader":L,
    "leader_epoch":E,"isr":[…]} for offline partition [t,p]`) and every one from 1.1 (PartitionStateMachine: `Changed
    partition t-p from OfflinePartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=8, …)`, TRACE
    up to 2.5, INFO from 2.6: its only line of an unclean election, or of a partition's return after a failed one),
    and a KRaft controller's unclean one (`UNCLEAN partition change for t-p …: isr: [1] -> [0], leader: 1 -> 0,
    leaderEpoch: 85 -> 86, …`, 3.0+) and its elections by PartitionChangeBuilder where a line names the leader epoch
    (4.1's `Setting new leader for topicId X, partition p to L using ELR|an unclean election. Previous partition: …`:
    the registration's epoch plus one, its ISR and ELR the replicas it elected from, and where it had no leader, a -1
    row just before the election). An election `from OnlinePartition` picks a member of the ISR in force and keeps
    the others but the brokers shutting down (PartitionLeaderElectionAlgorithms: preferred replica, controlled shutdown,
    reassignment): the ISR it names is numbered just before its leader (``CONTROLLER_ISR_EPOCH``), as the ISR it was
    elected from, since the leader's expansion that made it a member may be in no file (a public 2.1 cluster's auto
    rebalance read as an unclean election); so is a new partition's (`from NewPartition`, leader epoch 0, a partition
    created again too), whose first leader no one elected. Before 0.11 no broker line names a leader epoch, and a
    controller's file is often alone: without these an unclean election counted nowhere, and the KRaft partition
    stayed offline from its leader's fencing. An election raises the leader epoch past every earlier one: a line whose epoch is not past
    every earlier leader row's (``leaders``) is a KRaft controller replaying its log at a start, or a broker's line
    told it first. The same line before 4.1 names no epoch (`… to L using an unclean election`, INFO from 3.6; `…
    using ELR`, TRACE 3.7-4.0): the controller puts the election in the PartitionChangeRecord it writes next, whose
    leader raises the epoch by one and whose ISR is L alone, so the line is a leader row at its instant, of the epoch
    after the last one the rows named (a lower bound: the fencing that left the partition without a leader raised it
    too, in no line), and an ISR row of L; it is never a replay (only the active controller elects). The record's own
    line just after it (`UNCLEAN partition change …`, every controller at its replay) is then the same election and
    adds nothing: its old ISR made it a second unclean one. Returns rows numbered as a request's
    (``requested_state``); an ISR row where the line names the ISR, and for an `UNCLEAN` line one just before it of
    the ISR the controller elected from (its old value, ``CONTROLLER_ISR_EPOCH``)."""
    kind = F.col("kind")
    by_zookeeper = F.col("message").contains(SELECTED) | F.col("message").rlike(ELECTED)
    epoch = F.col("leader_epoch")
    # PartitionChangeBuilder.tryElection's line up to 4.0, no epoch: the record that follows it sets the leader
    tried = kind.isin(*ELECTION_KINDS) & epoch.isNull() & F.col("message").contains(TRIED)
    said = (((kind == "partition_state") & by_zookeeper) | kind.isin(*ELECTION_KINDS)) \
        & F.col("topic").isNotNull() & F.col("partition").isNotNull() & F.col("leader").isNotNull() \
        & (epoch.isNotNull() | tried)
    old_isr = F.coalesce(unclean_from_isr(), eligible_before())
    # an unclean or ELR election sets the ISR to its leader alone (tryElection; 4.1's line names it)
    isr = F.when(tried, F.array(F.col("leader"))).otherwise(F.col("isr"))
    sel = events.where(said).select(*KEYS, "ts_ms", "leader", "leader_epoch", isr.alias("isr"),
                                    (F.col("line_number") * 4 + REQUEST_SEQ).alias("seq"), F.lit(True).alias("said"),
                                    old_isr.alias("old_isr"), F.col("message").rlike(_ISR_IN_FORCE).alias("isr_in_force"),
                                    F.col("message").rlike(LEADERLESS_BEFORE).alias("leaderless"), tried.alias("tried"))
    known = leaders.select(*KEYS, "ts_ms", "leader", "leader_epoch", F.lit(None).cast("array<int>").alias("isr"),
                           "seq", F.lit(False).alias("said"), F.lit(None).cast("array<int>").alias("old_isr"),
                           F.lit(False).alias("isr_in_force"), F.lit(False).alias("leaderless"), F.lit(False).alias("tried"))
    order = Window.partitionBy(*KEYS).orderBy("ts_ms", "seq")
    prev = F.lag(F.struct("leader", "tried")).over(order)
    sel = sel.unionByName(known).select("*", F.max(epoch).over(order.rowsBetween(Window.unboundedPreceding, -1))
                                        .alias("past"), prev.alias("prev"))
    # the record a line without an epoch announced, replayed right after it (`UNCLEAN partition change …`): the same
    # election, told once
    replayed = ~F.col("tried") & F.coalesce(F.col("prev.tried") & (F.col("prev.leader") == F.col("leader")), F.lit(False))
    sel = (sel.where(F.col("said") & ~replayed & (F.col("tried") | F.col("past").isNull() | (epoch > F.col("past"))
                                                  | F.col("isr_in_force") & (epoch == 0)))
           .withColumn("leader_epoch", F.when(F.col("tried"), F.col("past") + 1).otherwise(epoch)))
    named = sel.where(F.col("isr").isNotNull())
    # the ISR the KRaft controller elected from, in force just before (as isr_before_unseen_changes numbers it):
    # where the line is all the logs hold of the partition, no ISR was known and the election read as clean
    chose_from = sel.where(F.col("old_isr").isNotNull() | (F.col("isr_in_force") & F.col("isr").isNotNull())).select(
        *KEYS, "ts_ms", (F.col("seq") - 1).alias("seq"), F.coalesce("old_isr", "isr").alias("isr"),
        F.lit(CONTROLLER_ISR_EPOCH).alias("leader_epoch"))
    # a 4.1 election line whose registration before had no leader (`leader=-1`): none until the line, the epoch before
    none = sel.where(F.col("leaderless")).select(*KEYS, "ts_ms", (F.col("seq") - 2).alias("seq"), F.lit(-1).alias(
        "leader"), (F.col("leader_epoch") - 1).alias("leader_epoch"))
    return (isr_after(named.where(~F.col("isr_in_force"))).unionByName(chose_from),
            lead_rows(sel, with_epoch=True).unionByName(lead_rows(none, with_epoch=True)),
            named.select(*KEYS, "ts_ms").distinct())

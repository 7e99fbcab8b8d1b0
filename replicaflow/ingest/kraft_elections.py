"""What a KRaft controller's election lines say (PartitionChangeBuilder.tryElection, `Setting new leader for topicId
X, partition p to L using ELR|an unclean election[. Previous partition: PartitionRegistration(…), change record: …]`).

They name the partition by topic id alone: its topic is the one the cluster's other lines give that id. A topic id
(Uuid, 22 characters of URL-safe base64) is its topic's for the topic's whole life, and other lines of the same
cluster name both: a replayed PartitionRecord or partition change (`… for t-p with topic ID X …`), a broker's
leader line (`Leader t-p with topic id Some(X) …`, 3.3+), a skipped state change. Where none does, the line keeps
no topic, as before (docs/logs.md)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from replicaflow.ingest.log_text import id_list

# 4.1: the registration before the election, and one that names no leader (the partition was offline until the line)
_BEFORE = r"Previous partition: ?PartitionRegistration\([^()]*"
LEADERLESS_BEFORE = _BEFORE + r"\bleader=-1\b"
# `topicId X` (the election lines), `topicId=X` (records), `topic ID X` / `topic id Some(X)` / `topic id X`
TOPIC_ID = r"\b(?:topicId[= ]|topic [iI][dD] (?:Some\()?)([A-Za-z0-9_-]{22})\b"


# the kinds of the lines that name their partition by topic id alone (with the registration before on 4.1:
# log_rule.ELECTION_FIELDS); `unclean_election` is also ZooKeeper's line, which names its topic
ELECTION_KINDS = ("unclean_election", "elr_election")


def _topic_id(message: Column) -> Column:
    return F.when(message.contains("opic"), F.nullif(F.regexp_extract(message, TOPIC_ID, 1), F.lit("")))


def name_topics(events: DataFrame) -> DataFrame:
    """``events`` (log_events) with the topic of each row that has none filled from the topic id its message names,
    as the cluster's other rows name that id (a handful of ids per cluster: one broadcast map)."""
    topic = F.col("topic")
    named = (events.where(topic.isNotNull()).select("cluster", _topic_id(F.col("message")).alias("_id"), "topic")
             .where(F.col("_id").isNotNull()).groupBy("cluster", "_id").agg(F.min("topic").alias("_named")))
    unnamed = events.select("*", F.when(topic.isNull(), _topic_id(F.col("message"))).alias("_id"))
    return (unnamed.join(F.broadcast(named), ["cluster", "_id"], "left")
            .select(*[F.coalesce(topic, F.col("_named")).alias("topic") if c == "topic" else F.col(c)
                      for c in events.columns]))


def eligible_before() -> Column:
    """The replicas a KRaft controller of 4.1 elected from, as its election line's registration before the change
    names them: the ISR and the eligible leader replicas (KIP-966; an ELR member elected is a clean election, and
    the rebuild's ISR knows no ELR); null on other lines."""
    msg = F.col("message")
    return F.when(msg.rlike(_BEFORE + r"\belr=\["), F.array_union(
        id_list(F.regexp_extract(msg, _BEFORE + r"\bisr=\[([\d, ]*)\]", 1)),
        id_list(F.regexp_extract(msg, _BEFORE + r"\belr=\[([\d, ]*)\]", 1))))

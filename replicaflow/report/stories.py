"""The five KIP before/after stories of `replicaflow demo` and the sentence that says what changed.

The stories are data: the demo job simulates and analyzes each side (``scenarios/<side>.yaml``),
the report puts the pair side by side. Each sentence is computed from the two clusters' headline
numbers (``analysis/_summary.json``), never written in advance: if a run stops showing the KIP's
effect, the sentence says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from replicaflow.model.metrics import available
from replicaflow.model.units import format_minutes
from replicaflow.model.version import KafkaVersion


@dataclass(frozen=True)
class StoryPair:
    """One KIP's before/after pair: the cluster names in the analysis and what the story shows."""

    key: str
    title: str
    about: str
    before: str
    after: str
    hypothetical: str | None = None  # what of the story Kafka never shipped (shown as such)


STORIES: tuple[StoryPair, ...] = (
    StoryPair("kip16", "KIP-16: time-based ISR",
              "A short produce burst: before 0.9 a follower more than replica.lag.max.messages behind is dropped "
              "from the ISR even while it keeps up; KIP-16 (0.9) judges followers by time (replica.lag.time.max.ms), "
              "shown at 0.10.2, where a fetch that finds new messages still counts (KAFKA-4485).",
              "kip16-before", "kip16-after"),
    StoryPair("kip164", "KIP-164: UnderMinIsrPartitionCount",
              "Two brokers die one after the other: URP cannot tell 'fewer copies' from 'acks=all writes rejected'; "
              "1.0 adds UnderMinIsrPartitionCount.",
              "kip164-before", "kip164-after"),
    StoryPair("kip352", "KIP-352: reassignment-aware URP",
              "Healthy partitions move to a new broker: before 2.5 every moving partition counts as under-replicated "
              "for the whole move; 2.5 excludes adding replicas and reports ReassigningPartitions.",
              "kip352-before", "kip352-after"),
    StoryPair("kip461", "KIP-461: fetcher partition-failure isolation",
              "A storage error on one partition: before 2.3 it kills the whole replica fetcher thread; 2.3 marks only "
              "that partition failed (FailedPartitionsCount) and keeps fetching the others.",
              "kip461-before", "kip461-after"),
    StoryPair("kip542", "KIP-542: separate reassignment throttles",
              "A throttled reassignment while a broker restarts: KIP-73 throttles also slow the restarted broker's "
              "catch-up; KIP-542 throttles only the reassignment traffic.",
              "kip542-before", "kip542-after",
              hypothetical="KIP-542 was proposed and never shipped in Kafka: the 'after' side runs replicaflow's model "
                           "of its reassignment throttles"),
)


def _v(summary: dict, default: str) -> str:
    return str(summary.get("kafka_version") or default)


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def what_changed(key: str, b: dict, a: dict) -> str:
    """One sentence, from the headline numbers ``b`` (before) and ``a`` (after), of what the KIP changed."""
    vb, va = _v(b, "before"), _v(a, "after")
    if key == "kip16":
        kept = "kept it intact" if a["isr_shrinks"] == 0 else f"shrank it only {_times(a['isr_shrinks'])}"
        return (f"{vb} shrank the ISR {_times(b['isr_shrinks'])} during the burst (peak URP {b['peak_urp']}); "
                f"{va} {kept} (peak URP {a['peak_urp']}).")
    if key == "kip164":
        seen_b = available("UnderMinIsrPartitionCount", KafkaVersion.parse(vb)) if b.get("kafka_version") else False
        hidden = "reported" if seen_b else "had no metric for"
        peaks = (f"{b['peak_urp']}" if b["peak_urp"] == a["peak_urp"] else f"{b['peak_urp']} and {a['peak_urp']}")
        return (f"Both runs peaked at {peaks} under-replicated partitions, but {vb} "
                f"{hidden} the {format_minutes(b['under_min_isr_minutes'])} (summed over partitions) under min ISR in which its leaders "
                f"rejected {b.get('produce_requests_rejected') or 0:,} acks=all produce requests (visible only as "
                f"FailedProduceRequestsPerSec); {va} reports them as UnderMinIsrPartitionCount "
                f"(peak {a['peak_under_min_isr']:,}, {a.get('produce_requests_rejected') or 0:,} requests rejected).")
    if key == "kip352":
        return (f"{vb} reported up to {b['peak_urp']} under-replicated partitions during the move "
                f"({b['peak_reassignment_induced_urp']} of them only because replicas were being added); "
                f"{va} reported {a['peak_urp']} and showed the move as ReassigningPartitions "
                f"(peak {a['peak_reassigning']}).")
    if key == "kip461":
        return (f"{vb}: one storage error stopped the whole fetcher thread, {format_minutes(b['urp_minutes'])} "
                f"under-replicated, summed over partitions (peak URP {b['peak_urp']}); {va} isolated the partition "
                f"(FailedPartitionsCount peak {a['peak_failed_partitions']}), {format_minutes(a['urp_minutes'])} "
                f"(peak URP {a['peak_urp']}).")
    if key == "kip542":
        return (f"With KIP-73 throttles partitions spent {format_minutes(b['urp_minutes'])} under-replicated, summed "
                f"over partitions (under min ISR {format_minutes(b['under_min_isr_minutes'])}) while the restarted "
                f"broker crawled back; with KIP-542 reassignment throttles {format_minutes(a['urp_minutes'])} "
                f"(under min ISR {format_minutes(a['under_min_isr_minutes'])}).")
    return (f"peak URP {b['peak_urp']} → {a['peak_urp']}, under min ISR summed over partitions "
            f"{format_minutes(b['under_min_isr_minutes'])} → {format_minutes(a['under_min_isr_minutes'])}.")

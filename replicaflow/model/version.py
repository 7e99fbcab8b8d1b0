"""Kafka versions and the behaviour switches that differ between them (docs/semantics.md, per section)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from replicaflow.errors import ReplicaflowError

# ASCII digits ('３.7' is no release); before 1.0 Kafka's releases had four parts (0.10.2.1, 0.11.0.3), the
# fourth a bug-fix release of the same behaviour, read and dropped
_VERSION_RE = re.compile(r"^\s*([0-9]{1,9})\.([0-9]{1,9})(?:\.([0-9]{1,9}))?(?:\.([0-9]{1,9}))?\s*$")
_OLDEST = (0, 8, 0)
_NEWEST_MAJOR = 4
# Apache Kafka's releases (its release history; the git tags of apache/kafka up to 3.8.0): each line, a minor
# from 1.0 and three parts before (0.10.2.1 is bug fix 1 of 0.10.2), with its last bug-fix release: 3.7.0 to
# 3.7.2, 0.10.2.0 to 0.10.2.2, 0.8.1 and 0.8.1.1. The one home of which releases exist: the bounds below are
# read from it.
RELEASES: dict[tuple[int, ...], int] = {
    (0, 8, 0): 0, (0, 8, 1): 1, (0, 8, 2): 2, (0, 9, 0): 1, (0, 10, 0): 1, (0, 10, 1): 1, (0, 10, 2): 2,
    (0, 11, 0): 3, (1, 0): 2, (1, 1): 1, (2, 0): 1, (2, 1): 1, (2, 2): 2, (2, 3): 1, (2, 4): 1, (2, 5): 1,
    (2, 6): 3, (2, 7): 2, (2, 8): 2, (3, 0): 2, (3, 1): 2, (3, 2): 3, (3, 3): 2, (3, 4): 1, (3, 5): 2,
    (3, 6): 2, (3, 7): 2, (3, 8): 1, (3, 9): 1, (4, 0): 1, (4, 1): 1,
}
# The last minor of each finished major: 2.9 or 3.10 never existed, so a file naming one is a typo (often YAML
# reading `3.10` as the number 3.1) — refused. The newest major is still open (4.2 may come).
_LAST_MINOR = {(m,): max(line[1] for line in RELEASES if line[0] == m)
               for m in {line[0] for line in RELEASES} if m != _NEWEST_MAJOR}
# Before 1.0 the third part played that role: 0.8.3, 0.9.1, 0.10.3 and 0.11.1 were never released either.
_LAST_PRE_1_0 = {line[1]: max(other[2] for other in RELEASES if other[:2] == line[:2])
                 for line in RELEASES if line[0] == 0}


def unreleased_patch(text: str) -> str | None:
    """Why ``text``, a release as a scenario names it, is a bug-fix release its line never had (``3.7.99``,
    ``0.10.2.7``), listing the line's releases; None when it is one, names no bug fix (``3.7``), or its line is
    not in :data:`RELEASES` (``KafkaVersion.parse`` judges those). Only for releases a person wrote: a broker's
    log prints its own build's number (``printed_release``), which this table need not know."""
    m = _VERSION_RE.match(str(text))
    if not m:
        return None
    parts = tuple(int(g) for g in m.groups() if g is not None)
    width = 3 if parts[0] == 0 else 2
    last = RELEASES.get(parts[:width])
    if len(parts) <= width or last is None or parts[width] <= last:
        return None
    line = ".".join(map(str, parts[:width]))
    names = [line if width == 3 and parts[:width] < (0, 8, 2) and p == 0 else f"{line}.{p}" for p in range(last + 1)]
    found = f"found '{str(text).strip()}', which was never released"
    if len(names) == 1:
        return f"Kafka {line}'s only release was {names[0]}, {found}"
    return f"Kafka {line}'s releases were {', '.join(names[:-1])} and {names[-1]}, {found}"


def written_release(text: str) -> KafkaVersion:
    """A release as a person writes it (a scenario's ``kafka.version``, ``plan --version``, ``analyze
    --kafka-version``): parsed, and refused where its line never had that bug fix (:func:`unreleased_patch`). The
    error is the reason alone, for the caller to prefix with the field or option it came from."""
    if (problem := unreleased_patch(text)) is not None:
        raise ReplicaflowError(problem)
    try:
        return KafkaVersion.parse(text)
    except ReplicaflowError as exc:
        raise ReplicaflowError(str(exc).split(": ", 1)[-1]) from None


# Confluent Platform's builds print their own number with `-ccs` or `-ce` (7.3.5-ccs is Apache Kafka 3.3): the Kafka
# release of each CP major's first minor, the minors counting on from it (CP 5.0-5.5: 2.0-2.5, 6.0-6.2: 2.6-2.8,
# 7.0-7.9: 3.0-3.9, 8.x: 4.x; Confluent's interoperability table)
_CONFLUENT_FIRST = {5: (2, 0), 6: (2, 6), 7: (3, 0), 8: (4, 0)}
_PRINTED_RE = re.compile(r"^([0-9][0-9.]*?)(?:-(ccs|ce)\b.*|-\S*)?$")


def printed_release(text: str) -> str | None:
    """The release a broker's `Kafka version: X` line names (AppInfoParser, at every start), as ``KafkaVersion``
    spells it, or None: no release of 0.8 to 4.x (a client of another product logging in the same folder)."""
    m = _PRINTED_RE.match(text.strip())
    if not m:
        return None
    number = m.group(1)
    if m.group(2):
        parts = number.split(".")
        first = _CONFLUENT_FIRST.get(int(parts[0])) if parts[0].isdigit() else None
        if first is None or len(parts) < 2 or not parts[1].isdigit():
            return None
        number = f"{first[0]}.{first[1] + int(parts[1])}"
    try:
        return str(KafkaVersion.parse(number))
    except ReplicaflowError:
        return None


@dataclass(frozen=True, order=True)
class KafkaVersion:
    """A Kafka release ("0.8.2" … "4.1") plus the ``kip542`` switch of a hypothetical broker.

    Each property answers one behaviour question with the release that introduced it; which
    release has which metric is answered by ``model.metrics.available``.
    """

    major: int
    minor: int
    patch: int = 0
    kip542: bool = False

    @classmethod
    def parse(cls, text: str | float, kip542: bool = False) -> KafkaVersion:
        m = _VERSION_RE.match(str(text))
        if not m:
            raise ReplicaflowError(f"kafka.version: expected a Kafka release like '3.7' or '0.8.2', found '{text}'")
        major, minor, patch = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        if m.group(4) is not None and major != 0:
            raise ReplicaflowError(f"kafka.version: expected a Kafka release like '3.7' or '0.8.2', found '{text}' "
                                   "(four parts only before 1.0, as in 0.10.2.1)")
        if (major, minor, patch) < _OLDEST or major > _NEWEST_MAJOR:
            raise ReplicaflowError(f"kafka.version: supported releases are 0.8 to 4.x, found '{text}'")
        last = _LAST_MINOR.get((major,))
        if last is not None and minor > last:
            raise ReplicaflowError(f"kafka.version: Kafka {major}.x ended with {major}.{last}, found '{text}'")
        last = _LAST_PRE_1_0.get(minor) if major == 0 else None
        if last is not None and patch > last:
            raise ReplicaflowError(f"kafka.version: Kafka 0.{minor}.x ended with 0.{minor}.{last}, found '{text}'")
        return cls(major, minor, patch, kip542)

    @property
    def release(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def at_least(self, text: str) -> bool:
        return self.release >= KafkaVersion.parse(text).release

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}" + (f".{self.patch}" if self.patch else "")
        return base + (" +KIP-542" if self.kip542 else "")

    # --- ISR (section 1) ---
    @property
    def lag_rule(self) -> str:
        """'messages' (replica.lag.max.messages, ≤ 0.8.2) or 'time' (KIP-16, 0.9+)."""
        return "time" if self.at_least("0.9") else "messages"

    @property
    def default_replica_lag_time_max_ms(self) -> int:
        """10 s up to 2.4, 30 s from 2.5 (KIP-537)."""
        return 30_000 if self.at_least("2.5") else 10_000

    @property
    def kafka_4485(self) -> bool:
        """0.10.2 (KAFKA-4485): the ISR check runs every lag/2 (every lag before), a fetch that reaches the
        leader LEO of the previous fetch counts as caught up, and caught-up non-ISR followers hold the HW
        (§1.1, §1.3, §1.5)."""
        return self.at_least("0.10.2")

    @property
    def isr_check_period_divisor(self) -> int:
        """The ISR-expiration task runs every ``lag / divisor`` ms (§1.3): 2 from 0.10.2, 1 before."""
        return 2 if self.kafka_4485 else 1

    @property
    def equal_leo_in_sync(self) -> bool:
        """From 2.1 (KAFKA-7152, not in 2.0.1) a follower whose LEO equals the leader's is never out of sync (§1.2)."""
        return self.at_least("2.1")

    @property
    def expansion_needs_epoch_start(self) -> bool:
        """From 2.0.1 (KAFKA-7128, a bug fix of 2.0.1 and 2.1.0) a joining follower must also reach the leader
        epoch's start offset (§1.4): ``Partition.maybeExpandIsr`` at 2.0.1 tests ``leaderEpochStartOffsetOpt``,
        2.0.0 does not."""
        return self.at_least("2.0.1")

    @property
    def fetch_leader_leo_is_max(self) -> bool:
        """lastFetchLeaderLogEndOffset = max(leo, previous) from 3.3; plain overwrite before (§1.1)."""
        return self.at_least("3.3")

    @property
    def epoch_bump_fetch_time_isr_only(self) -> bool:
        """A leader that only bumps its epoch restarts the last fetch time of its ISR followers alone from 3.3
        (``Replica.resetReplicaState``: now if in sync, else 0); 0.10.2 – 3.2 restart every follower's
        (``Replica.resetLastCaughtUpTime(leaderEpochStartOffset, curTimeMs, ...)`` for all of them, §1.1)."""
        return self.at_least("3.3")

    @property
    def alter_partition(self) -> bool:
        """ISR changes go through the controller (KIP-497 AlterIsr/AlterPartition) from 2.7."""
        return self.at_least("2.7")

    # --- predicates (section 2) ---
    @property
    def urp_semantics(self) -> str:
        """'legacy' (|ISR| < |replicas|, ≤ 2.4) or 'kip352' (adding replicas excluded, 2.5+)."""
        return "kip352" if self.at_least("2.5") else "legacy"

    @property
    def min_isr_capped(self) -> bool:
        """Effective min ISR = min(min.insync.replicas, |replicas|) from 3.7."""
        return self.at_least("3.7")

    @property
    def hw_frozen_under_min_isr(self) -> bool:
        """The HW does not advance while under min ISR from 3.7 (§1.5)."""
        return self.at_least("3.7")

    # --- fetchers (section 4) and throttles (section 5) ---
    @property
    def fetch_response_capped(self) -> bool:
        """0.10.1+ (KIP-74): ``replica.fetch.response.max.bytes`` bounds a whole fetch response; before, each
        partition returns up to ``replica.fetch.max.bytes`` whatever their number."""
        return self.at_least("0.10.1")

    @property
    def replication_throttles(self) -> bool:
        """0.10.1+ (KIP-73): the ``leader/follower.replication.throttled.rate/replicas`` configs exist."""
        return self.at_least("0.10.1")

    @property
    def quota_keeps_overlapping_window(self) -> bool:
        """3.8+: the sampled rate of a replication quota also keeps the window that began before its
        ``replication.quota.window.num`` windows while its last record is younger than them
        (``SampledStat.purgeObsoleteSamples``, apache/kafka#15889; §5.1)."""
        return self.at_least("3.8")

    @property
    def fetcher_failure_isolated(self) -> bool:
        """KIP-461 (2.3+): a failing partition is isolated; before, the whole fetcher thread dies."""
        return self.at_least("2.3")

    @property
    def leader_epoch_fencing(self) -> bool:
        """2.1+ (KIP-320): fetch requests carry the follower's leader epoch and a leader with a newer one answers
        FENCED_LEADER_EPOCH; the fetcher stops fetching the partition until a LeaderAndIsr with a new epoch (§4)."""
        return self.at_least("2.1")

    @property
    def storage_error_halts_broker(self) -> bool:
        """Before 1.0 any storage error halts the broker (``ReplicaFetcherThread.processPartitionData``,
        ``ReplicaManager.appendToLocalLog``); from 1.0 (KIP-112) it takes only its log directory offline (§4)."""
        return not self.at_least("1.0")

    @property
    def storage_error_retried(self) -> bool:
        """1.0 – 2.2 (JBOD, KIP-112): a storage error is retried and the thread lives (§4)."""
        return not self.storage_error_halts_broker and not self.fetcher_failure_isolated

    # --- the controller (section 6) ---
    @property
    def kraft_production_ready(self) -> bool:
        """KRaft mode is production-ready from 3.3 (KIP-833); replicaflow refuses it before."""
        return self.at_least("3.3")

    @property
    def kraft_only(self) -> bool:
        """4.0 removed ZooKeeper mode (KIP-833)."""
        return self.major >= 4

    @property
    def default_zookeeper_session_timeout_ms(self) -> int:
        """``zookeeper.session.timeout.ms``: 6 s up to 2.4, 18 s from 2.5 (KIP-537, KafkaConfig.ZkSessionTimeoutMs)."""
        return 18_000 if self.at_least("2.5") else 6_000

    @property
    def zk_registration_waits_for_own_node(self) -> bool:
        """0.8: a broker that finds its own ``/brokers/ids`` node of an older session backs off and tries again
        (``ZkUtils.createEphemeralPathExpectConflictHandleZKBug``); from 0.9 the registration fails (``ZKCheckedEphemeral``)."""
        return not self.at_least("0.9")

    @property
    def kraft_registration_backoff_max_is_half_session(self) -> bool:
        """4.0: ``BrokerLifecycleManager`` retries a refused registration at most every half
        ``broker.session.timeout.ms``, a whole one before (read at 3.9.0-rc3 and Confluent's 4.0)."""
        return self.major >= 4

    @property
    def elr_supported(self) -> bool:
        """KIP-966 eligible leader replicas exist from 4.0 (``eligible.leader.replicas.version`` feature)."""
        return self.major >= 4

    @property
    def default_eligible_leader_replicas(self) -> bool:
        """New clusters turn eligible leader replicas on from 4.1 (off by default in 4.0)."""
        return self.at_least("4.1")

    @property
    def kraft_keeps_epoch_on_isr_shrink(self) -> bool:
        """Metadata version 3.6 (KAFKA-15021): a KRaft ISR shrink no longer bumps the leader epoch."""
        return self.at_least("3.6")

    @property
    def default_unclean_leader_election(self) -> bool:
        """``unclean.leader.election.enable`` defaults to true before 0.11, false from it (KIP-106)."""
        return not self.at_least("0.11")

    @property
    def unclean_config_triggers_election(self) -> bool:
        """From 2.1 enabling ``unclean.leader.election.enable`` on a topic elects its offline partitions at once
        (KAFKA-6835, ``TopicUncleanLeaderElectionEnable``)."""
        return self.at_least("2.1")

    @property
    def kraft_reads_unclean_config(self) -> bool:
        """KRaft's controller reads ``unclean.leader.election.enable`` from 3.9 (KAFKA-12670); in 3.3 – 3.8
        ``ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic`` returns false whatever is set."""
        return self.at_least("3.9")

    @property
    def rebalance_during_reassignment(self) -> bool:
        """The ZooKeeper controller's automatic preferred-leader election runs while partitions are being
        reassigned from 3.4 (KAFKA-10149); up to 3.3 any reassignment in the cluster holds back every automatic
        election (``checkAndTriggerAutoLeaderRebalance``: ``partitionsBeingReassigned.isEmpty``). KRaft's never
        looks at reassignments."""
        return self.at_least("3.4")

    @property
    def unclean_default_triggers_election(self) -> bool:
        """From 2.0 enabling the cluster-wide default elects every offline partition at once (KAFKA-6526:
        ``DynamicLogConfig.reconfigure`` → ``KafkaController.enableDefaultUncleanLeaderElection``)."""
        return self.at_least("2.0")

    @property
    def min_isr_and_unclean_configs(self) -> bool:
        """``min.insync.replicas`` (NotEnoughReplicas, KAFKA-1555) and the topic config
        ``unclean.leader.election.enable`` (KAFKA-1028) came in 0.8.2; 0.8.0 – 0.8.1 refuse both names."""
        return self.at_least("0.8.2")

    @property
    def unclean_election_tool(self) -> bool:
        """``kafka-leader-election --election-type unclean`` from 2.4 (KIP-460: ElectLeaders v1 carries the election
        type, ``KafkaController.processReplicaLeaderElection``); before, the tool elects preferred leaders only."""
        return self.at_least("2.4")

    @property
    def reassignment_cancellable(self) -> bool:
        """A started reassignment can be cancelled from 2.4 (KIP-455's AlterPartitionReassignments with a null
        target); before, deleting the znode only stops the controller tracking it."""
        return self.at_least("2.4")

    @property
    def verify_waits_for_every_reassignment(self) -> bool:
        """``kafka-reassign-partitions --verify`` clears throttles once no reassignment at all is in progress
        from 2.6 (KIP-455 tool); up to 2.5 once the plan's own partitions have completed (§5.1)."""
        return self.at_least("2.6")

    @property
    def tools_connect_to_zookeeper(self) -> bool:
        """Up to 2.5 ``kafka-reassign-partitions`` requires ``--zookeeper`` (``ReassignPartitionsCommandOptions``:
        "REQUIRED: The connection string for the zookeeper connection"; ``--bootstrap-server`` only moves log
        directories); 2.6's tool (KIP-455) takes ``--bootstrap-server`` and 3.0 removed ``--zookeeper``. And
        ``kafka-configs --bootstrap-server --describe --entity-type brokers`` refuses a missing entity name up
        to 2.4 (``ConfigCommand``: "At least one of --entity-name or --entity-default must be specified")."""
        return not self.at_least("2.6")

    @property
    def execute_adds_to_ongoing_reassignments(self) -> bool:
        """From 2.6 ``--execute`` goes through AlterPartitionReassignments (KIP-455 tool), which adds moves to
        the ongoing ones and throttles the sources and destinations of its moves; up to 2.5 it writes the
        ``/admin/reassign_partitions`` znode: with one present it starts nothing (§5.1,
        ``ReassignPartitionsCommand.executeAssignment``)."""
        return self.at_least("2.6")

    @property
    def cancel_clears_throttles(self) -> bool:
        """2.6 added ``--cancel``, which clears the throttles like a finished ``--verify`` (§5.1)."""
        return self.at_least("2.6")

    # --- logs (section 7) ---
    @property
    def log_family(self) -> str:
        """The log ident family of this release's broker lines (docs/semantics.md §7): "0.10" up to 0.11
        (``Partition [t,p] on broker N: ``, partitions as ``[t,p]``), "1.0" from 1.0 (``[Partition t-p broker=N] ``,
        ``t-p``). Each later wording change (2.2's shrink details, 3.1's unbracketed version, 3.6's
        lastCaughtUpTimeMs, ...) is keyed on its own release in ``telemetry/logformat.py``, not on a family."""
        return "1.0" if self.at_least("1.0") else "0.10"

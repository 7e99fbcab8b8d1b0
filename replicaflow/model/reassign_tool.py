"""What ``kafka-reassign-partitions`` decides per release (docs/semantics.md §5.1): whether ``--execute`` starts
its moves and what its ``--throttle`` writes (the 2.6 tool's lists and brokers are ``model.quota``'s), and when
``--verify`` and ``--cancel`` clear the throttles."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from replicaflow.errors import show
from replicaflow.model import quota
from replicaflow.model.version import KafkaVersion

# the headers kafka-reassign-partitions prints above its JSON (ReassignPartitionsCommand.generateAssignment,
# executeAssignment): the current assignment, kept for a rollback, and --generate's proposal
CURRENT_HEADER = "Current partition replica assignment"
PROPOSED_HEADER = "Proposed partition reassignment configuration"


# ReassignPartitionsCommand.cannotExecuteBecauseOfExistingMessage (2.6+)
EXISTING_REASSIGNMENT = ("Cannot execute because there is an existing partition assignment.  Use --additional to "
                         "override this and create a new partition assignment in addition to the existing one.")


def execute_starts_moves(version: KafkaVersion, any_in_progress: bool, additional: bool = False) -> bool:
    """Whether ``--execute`` starts its moves: when no reassignment is in progress, and from 2.6 also with
    ``--additional``; up to 2.5 with the znode present 0.10.1 – 2.5 print "There is an existing assignment
    running." and only apply ``--throttle``'s rate (``maybeLimit``), and earlier releases abort ("Partition
    reassignment currently in progress")."""
    return not any_in_progress or (version.execute_adds_to_ongoing_reassignments and additional)


def execute_refused(version: KafkaVersion, any_in_progress: bool, additional: bool) -> bool:
    """Whether ``--execute`` exits before writing anything, its throttle included: from 2.6 while a reassignment is
    in progress and without ``--additional`` (``executeAssignment``: ``EXISTING_REASSIGNMENT``)."""
    return version.execute_adds_to_ongoing_reassignments and any_in_progress and not additional


def execute_throttle_lists(version: KafkaVersion, current, proposed, running=None) -> dict[str, tuple[str, str]]:
    """The throttled-replica lists ``--execute --throttle`` writes per topic (``quota.tool_throttle_lists``): up to
    2.5 the leader list names only the partitions that gain a replica (``assignThrottledReplicas``:
    ``preRebalanceReplicaForMovingPartitions``), from 2.6 every proposed partition's sources and, with
    ``--additional``, those of the reassignments in progress (``running``: ``calculateMoveMap`` from
    ``listPartitionReassignments``), whose topics' lists it writes again."""
    if not version.execute_adds_to_ongoing_reassignments:
        return quota.tool_throttle_lists(current, proposed, moving_only=True)
    return quota.tool_throttle_lists(current, proposed, running=running)


def execute_rate_brokers(version: KafkaVersion, current, proposed, topic_replicas: Iterable[int],
                         running=None) -> list[int]:
    """Brokers whose throttle rates ``--execute --throttle`` sets: from 2.6 the sources and destinations of its
    moves and of those in progress (``calculateReassigningBrokers``, ``quota.tool_throttled_brokers``); up to 2.5
    (``maybeLimit``) every replica of every partition of the plan's topics (``existingAssignment``,
    ``topic_replicas``) and every proposed replica."""
    if version.execute_adds_to_ongoing_reassignments:
        return quota.tool_throttled_brokers(current, proposed, running)
    return sorted({int(b) for b in topic_replicas} | {int(b) for target in proposed.values() for b in target})


def verify_clears_throttles(version: KafkaVersion, plan_done: bool, any_in_progress: bool) -> bool:
    """Whether ``--verify`` clears the throttles: up to 2.5 when every partition of the plan is done (its
    replicas equal the plan's, ``ReassignPartitionsCommand.removeThrottle``), from 2.6 when no
    reassignment at all is in progress (``verifyAssignment``: ``!partsOngoing``, which counts every
    ongoing reassignment of the cluster, the plan's or not)."""
    if version.verify_waits_for_every_reassignment:
        return not any_in_progress
    return plan_done


def throttle_cleared_brokers(version: KafkaVersion, live_brokers: Iterable[int],
                             plan: Mapping[object, Iterable[int]]) -> set[int]:
    """Brokers whose throttle rates the tool deletes: every registered broker up to 2.5
    (``zkClient.getAllBrokersInCluster``); from 2.6 those plus the plan's target replicas
    (``clearAllThrottles``: ``activeBrokers ++ targetParts.replicas``)."""
    brokers = {int(b) for b in live_brokers}
    if version.verify_waits_for_every_reassignment:
        brokers |= {int(b) for replicas in plan.values() for b in replicas}
    return brokers


def plan_version_problem(doc: Mapping) -> str | None:
    """What is wrong with a reassignment JSON's ``version`` (absent means 1, as the tool reads it); the tool
    decodes it as an int and supports 1 only, so ``true`` or ``1.0`` is not 1."""
    if "version" not in doc:
        return None
    version = doc["version"]
    if type(version) is not int or version != 1:
        return f"expected 1, found {show(version)}"
    return None


def log_dirs_problem(move: Mapping) -> str | None:
    """What ``kafka-reassign-partitions`` refuses in a partition's ``log_dirs`` (absent means ``any`` for
    every replica): not a list of strings, or not one directory per replica ("Size of replicas list … is
    different from size of log dirs list")."""
    if "log_dirs" not in move:
        return None
    dirs, replicas = move["log_dirs"], move.get("replicas")
    if not isinstance(dirs, list) or not all(isinstance(d, str) and d for d in dirs):
        return f"expected a list of directories or \"any\", one per replica, found {show(dirs)}"
    if isinstance(replicas, list) and len(dirs) != len(replicas):
        return f"expected one directory per replica ({len(replicas)}), found {len(dirs)}"
    return None


def pasted_output_problem(text: str) -> tuple[int, str] | None:
    """The line and sentence for a reassignment file that is the tool's own printed output rather than its JSON
    (an operator pastes all of ``--generate``'s output, both headers and both JSON lines)."""
    lines = [t.strip() for t in text.splitlines()]
    found = "expected the reassignment JSON, found the printed output of kafka-reassign-partitions"
    if PROPOSED_HEADER in lines:
        return (lines.index(PROPOSED_HEADER) + 1,
                f"{found} --generate; save only the JSON line under '{PROPOSED_HEADER}'")
    if CURRENT_HEADER in lines:
        return (lines.index(CURRENT_HEADER) + 1,
                f"{found} ('{CURRENT_HEADER}': the JSON to roll back with); give the JSON to apply")
    return None

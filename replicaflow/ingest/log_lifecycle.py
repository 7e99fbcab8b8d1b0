"""The broker lifecycle lines of the rule table (``log_messages.RULES``): start, controlled shutdown, stop, exit.

KafkaServer, KafkaRaftServer and BrokerServer write them with their own logIdent, BrokerLifecycleManager (KRaft)
with its own, and the ZooKeeper controller the lines of a shutdown it handles; the prefixes tell a broker's own
`started` from any other class's. Which release writes which line is in docs/logs.md.
"""

from __future__ import annotations

from replicaflow.ingest.log_rule import Rule
from replicaflow.model.election import ALREADY_REGISTERED

# KafkaServer (0.10-0.11 `[Kafka Server N], `, 1.0+ `[KafkaServer id=N] `), KafkaRaftServer and BrokerServer.
_SERVER_IDENT = r"^\[(?:Kafka Server \d+\],|(?:KafkaServer id|KafkaRaftServer nodeId|BrokerServer id)=\d+\]) "
# BrokerLifecycleManager (KRaft 2.8+; `isZkBroker=true` from 3.5 on a ZooKeeper broker in migration)
_LIFECYCLE_IDENT = r"^\[BrokerLifecycleManager id=\d+(?: isZkBroker=true)?\] "
_CONTROLLER_IDENT = r"^\[Controller (?:\d+\]:|id=\d+\]) "  # KafkaController's: before 1.0, from 1.0
_STARTUP_FAILED = r"^Fatal error during (?:KafkaServer|broker) startup\. Prepare to shutdown$"

LIFECYCLE_RULES: list[Rule] = [
    Rule("broker_started", r"^(?:Kafka Server )?started$", ident=_SERVER_IDENT),
    Rule("broker_started", r"^Kafka Server started$"),  # KafkaRaftServer 2.8-3.2 has no logIdent
    Rule("broker_shutting_down", r"^shutting down$", ident=_SERVER_IDENT),
    Rule("broker_shutting_down", r"^Starting controlled shutdown$", state="controlled", ident=_SERVER_IDENT),
    # KRaft, BrokerLifecycleManager (core/src/main/scala/kafka/server 2.8.0-3.9, server/src/main/java/org/apache/kafka/
    # server in 4.3): BeginControlledShutdownEvent, only from RUNNING (unfenced); 3.8+ OfflineDirBrokerFailureEvent, no
    # heartbeat told the controller of a failed dir (UUID) in time: BrokerServer.shutdown (a clean stop, no Exit.halt)
    Rule("broker_shutting_down", r"^Beginning controlled shutdown\.$", state="controlled", ident=_LIFECYCLE_IDENT),
    Rule("broker_shutting_down", r"^Shutting down because couldn't communicate offline log dir (\S+) with controllers$",
         {"log_dir": 1}, state="offline dir unreported", ident=_LIFECYCLE_IDENT),
    # KRaft, BrokerLifecycleManager's BrokerRegistrationResponseHandler (2.8.0-3.9, 4.x in Java): a registration the
    # controller refused, the broker tries again after a backoff (DUPLICATE_BROKER_REGISTRATION: the killed process's
    # session is still valid, ClusterControlManager.registerBroker); the Java handler of 4.x prints `$nodeId` verbatim
    # in two of its lines. No row in `brokers`: the broker is not up until the controller unfences it
    Rule("registration_refused", r"^Unable to register broker (?:\d+|\$nodeId)(?: because (?:the controller returned "
         r"error (\w+)|of an authentication exception|of an API version problem|the controller returned an invalid "
         r"response type))?\.?$", {"error": 1}, ident=_LIFECYCLE_IDENT),
    # ZooKeeper 0.8, ZkUtils.createEphemeralPathExpectConflictHandleZKBug: the broker's own registration of an old
    # session still stands (the same host and port), so it sleeps a session timeout and tries again (0.9+ refuses the
    # start: startup_failed below). The same method creates /controller: only /brokers/ids/N is a registration
    Rule("registration_refused", r"^I wrote this conflicted ephemeral node \[[^\]]*\] at /brokers/ids/(\d+) a while "
         r"back in a different session, hence I will backoff for this node to be deleted by Zookeeper and retry$",
         {"broker": 1}),
    Rule("controlled_shutdown", r"^Controlled shutdown (?:succeeded|request returned successfully.*)$",
         state="succeeded", ident=_SERVER_IDENT),
    # an attempt the controller refused (3.1+: its error, or partitions it still had to move; KafkaServer retries),
    # and the end of every attempt: the broker stops without handing its leaderships over (0.8+)
    Rule("controlled_shutdown", r"^Controlled shutdown request returned after \d+ms with (?:error (\w+)|\d+ partitions "
         r"remaining to move)$", {"error": 1}, state="refused", ident=_SERVER_IDENT),
    Rule("controlled_shutdown", r"^Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed$",
         state="failed", ident=_SERVER_IDENT),
    Rule("broker_shutdown", r"^shut down completed$", ident=_SERVER_IDENT),
    # the ZooKeeper controller takes a broker's controlled shutdown request (KafkaController.doControlledShutdown,
    # 0.8+; `[Controller N]: ` before 1.0, `[Controller id=N] ` from 1.0): it moves the broker's leaderships away
    Rule("controlled_shutdown", r"^Shutting down broker (\d+)$", {"target_broker": 1}, state="requested",
         ident=_CONTROLLER_IDENT),
    # KafkaController.initializeControllerContext (ZooKeeper, 0.8-3.x): every topic a new controller finds in ZooKeeper;
    # one it does not list no longer exists (deleted, or the cluster's data wiped while it was down)
    Rule("topics_listed", r"^Current list of topics in the cluster: (?:Hash)?Set\([^()]*\)$", ident=_CONTROLLER_IDENT),
    Rule("broker_exit", r"^Exiting Kafka.*$"),
    # the exception under KafkaServer.startup's `Fatal error during KafkaServer startup. Prepare to shutdown` (BrokerServer:
    # `broker startup`): that process never ran, so the `shut down completed` it logs next is not the broker's
    # (broker_sessions.lifecycle). LogManager.lockLogDirs (0.8+): the dirs are another running process's
    Rule("startup_failed", r"^(?:\S+\.)?KafkaException: Failed to acquire lock on file \.lock in (.+)\. A Kafka "
         r"instance in another process or thread is using this directory\.$", {"log_dir": 1},
         parent=_STARTUP_FAILED),
    # ZooKeeper 0.9+: /brokers/ids/N is still another session's, a broker with that id running or this one's last process
    # killed less than a session timeout ago (0.8: only another host's registration, below its own it waits on):
    # ZkUtils.registerBrokerInZk's RuntimeException (0.8-1.0), from 1.1
    # KafkaZkClient.checkedEphemeralCreate's NodeExistsException (CheckedEphemeral.getAfterNodeExists has logged the
    # path before it; the same error during a re-registration after a session expiry is the controller thread's)
    Rule("startup_failed", r"^(?:\S+\.)?RuntimeException: A broker is already registered on the path /brokers/ids/\d+\. "
         r"This probably indicates .*$", state=ALREADY_REGISTERED, parent=_STARTUP_FAILED),
    Rule("startup_failed", r"^(?:\S+\.)?KeeperException\$NodeExistsException: KeeperErrorCode = NodeExists$",
         state=ALREADY_REGISTERED, parent=_STARTUP_FAILED),
]

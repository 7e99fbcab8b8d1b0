"""A broker's start and stop as its own log tells them, per release (docs/logs.md), rendered from the simulator's
``broker_started``, ``broker_shutdown``, ``startup_failed`` and ``registration_refused`` events: KafkaServer's lines (ZooKeeper), KafkaRaftServer,
BrokerServer and BrokerLifecycleManager's (KRaft)."""

from __future__ import annotations

from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.log_lines import OLD_FAMILY, SERVER, Line, fatal_level, format_line, is_kraft

SERVER_LOGGER = "kafka.server.KafkaServer"


def _zk_ident(b: int, fam: str) -> str:
    """KafkaServer's logIdent: `[Kafka Server N], ` up to 0.11, `[KafkaServer id=N] ` from 1.0."""
    return f"[Kafka Server {b}], " if fam == OLD_FAMILY else f"[KafkaServer id={b}] "


def _lifecycle(e: dict, v: KafkaVersion, fam: str, kraft: tuple[str, str], message: str) -> list[Line]:
    """A broker lifecycle line: KRaft (3.3+: ``kraft`` = (logIdent name, logger)), 0.8–0.11, or 1.0+ ZooKeeper era."""
    b = e["broker"]
    if is_kraft(v, e):
        ident, logger = kraft
        text = f"[{ident}={b}] " + ("Kafka Server started" if message == "started" else message)
        line = format_line(e["ts_ms"], "INFO", text, logger)
    else:
        line = format_line(e["ts_ms"], "INFO", _zk_ident(b, fam) + message, SERVER_LOGGER)
    return [(SERVER, line)]


def broker_started(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    return _lifecycle(e, v, fam, ("KafkaRaftServer nodeId", "kafka.server.KafkaRaftServer"), "started")


def broker_shutdown(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """KafkaServer.shutdown / BrokerServer.shutdown. ``controlled`` (controlled.shutdown.enable, on by default): first
    `shutting down`, then ZooKeeper's KafkaServer.controlledShutdown, `Starting controlled shutdown` and its success
    (`Controlled shutdown succeeded` up to 3.0, `Controlled shutdown request returned successfully after Nms` from
    3.1: the simulator's controller answers at once, 0 ms), or KRaft's BrokerLifecycleManager.beginControlledShutdown
    (`Beginning controlled shutdown.`, a running broker's); last `shut down completed`."""
    def server(m: str) -> list[Line]:
        return _lifecycle(e, v, fam, ("BrokerServer id", "kafka.server.BrokerServer"), m)

    if not e.get("controlled"):
        return server("shut down completed")
    if is_kraft(v, e):
        lifecycle = format_line(e["ts_ms"], "INFO", f"[BrokerLifecycleManager id={e['broker']}] Beginning controlled "
                                "shutdown.", "kafka.server.BrokerLifecycleManager")
        return [*server("shutting down"), (SERVER, lifecycle), *server("shut down completed")]
    done = "Controlled shutdown request returned successfully after 0ms" if v.at_least("3.1") else \
        "Controlled shutdown succeeded"
    return [line for m in ("shutting down", "Starting controlled shutdown", done, "shut down completed")
            for line in server(m)]


def startup_failed(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """ZooKeeper 0.9+ refuses a broker whose ``/brokers/ids/N`` is still its killed process's session (a restart inside
    the session timeout; ``model.election.registration_ms``): KafkaServer.startup logs `starting`, then its fatal line
    with the exception, shuts its half-started parts down (`shutting down`, `shut down completed`) and the JVM exits.
    0.9-1.0: ZkUtils.registerBrokerInZk's RuntimeException; 1.1+: KafkaZkClient's CheckedEphemeral logs the conflict
    (the znode's owner, the new session), then checkedEphemeralCreate throws NodeExistsException. The session ids are
    ZooKeeper's form (server id in the top byte), made up from the broker id."""
    ts, b = e["ts_ms"], e["broker"]
    old, new = (1 << 56) + 2 * b, (1 << 56) + 2 * b + 1
    ident = _zk_ident(b, fam)

    def server(m: str, level: str = "INFO") -> Line:
        return SERVER, format_line(ts, level, ident + m, SERVER_LOGGER)

    lines = [server("starting")]
    path = f"/brokers/ids/{b}"
    if v.at_least("1.1"):
        lines.append((SERVER, format_line(ts, "ERROR", f"Error while creating ephemeral at {path}, node already exists "
                                          f"and owner '{old}' does not match current session '{new}'",
                                          "kafka.zk.KafkaZkClient$CheckedEphemeral")))
        error = "org.apache.zookeeper.KeeperException$NodeExistsException: KeeperErrorCode = NodeExists"
        frame = "\tat kafka.zk.KafkaZkClient.registerBroker(KafkaZkClient.scala:96)"
    else:
        error = (f"java.lang.RuntimeException: A broker is already registered on the path {path}. This probably "
                 "indicates that you either have configured a brokerid that is already in use, or else you have "
                 "shutdown this broker and restarted it faster than the zookeeper timeout so it appears to be "
                 "re-registering.")
        frame = "\tat kafka.utils.ZkUtils.registerBrokerInZk(ZkUtils.scala:295)"
    return [*lines, server("Fatal error during KafkaServer startup. Prepare to shutdown", fatal_level(v)), (SERVER, error),
            (SERVER, frame), server("shutting down"), server("shut down completed")]


def registration_refused(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """A registration try that finds the crashed process's session standing; the broker tries again. KRaft's
    BrokerLifecycleManager (2.8+) logs the controller's error (DUPLICATE_BROKER_REGISTRATION), its logger's package
    ``kafka.server`` up to 4.2, ``org.apache.kafka.server`` from 4.3 (the class rewritten in Java); ZooKeeper 0.8's
    ZkUtils.createEphemeralPathExpectConflictHandleZKBug finds its own node (the same host and port) and sleeps a
    session timeout (0.9+ refuses the start instead: ``startup_failed``)."""
    b = e["broker"]
    if not is_kraft(v, e):
        data = f'{{"jmx_port":-1,"timestamp":"{e["ts_ms"]}","host":"broker-{b}","version":1,"port":9092}}'
        return [(SERVER, format_line(e["ts_ms"], "INFO", f"I wrote this conflicted ephemeral node [{data}] at "
                                     f"/brokers/ids/{b} a while back in a different session, hence I will backoff for "
                                     "this node to be deleted by Zookeeper and retry", "kafka.utils.ZkUtils$"))]
    logger = "org.apache.kafka.server" if v.at_least("4.3") else "kafka.server"
    return [(SERVER, format_line(e["ts_ms"], "INFO", f"[BrokerLifecycleManager id={b}] Unable to register broker {b} "
                                 f"because the controller returned error {e['error']}",
                                 f"{logger}.BrokerLifecycleManager"))]

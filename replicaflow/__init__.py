"""replicaflow: Kafka replication health, simulated and analyzed with the semantics of Kafka's KIPs."""

__version__ = "0.1.0"

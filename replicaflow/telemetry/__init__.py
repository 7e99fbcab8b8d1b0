"""replicaflow.telemetry"""

"""replicaflow.ingest"""

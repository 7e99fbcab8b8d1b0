"""replicaflow.pipeline"""

"""replicaflow.plan"""

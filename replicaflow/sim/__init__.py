"""replicaflow.sim"""

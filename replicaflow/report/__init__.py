"""replicaflow.report"""

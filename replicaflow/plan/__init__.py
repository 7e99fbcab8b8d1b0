"""The reassignment planner: Kafka's tool outputs and a plan → candidates simulated as Spark tasks →
how long, who suffers, which throttle (docs/plan.md)."""
